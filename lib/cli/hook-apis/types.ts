/**
 * What `forgebridge connect` needs of one forge's hooks API: how a hook's place is named on the command line, the
 * requests' headers and bodies, the paths of its test delivery and its log, how its answers read, and which events
 * a hook must send. Each forge with a delivery-log API has one (./index.ts): code reads it, not the forge's name.
 */
import type { ForgeAttempt, ForgeHook, HookPlace, HookRequest, WantedHook } from '../forge-hooks.js';
import type { RoutedEvents } from '../hook-events.js';

/** `connect`'s options that name a hook's place (one forge's two). */
export interface PlaceOptions {
  repo?: string | undefined;
  org?: string | undefined;
  project?: string | undefined;
  group?: string | undefined;
}

/** One forge's hooks API. */
export interface HookApi {
  /** The kinds of place its hooks live in (`repo`, `org`). */
  readonly placeKinds: readonly HookPlace['kind'][];
  /** What a hook belongs to, for the help (`GitHub repository or organization`). */
  readonly placeWords: string;
  /** `connect <forge>`'s options naming the place: flags and description. */
  readonly placeOptions: readonly (readonly [flags: string, description: string])[];
  /** The place the options name: exactly one of the forge's; a `CliError` otherwise. */
  placeOf(options: PlaceOptions): HookPlace;
  /** Request headers the API asks for (its media type, its version). */
  readonly headers: Readonly<Record<string, string>>;
  /** A new hook's body (`POST` on the hooks collection). */
  createBody(wanted: WantedHook): Record<string, unknown>;
  /** The update that makes `hook` the wanted one (method and body; the secret only with `secret: true`). */
  update(hook: ForgeHook, wanted: WantedHook, options: { secret: boolean }): Omit<HookRequest, 'path'>;
  /** Under a hook's path: the request for its test delivery (`POST`). */
  readonly testPath: string;
  /** Under a hook's path: its latest deliveries as the forge logged them (`GET`). */
  readonly attemptsPath: string;
  /** A hook of the forge's answer, its `id` checked. */
  readHook(hook: Record<string, unknown> & { id: number }): ForgeHook;
  /** One entry of the forge's delivery log, its `id` checked. */
  readAttempt(entry: Record<string, unknown> & { id: number }): ForgeAttempt;
  /** The events a hook must send for what the rules route, in the forge's terms (event names, trigger flags). */
  events(routed: RoutedEvents): string[];
  /** The catalogue event our delivery log records the test delivery under (GitHub `ping`, GitLab `push`). */
  readonly testEvent: string;
  /**
   * The event the forge's own log names its test delivery with, where that tells it apart from the hook's other
   * deliveries (GitHub's `ping`); `undefined`: the hook's first new attempt is the test's.
   */
  readonly testAttemptEvent: string | undefined;
}
