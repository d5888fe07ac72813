import { EventEmitter } from 'node:events';
import { ProxyChannelError, ProxyChannelErrorCodes } from './errors.js';
import { type ProxyMessageKeys, readProxyMessage } from './proxy-message.js';
import type { Logger, SignedEvent } from './types.js';

/** What the channel relays to: anything with the `Webhooks#verifyAndReceive` method. */
export interface ProxyChannelTarget {
  verifyAndReceive(event: SignedEvent): Promise<void>;
}

/** The part of an EventSource the channel uses; the `eventsource` package's class and the WHATWG one fit. */
export interface ProxyEventSource {
  readonly readyState: number;
  addEventListener(type: 'open' | 'message' | 'error', listener: (event: Event) => void): void;
  close(): void;
}

/** An EventSource constructor, such as the `eventsource` package's (the default) or the WHATWG global. */
export type ProxyEventSourceConstructor = new (url: string) => ProxyEventSource;

/** Options of {@link createProxyChannel} / `new ProxyChannel()`. */
export interface ProxyChannelOptions {
  /** The channel URL (`https://smee.io/<channel>`). Required. Treat it as a secret: anyone can read it. */
  url: string | URL;
  /** Where deliveries go: a `Webhooks` instance (its `verifyAndReceive`). Required. */
  webhooks: ProxyChannelTarget;
  /** Called with every {@link ProxyChannelError}, as the `error` event is. Default: none. */
  onError?: (error: ProxyChannelError) => void;
  /** The EventSource class. Default: the `eventsource` package's `EventSource`, loaded on first use. */
  EventSource?: ProxyEventSourceConstructor;
  /**
   * Message keys of the id, event name and signatures. Defaults: `x-request-id` (then `x-forge-delivery`),
   * `x-forge-event`, `x-hub-signature-256`, `x-hub-signature`. For a real forge's deliveries use its header
   * names in lowercase, e.g. `{ id: 'x-github-delivery', event: 'x-github-event' }`.
   */
  keys?: ProxyMessageKeys;
  /** Accept a sha1 signature when it is the only one. Default `true`. */
  allowSha1?: boolean;
  /** Refuse a message without a delivery id. Default `true`. */
  requireDeliveryId?: boolean;
  /** Where errors are logged when there is neither `onError` nor an `error` listener. Default `console`. */
  log?: Pick<Logger, 'error'>;
}

/**
 * Events of a {@link ProxyChannel}: `open` (stream connected, also after a reconnect), `delivery` (a message
 * went through `verifyAndReceive` without error), `error` (a {@link ProxyChannelError}).
 */
export interface ProxyChannelEvents {
  open: [];
  delivery: [delivery: { id: string; name: string }];
  error: [error: ProxyChannelError];
}

const OPTION_KEYS = new Set([
  'url',
  'webhooks',
  'onError',
  'EventSource',
  'keys',
  'allowSha1',
  'requireDeliveryId',
  'log',
]);

interface Settle {
  resolve: () => void;
  reject: (error: Error) => void;
}

/** `EventSource.CLOSED`. */
const CLOSED = 2;

async function loadEventSource(): Promise<ProxyEventSourceConstructor> {
  const module = await import('eventsource');
  return module.EventSource;
}

/**
 * A connection to a webhook proxy channel (smee.io or a self-hosted one), for local development. It relays each delivery message to `webhooks.verifyAndReceive`
 * (several may be in flight at once), ignores the service's `ready` and `ping` events, reports every bad
 * message, rejected delivery and connection problem as an `error` event (and to `onError`) without ever
 * stopping, and reconnects as the EventSource does. `close()` stops it.
 *
 * A message whose `body` is a string is verified over exactly those bytes. One whose `body` is a parsed
 * object (what smee.io sends) is re-serialized the way the forge serializes; deliveries whose JSON text
 * differs from that (escapes, key order, number formatting) then fail with `delivery_rejected`.
 *
 * @example
 * ```ts
 * const webhooks = new Webhooks({ secret: process.env.WEBHOOK_SECRET! });
 * webhooks.on('issues.opened', ({ payload }) => console.log(payload.issue.title));
 * const channel = new ProxyChannel({ url: 'https://smee.io/abc', webhooks });
 * await channel.ready;
 * // ... later
 * await channel.close();
 * ```
 */
export class ProxyChannel extends EventEmitter<ProxyChannelEvents> {
  /** Resolves when the stream is first open; rejects when it fails for good or is closed before. */
  readonly ready: Promise<void>;

  readonly #url: string;
  readonly #options: ProxyChannelOptions;
  readonly #inFlight = new Set<Promise<void>>();
  #source: ProxyEventSource | undefined;
  #closed = false;
  #opened = false;
  #settleReady: Settle;

  constructor(options: ProxyChannelOptions) {
    super();
    if (options === null || typeof options !== 'object') throw new TypeError('"options" must be an object');
    for (const key of Object.keys(options)) {
      if (!OPTION_KEYS.has(key)) throw new TypeError(`unknown option "${key}"`);
    }
    const url = options.url instanceof URL ? options.url.href : options.url;
    if (typeof url !== 'string' || !URL.canParse(url)) throw new TypeError('"url" must be an absolute URL');
    const protocol = new URL(url).protocol;
    if (protocol !== 'http:' && protocol !== 'https:')
      throw new TypeError('"url" must be an http or https URL');
    if (typeof options.webhooks?.verifyAndReceive !== 'function') {
      throw new TypeError('"webhooks" must have a "verifyAndReceive" method');
    }
    if (options.onError !== undefined && typeof options.onError !== 'function') {
      throw new TypeError('"onError" must be a function');
    }
    if (options.EventSource !== undefined && typeof options.EventSource !== 'function') {
      throw new TypeError('"EventSource" must be a constructor');
    }
    this.#url = url;
    this.#options = options;

    let settle!: Settle;
    this.ready = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    this.#settleReady = settle;
    // Nobody has to await `ready`: a failure is reported through `error` as well.
    this.ready.catch(() => {});

    if (options.EventSource) {
      this.#connect(options.EventSource);
    } else {
      loadEventSource().then(
        (Source) => this.#connect(Source),
        (cause: unknown) => this.#failReady(new Error('cannot load the "eventsource" package', { cause })),
      );
    }
  }

