/**
 * The hooks API of each forge whose preset has a delivery-log API (GitHub, GitLab): `forgebridge connect` reads
 * the forge's entry here, never its name.
 */
import { type DeliveryLogForge, DeliveryLogForges } from '../../webhooks/index.js';
import type { HookPlace } from '../forge-hooks.js';
import { gitHubHooks } from './github.js';
import { gitLabHooks } from './gitlab.js';
import type { HookApi } from './types.js';

export type { HookApi, PlaceOptions } from './types.js';

/** A forge `connect` manages hooks of. */
export type HookForge = DeliveryLogForge;

/** The forges `connect` manages hooks of, in the order of `Forges`. */
export const HookForges: readonly HookForge[] = DeliveryLogForges;

/** Each forge's hooks API. */
export const HOOK_APIS: Readonly<Record<HookForge, HookApi>> = {
  github: gitHubHooks,
  gitlab: gitLabHooks,
};

/** The forge a place belongs to: the one whose hooks API has its kind. */
export function forgeOf(place: HookPlace): HookForge {
  const forge = HookForges.find((candidate) => HOOK_APIS[candidate].placeKinds.includes(place.kind));
  if (forge === undefined) throw new TypeError(`no forge has hooks of kind "${place.kind}"`);
  return forge;
}

/** The hooks API of the forge a place belongs to. */
export function hookApiOf(place: HookPlace): HookApi {
  return HOOK_APIS[forgeOf(place)];
}
