import { WebhookReceiveError } from './errors.js';
import { isKnownEventName, neutralEventName } from './event-names.js';
import type { EmitterWebhookEventName } from './event-types.js';
import type {
  ErrorHandlerFunction,
  EventHandlerOptions,
  HandlerEventName,
  HandlerFunction,
  Logger,
  ReceivedEvent,
  Transform,
  WebhookEventError,
  WildcardHandlerFunction,
} from './types.js';

type AnyHandler = (event: never) => unknown;
type Settled = PromiseSettledResult<unknown>;

const RESOLVED: Promise<void> = Promise.resolve();
const EVENT_HANDLER_OPTION_KEYS = new Set(['transform', 'log', 'eventNames']);

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * Registers handlers by event name and dispatches events to them.
 *
 * - `receive({ id, name, payload })` starts, together, the `name.action` handlers (only when the event's
 *   `action`, or else `payload.action`, is a string), then the `name` handlers, then the `*` handlers, and waits for all.
 * - `transform` (may be async) runs once per handler, before it.
 * - When handlers fail, one `WebhookReceiveError` (an `AggregateError` with `.errors` and `.event`) goes to
 *   every `error` handler (async ones are not awaited; one that throws is only logged), then `receive`
 *   rejects with it.
 */
export class EventHandler<TTransformed = unknown> {
  /** Handlers by name; arrays are replaced, never mutated, so a running `receive` keeps its snapshot. */
  #handlers = new Map<string, readonly AnyHandler[]>();
  #errorHandlers: readonly ErrorHandlerFunction[] = [];
  readonly #transform: Transform<TTransformed> | undefined;
  readonly #log: Logger;
  readonly #checkNames: boolean;

  constructor(options: EventHandlerOptions<TTransformed> = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError('"options" must be an object');
    for (const key of Object.keys(options)) {
      if (!EVENT_HANDLER_OPTION_KEYS.has(key)) throw new TypeError(`unknown option "${key}"`);
    }
    if (options.transform !== undefined && typeof options.transform !== 'function') {
      throw new TypeError('"transform" must be a function');
    }
    const log = options.log ?? console;
    if (typeof log?.warn !== 'function' || typeof log.error !== 'function') {
      throw new TypeError('"log" must have "warn" and "error" functions');
    }
    if (
      options.eventNames !== undefined &&
      options.eventNames !== 'catalogue' &&
      options.eventNames !== 'sender'
    ) {
      throw new TypeError('"eventNames" must be "catalogue" or "sender"');
    }
    this.#transform = options.transform;
    this.#log = log;
    this.#checkNames = options.eventNames !== 'sender';
  }

  /**
   * Registers `handler` for one name or several. Names are every known event and `event.action`, `*` (every
   * event) and `error`. An unknown name only logs a warning (none for a sender's own names: `eventNames`).
   *
   * @throws TypeError when a name is not a non-empty string or `handler` is not a function.
   */
  on<Name extends EmitterWebhookEventName>(
    name: Name | readonly Name[],
    handler: HandlerFunction<Name, TTransformed>,
  ): void;
  on(
    name: HandlerEventName | readonly HandlerEventName[],
    handler: WildcardHandlerFunction<TTransformed>,
  ): void;
  on(name: 'error' | readonly 'error'[], handler: ErrorHandlerFunction): void;
  on(name: string | readonly string[], handler: AnyHandler): void {
    checkHandler(handler);
    for (const one of names(name)) {
      if (one === 'error') {
        this.#errorHandlers = [...this.#errorHandlers, handler as ErrorHandlerFunction];
        continue;
      }
      const key = neutralEventName(one);
      if (this.#checkNames && key !== '*' && !isKnownEventName(key)) {
        this.#log.warn(`"${key}" is not a known event name; check for typos`);
      }
      const current = this.#handlers.get(key);
      this.#handlers.set(key, current === undefined ? [handler] : [...current, handler]);
    }
  }

  /** Registers `handler` for every event: the same as `on('*', handler)` (@octokit/webhooks' name). */
  onAny(handler: WildcardHandlerFunction<TTransformed>): void {
    this.on('*', handler);
  }

  /** Registers `handler` for failures: the same as `on('error', handler)` (@octokit/webhooks' name). */
  onError(handler: ErrorHandlerFunction): void {
    this.on('error', handler);
  }

  /**
   * Removes `handler` from one name or several: only its most recent registration per name.
   *
   * @throws TypeError when a name is not a non-empty string or `handler` is not a function.
   */
  removeListener<Name extends EmitterWebhookEventName>(
    name: Name | readonly Name[],
    handler: HandlerFunction<Name, TTransformed>,
  ): void;
  removeListener(
    name: HandlerEventName | readonly HandlerEventName[],
    handler: WildcardHandlerFunction<TTransformed>,
  ): void;
  removeListener(name: 'error' | readonly 'error'[], handler: ErrorHandlerFunction): void;
  removeListener(name: string | readonly string[], handler: AnyHandler): void {
    checkHandler(handler);
    for (const one of names(name)) {
      if (one === 'error') {
        this.#errorHandlers = without(this.#errorHandlers, handler as ErrorHandlerFunction);
        continue;
      }
      const key = neutralEventName(one);
      const current = this.#handlers.get(key);
      if (current === undefined) continue;
      const next = without(current, handler);
      if (next.length === 0) this.#handlers.delete(key);
      else this.#handlers.set(key, next);
    }
  }