  /** Deliveries being relayed right now. */
  get pending(): number {
    return this.#inFlight.size;
  }

  /** `true` once `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Stops reading the channel: closes the EventSource, relays no further message, and resolves once the
   * deliveries already handed to `verifyAndReceive` have settled. Safe to call more than once.
   */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#source?.close();
      this.#failReady(new Error('the proxy channel was closed before it opened'));
    }
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  #connect(Source: ProxyEventSourceConstructor): void {
    if (this.#closed) return;
    const source = new Source(this.#url);
    this.#source = source;
    source.addEventListener('open', () => {
      if (this.#closed) return;
      this.#opened = true;
      this.#settleReady.resolve();
      this.emit('open');
    });
    // Only unnamed events (and `event: message`) arrive here; smee.io's `ready` and `ping` events are
    // named, so they never reach this listener and are ignored.
    source.addEventListener('message', (event) => {
      if (!this.#closed) this.#relay((event as MessageEvent).data);
    });
    source.addEventListener('error', (event) => {
      if (this.#closed) return;
      const detail = event as Event & { code?: number; message?: string };
      const status = typeof detail.code === 'number' ? ` (status ${detail.code})` : '';
      if (source.readyState === CLOSED) {
        const error = new ProxyChannelError(`proxy channel connection failed for good${status}`, {
          code: ProxyChannelErrorCodes.connectionClosed,
          status: 502,
        });
        this.#failReady(error);
        this.#report(error);
      } else {
        this.#report(
          new ProxyChannelError(`proxy channel connection lost${status}, reconnecting`, {
            code: ProxyChannelErrorCodes.connectionError,
            status: 502,
          }),
        );
      }
    });
  }

  #relay(data: unknown): void {
    const result = readProxyMessage(data, {
      ...(this.#options.keys === undefined ? {} : { keys: this.#options.keys }),
      ...(this.#options.allowSha1 === undefined ? {} : { allowSha1: this.#options.allowSha1 }),
      ...(this.#options.requireDeliveryId === undefined
        ? {}
        : { requireDeliveryId: this.#options.requireDeliveryId }),
    });
    if (!result.ok) {
      this.#report(result.error);
      return;
    }
    const { event, bodyForm } = result;
    let promise: Promise<void>;
    try {
      promise = this.#options.webhooks.verifyAndReceive(event);
    } catch (cause) {
      promise = Promise.reject(cause);
    }
    const tracked = promise.then(
      () => {
        try {
          this.emit('delivery', { id: event.id, name: event.name });
        } catch (thrown) {
          (this.#options.log ?? console).error('proxy channel "delivery" listener threw', thrown);
        }
      },
      (cause: unknown) => {
        this.#report(rejection(cause, event, bodyForm));
      },
    );
    this.#inFlight.add(tracked);
    tracked.finally(() => this.#inFlight.delete(tracked));
  }

  #failReady(error: Error): void {
    if (!this.#opened) this.#settleReady.reject(error);
  }

  #report(error: ProxyChannelError): void {
    let handled = false;
    if (this.#options.onError) {
      handled = true;
      try {
        this.#options.onError(error);
      } catch (thrown) {
        (this.#options.log ?? console).error('proxy channel "onError" handler threw', thrown);
      }
    }
    if (this.listenerCount('error') > 0) {
      handled = true;
      try {
        this.emit('error', error);
      } catch (thrown) {
        (this.#options.log ?? console).error('proxy channel "error" listener threw', thrown);
      }
    }
    if (!handled) (this.#options.log ?? console).error(`proxy channel: ${error.code}: ${error.message}`);
  }
}

function rejection(cause: unknown, event: SignedEvent & { id: string }, bodyForm: 'text' | 'object') {
  const code = (cause as { code?: unknown } | null)?.code;
  const reason = typeof code === 'string' ? code : cause instanceof Error ? cause.name : 'error';
  const hint =
    bodyForm === 'object' && (code === 'invalid_signature' || code === 'missing_signature')
      ? '; the proxy relayed a parsed body, whose re-serialization can differ from the signed bytes'
      : '';
  const status = (cause as { status?: unknown } | null)?.status;
  return new ProxyChannelError(
    `delivery "${event.id}" of event "${event.name}" was rejected: ${reason}${hint}`,
    {
      code: ProxyChannelErrorCodes.deliveryRejected,
      status: typeof status === 'number' ? status : 500,
      event: { id: event.id, name: event.name, payload: event.payload },
      cause,
    },
  );
}

/**
 * Opens a webhook proxy channel and relays its deliveries to `webhooks.verifyAndReceive`; the same as
 * `new ProxyChannel(options)`.
 *
 * @returns The open channel; `await channel.ready` to know it is connected, `channel.close()` to stop.
 */
export function createProxyChannel(options: ProxyChannelOptions): ProxyChannel {
  return new ProxyChannel(options);
}
