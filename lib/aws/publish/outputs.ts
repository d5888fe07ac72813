import { OutputsPublishError } from '../errors.js';
import type { Delivery, PayloadRef } from '../types.js';
import type { PublisherLike } from './publisher.js';

/** Where an accepted delivery goes: the bus (every rule), and the ordered stream when one is configured. */
export type { OutputName } from '../errors.js';
export { OutputsPublishError };

/** The ordered stream's writer (`StreamPublisher`): it takes the bus's claim check of a large delivery. */
export interface StreamWriterLike {
  publish(delivery: Delivery, options?: { payloadRef?: PayloadRef | undefined }): Promise<unknown>;
}

import type { OutputName } from '../errors.js';

/** The outputs in the order they are written: the bus first, then the stream. */
export const OUTPUT_ORDER: readonly OutputName[] = ['bus', 'stream'];

/** Options of {@link OutputsPublisher}. */
export interface OutputsPublisherOptions {
  /** Puts the delivery on the bus (an `EventPublisher`). */
  bus: PublisherLike;
  /** Writes it to the ordered stream (a `StreamPublisher`); none when no ordered subscriber is configured. */
  stream?: StreamWriterLike | undefined;
}

/** What {@link OutputsPublisher.publish} did: the bus publisher's result (its event id, claim check), and the stream's. */
export type OutputsResult = Record<string, unknown> & { outputs: OutputName[]; stream?: unknown };

/** The outputs a queue record or a caller names, checked and in write order; every configured one when none is named. */
function outputsToWrite(
  configured: readonly OutputName[],
  asked: readonly string[] | undefined,
): OutputName[] {
  if (asked === undefined) return [...configured];
  const unknown = asked.filter((name) => !OUTPUT_ORDER.includes(name as OutputName));
  if (unknown.length > 0) throw new TypeError(`unknown output(s) ${unknown.map((n) => `"${n}"`).join(', ')}`);
  // An output no longer configured (the stream removed since the record was queued) has nothing left to write to.
  return configured.filter((name) => asked.includes(name));
}

/**
 * The ingest's, the retrier's and the reconciler's way out: the bus, then the ordered stream when there is one. A
 * delivery is written to the stream only once the bus took it, so an ordered subscriber never sees a delivery the
 * bus's rules never got; a failure says which outputs remain ({@link OutputsPublishError}), and the queue record
 * then holds those, so the retrier never publishes a delivery to the bus twice because its stream write failed.
 */
export class OutputsPublisher implements PublisherLike {
  readonly #bus: PublisherLike;
  readonly #stream: StreamWriterLike | undefined;
  /** The configured outputs, in write order. */
  readonly outputs: readonly OutputName[];

  constructor(options: OutputsPublisherOptions) {
    if (typeof options?.bus?.publish !== 'function')
      throw new TypeError('"bus" must have a "publish" function');
    if (options.stream !== undefined && typeof options.stream.publish !== 'function')
      throw new TypeError('"stream" must have a "publish" function');
    this.#bus = options.bus;
    this.#stream = options.stream;
    this.outputs = options.stream === undefined ? ['bus'] : ['bus', 'stream'];
  }

  /**
   * Writes the delivery to `options.outputs` (default: every configured one), in order. Rejects with an
   * {@link OutputsPublishError} at the first that fails; the ones written before it stay written.
   */
  async publish(delivery: Delivery, options: { outputs?: readonly string[] | undefined } = {}) {
    const outputs = outputsToWrite(this.outputs, options.outputs);
    let result: OutputsResult = { outputs: [] };
    for (const [index, output] of outputs.entries()) {
      let written: unknown;
      // The stream reuses the bus's claim check of a large delivery rather than storing the object again.
      const payloadRef = output === 'stream' ? (result.payloadRef as PayloadRef | undefined) : undefined;
      try {
        written = await (output === 'bus'
          ? this.#bus.publish(delivery)
          : (this.#stream as StreamWriterLike).publish(
              delivery,
              payloadRef === undefined ? {} : { payloadRef },
            ));
      } catch (error) {
        throw new OutputsPublishError(output, outputs.slice(index), error);
      }
      if (output === 'bus') {
        result = {
          ...(typeof written === 'object' && written !== null ? (written as Record<string, unknown>) : {}),
          outputs: result.outputs,
        };
      } else {
        result.stream = written;
      }
      result.outputs.push(output);
    }
    return result;
  }
}
