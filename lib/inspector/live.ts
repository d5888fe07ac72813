// The live view: server-sent events to every connected page, fed by polling the delivery log. The log is
// DynamoDB (no change feed offline, none the CLI could read with a user's own credentials on a stage), so while
// a page is connected the recent window is read every `pollMs` (one Query per index shard and one BatchGetItem
// for the subscribers) and only new or changed records are pushed; no page means no reads.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DeliveryLog } from '../aws/index.js';
import { SECURITY_HEADERS } from './http.js';
import type { InspectorRule } from './rules.js';
import { recordView } from './views.js';

/** The live view reads this far back: the poll stays one day's shards, whatever the TTL. */
const LIVE_WINDOW_MS = 15 * 60 * 1000;

/** Server-sent events of new and changed records. */
export class LiveFeed {
  readonly #clients = new Set<ServerResponse>();
  /** What each live record looked like when last pushed, by record id. */
  readonly #seen = new Map<string, string>();
  #pollTimer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #polling = false;
  #stopped = false;

  constructor(
    private readonly log: DeliveryLog,
    private readonly rules: readonly InspectorRule[],
    private readonly pollMs: number,
  ) {}

  /** Takes a page's `GET /api/events`: the stream stays open until the page goes. */
  connect(request: IncomingMessage, response: ServerResponse): void {
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    response.write('retry: 1000\n\n');
    this.#clients.add(response);
    this.#start();
    request.on('close', () => {
      this.#clients.delete(response);
      if (this.#clients.size === 0) this.#stop();
    });
  }

  /** Ends every stream and stops polling. */
  close(): void {
    this.#stopped = true;
    this.#stop();
    for (const client of this.#clients) client.end();
    this.#clients.clear();
  }

  #broadcast(event: string, data: unknown): void {
    const frame = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const client of this.#clients) client.write(frame);
  }

  async #poll(): Promise<void> {
    this.#polling = true;
    try {
      const { records } = await this.log.list({
        since: Date.now() - LIVE_WINDOW_MS,
        limit: 200,
        subscribers: true,
      });
      for (const record of records.reverse()) {
        const view = recordView(record, this.rules);
        const key = JSON.stringify(view);
        if (this.#seen.get(record.recordId) === key) continue;
        this.#seen.set(record.recordId, key);
        this.#broadcast('record', view);
      }
    } catch {
      // The table busy, throttled or stopping: the next poll tries again.
    } finally {
      this.#polling = false;
      if (!this.#stopped && this.#clients.size > 0) {
        this.#pollTimer = setTimeout(() => void this.#poll(), this.pollMs);
      }
    }
  }

  #start(): void {
    if (this.#pollTimer === undefined && !this.#polling) {
      this.#pollTimer = setTimeout(() => void this.#poll(), 0);
    }
    this.#heartbeat ??= setInterval(() => {
      for (const client of this.#clients) client.write(': keep-alive\n\n');
    }, 15_000);
  }

  #stop(): void {
    clearTimeout(this.#pollTimer);
    this.#pollTimer = undefined;
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }
}