  /**
   * Dispatches one event to its handlers, all started together, and settles when all have finished:
   * resolves with no value, or rejects with a `WebhookReceiveError` holding every handler error.
   *
   * @param event - `{ id, name, payload }`; the forge's `github_app_authorization` is reported as
   *   `forge_app_authorization`.
   * @returns A promise that rejects with a `TypeError` when `name` or `payload` is missing.
   */
  receive(event: ReceivedEvent): Promise<void> {
    if (event === null || typeof event !== 'object') {
      return Promise.reject(new TypeError('"event" must be an object'));
    }
    const { name, payload } = event;
    if (typeof name !== 'string' || name.length === 0) {
      return Promise.reject(new TypeError('"event.name" must be a non-empty string'));
    }
    if (payload === null || typeof payload !== 'object') {
      return Promise.reject(new TypeError('"event.payload" must be an object'));
    }
    const key = neutralEventName(name);
    const emitted: ReceivedEvent =
      key === name && typeof event.id === 'string' ? event : { ...event, id: event.id ?? '', name: key };

    // A preset's mapped action (GitLab's `open` -> `opened`) wins over the payload's own field.
    const action = Object.hasOwn(event, 'action') ? event.action : (payload as { action?: unknown }).action;
    const handlers = this.#handlers;
    const byAction = typeof action === 'string' ? handlers.get(`${key}.${action}`) : undefined;
    const byName = handlers.get(key);
    const wildcard = handlers.get('*');

    let pending: PromiseLike<unknown>[] | undefined;
    let errors: unknown[] | undefined;
    for (let round = 0; round < 3; round++) {
      const list = round === 0 ? byAction : round === 1 ? byName : wildcard;
      if (list === undefined) continue;
      for (const handler of list) {
        try {
          const result = this.#call(handler, emitted);
          if (isThenable(result)) {
            if (pending === undefined) pending = [result];
            else pending.push(result);
          }
        } catch (error) {
          if (errors === undefined) errors = [error];
          else errors.push(error);
        }
      }
    }
    if (pending !== undefined) return this.#settle(pending, errors ?? [], emitted);
    if (errors !== undefined) return Promise.reject(this.#fail(errors, emitted));
    return RESOLVED;
  }

  /**
   * Passes `error` to every `error` handler without waiting for async ones; a handler that throws or
   * rejects is logged. Internal (used by `Webhooks.verifyAndReceive`).
   */
  emitError(error: WebhookEventError): void {
    for (const handler of this.#errorHandlers) {
      try {
        const result = handler(error);
        if (isThenable(result)) result.then(undefined, (reason: unknown) => this.#logErrorHandler(reason));
      } catch (reason) {
        this.#logErrorHandler(reason);
      }
    }
  }

  #call(handler: AnyHandler, event: ReceivedEvent): unknown {
    const call = handler as (event: unknown) => unknown;
    const transform = this.#transform;
    if (transform === undefined) return call(event);
    const transformed = (transform as (event: unknown) => unknown)(event);
    return isThenable(transformed) ? transformed.then(call) : call(transformed);
  }

  async #settle(pending: PromiseLike<unknown>[], errors: unknown[], event: ReceivedEvent): Promise<void> {
    const settled: Settled[] = await Promise.allSettled(pending);
    for (const outcome of settled) {
      if (outcome.status === 'rejected') errors.push(outcome.reason);
    }
    if (errors.length > 0) throw this.#fail(errors, event);
  }

  #fail(errors: unknown[], event: ReceivedEvent): WebhookReceiveError {
    const error = new WebhookReceiveError(errors, event);
    this.emitError(error);
    return error;
  }

  #logErrorHandler(reason: unknown): void {
    this.#log.error('an "error" handler failed', reason);
  }
}

/**
 * Creates a standalone event handler: `on` (and its aliases `onAny`, `onError`), `removeListener` and
 * `receive` (no secret, no HTTP). The returned functions are bound, so they can be destructured.
 *
 * @example
 * ```ts
 * const { on, receive } = createEventHandler();
 * on(['push', 'issues.opened'], (event) => console.log(event.name, event.id));
 * await receive({ id: 'd-1', name: 'push', payload: { ref: 'refs/heads/main' } });
 * ```
 */
export function createEventHandler<TTransformed = unknown>(
  options?: EventHandlerOptions<TTransformed>,
): Pick<EventHandler<TTransformed>, 'on' | 'onAny' | 'onError' | 'removeListener' | 'receive'> {
  const handler = new EventHandler<TTransformed>(options);
  return {
    on: handler.on.bind(handler) as EventHandler<TTransformed>['on'],
    onAny: handler.onAny.bind(handler),
    onError: handler.onError.bind(handler),
    removeListener: handler.removeListener.bind(handler) as EventHandler<TTransformed>['removeListener'],
    receive: handler.receive.bind(handler),
  };
}

function checkHandler(handler: unknown): void {
  if (typeof handler !== 'function') throw new TypeError('"handler" must be a function');
}

function names(name: unknown): readonly string[] {
  const list = Array.isArray(name) ? name : [name];
  for (const one of list) {
    if (typeof one !== 'string' || one.length === 0) {
      throw new TypeError('"name" must be a non-empty string or an array of them');
    }
  }
  return list as readonly string[];
}

function without<T>(list: readonly T[], item: T): readonly T[] {
  const index = list.lastIndexOf(item);
  return index === -1 ? list : [...list.slice(0, index), ...list.slice(index + 1)];
}
