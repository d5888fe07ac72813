// Ordered subscribers through the local stack (docs/ordering.md): the ingest writes every accepted delivery to the
// ordered stream (kinesalite) after the bus, the stack's poller hands each pull request's records to the example
// ordered subscriber one batch per shard slot at a time, and the subscriber logs `ordered delivery handled` with
// when it started and ended. The same handler on the bus (`onPullRequestOnBus`, an ordinary rule target) logs
// `delivery handled`: the difference between the two is what the stream buys.
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryLog } from '../../../../lib/aws/index.js';
import { partitionKeyOf, readOrderedSubscribers } from '../../../../lib/aws/internal.js';
import { slotOf } from '../../../../local-stack/ordered-stream.js';
import { forgeSample, signForgeDelivery } from '../../../../local-stack/sample-deliveries.js';
import { cleanCliEnv, runCli } from '../../../helpers/cli.js';
import type { TestStack } from '../../../helpers/stack.js';

/** One `… delivery handled` line of the example handler. */
interface Handled {
  delivery: string;
  resource: string;
  startedAt: number;
  endedAt: number;
}

/**
 * The load: senders at once, each sending one pull request's deliveries one after the other. With
 * FORGEBRIDGE_E2E_ORDERED_FULL=1 the measured run of docs/ordering.md: 2,000 deliveries about 100 pull requests, 50
 * senders (about two minutes on two cores). Else 100 about 20 pull requests, 10 senders: what `npm test` and CI run
 * within their time.
 */
const FULL = process.env.FORGEBRIDGE_E2E_ORDERED_FULL === '1';
const PULL_REQUESTS = FULL ? 100 : 20;
const PER_PULL_REQUEST = FULL ? 20 : 5;
const AT_ONCE = FULL ? 50 : 10;
const ACTIONS = ['opened', 'synchronize', 'labeled', 'edited', 'review_requested', 'unlabeled', 'reopened'];

export function orderedSuite(stack: () => TestStack): void {
  describe('ordered subscribers: each pull request one delivery at a time, in the order sent', () => {
    let t: TestStack;
    let client: DynamoDBClient;
    /** A repository of this run's own, so that no other suite's pull requests are counted. */
    const repository = `ordered-${randomUUID().slice(0, 8)}/bot`;
    const sample = forgeSample('github', 'pull_request.opened');

    beforeAll(() => {
      t = stack();
      client = new DynamoDBClient(t.stack.dynamodb.clientConfig);
    });
    afterAll(() => client?.destroy());

    const handled = (message: string, fn: string): Handled[] =>
      t.stack
        .functionLogs()
        .filter(
          (line) => line.message === message && line.function_name === `forgebridge-${t.stack.stage}-${fn}`,
        )
        .map(({ delivery, resource, startedAt, endedAt }) => ({
          delivery: delivery as string,
          resource: resource as string,
          startedAt: startedAt as number,
          endedAt: endedAt as number,
        }))
        .filter((line) => typeof line.resource === 'string' && line.resource.startsWith(`${repository}#`));
    const ordered = () => handled('ordered delivery handled', 'onPullRequestOrdered');
    const onBus = () => handled('delivery handled', 'onPullRequestOnBus');
    /** Deliveries the ingest answered `queued`: the bus or the stream did not take them within the budget. */
    const queued: string[] = [];

    /** A pull request delivery of the run's repository, signed for the `github` source. */
    const post = async (number: number, index: number, poison = false): Promise<string> => {
      const payload = structuredClone(sample.payload) as {
        action: string;
        number: number;
        pull_request: { number: number; updated_at: string };
        repository: { full_name: string; name: string };
      };
      payload.action = ACTIONS[index % ACTIONS.length] as string;
      payload.number = number;
      payload.pull_request.number = number;
      payload.repository.full_name = repository;
      if (poison) payload.pull_request.updated_at = 'not a date';
      const github = t.source('github');
      const delivery = signForgeDelivery(github.secret, 'github', sample.nativeName, payload);
      for (let attempt = 1; ; attempt++) {
        let response: Response;
        try {
          response = await fetch(github.url, {
            method: 'POST',
            headers: delivery.headers,
            body: delivery.body,
          });
        } catch (error) {
          // A connection reset before any answer (serverless-offline under 50 requests at once): the same delivery
          // again, as a forge's redelivery would be; the dedupe record keeps it once either way.
          if (attempt < 3) continue;
          throw error;
        }
        const body = await response.text();
        if (attempt > 1 && response.status === 200 && body.includes('"duplicate":true')) return delivery.id;
        if (response.status !== 202)
          throw new Error(`delivery ${index} of #${number}: ${response.status} ${body}`);
        // A queued delivery reaches the stream when the retrier writes it, after the ones sent since (docs/ordering.md).
        if (body.includes('"queued":true')) queued.push(delivery.id);
        return delivery.id;
      }
    };

    /** Per resource key: the order it was handled in, and the pairs of its deliveries that overlapped. */
    const analyse = (lines: Handled[]) => {
      const byResource = new Map<string, Handled[]>();
      for (const line of lines)
        byResource.set(line.resource, [...(byResource.get(line.resource) ?? []), line]);
      let overlapping = 0;
      for (const list of byResource.values()) {
        const sorted = [...list].sort((a, b) => a.startedAt - b.startedAt);
        for (let i = 1; i < sorted.length; i++) {
          if ((sorted[i] as Handled).startedAt < (sorted[i - 1] as Handled).endedAt) overlapping += 1;
        }
      }
      return { byResource, overlapping };
    };

    it(`${PULL_REQUESTS * PER_PULL_REQUEST} deliveries about ${PULL_REQUESTS} pull requests, ${AT_ONCE} at a time: each pull request in order, none at once, 0 lost, 0 doubled; on the bus not so`, async () => {
      const sent = new Map<string, string[]>();
      const started = Date.now();
      let next = 0;
      // AT_ONCE senders, all from the first moment, each taking the next pull request and sending its deliveries one
      // after the other. The stack holds each function to a few instances at once (local-stack/local-concurrency.ts):
      // without that, the burst's worker threads starved the ingest past its publish budget and its timeout.
      const sender = async () => {
        while (next < PULL_REQUESTS) {
          const number = 1000 + next++;
          const ids: string[] = [];
          sent.set(`${repository}#pr:${number}`, ids);
          for (let index = 0; index < PER_PULL_REQUEST; index++) ids.push(await post(number, index));
        }
      };
      await Promise.all(Array.from({ length: AT_ONCE }, sender));
      const sentMs = Date.now() - started;
      const total = PULL_REQUESTS * PER_PULL_REQUEST;
      await t.waitFor(() => ordered().length >= total && onBus().length >= total, { timeoutMs: 180_000 });
      const doneMs = Date.now() - started;

      const lines = ordered();
      const ids = lines.map((line) => line.delivery);
      expect(queued, 'deliveries the ingest queued (the stack was too slow for its publish budget)').toEqual(
        [],
      );
      const all = [...sent.values()].flat();
      // 0 lost, 0 doubled.
      expect(new Set(ids).size).toBe(total);
      expect(ids.length).toBe(total);
      expect([...new Set(ids)].sort()).toEqual([...all].sort());
      const stream = analyse(lines);
      // Every pull request's deliveries in the order they were sent, and never two of one at once.
      for (const [resource, list] of stream.byResource) {
        expect(
          list.map((line) => line.delivery),
          resource,
        ).toEqual(sent.get(resource));
      }
      expect(stream.overlapping).toBe(0);

      // The same deliveries on the bus: all there, but handled at once and out of order.
      const bus = analyse(onBus());
      expect(new Set(onBus().map((line) => line.delivery)).size).toBe(total);
      const outOfOrder = [...bus.byResource].filter(
        ([resource, list]) =>
          JSON.stringify([...list].sort((a, b) => a.startedAt - b.startedAt).map((line) => line.delivery)) !==
          JSON.stringify(sent.get(resource)),
      ).length;
      expect(bus.overlapping).toBeGreaterThan(0);
      const spans = lines.map((line) => line.endedAt - line.startedAt);
      console.log(
        `ordered: ${total} deliveries about ${PULL_REQUESTS} pull requests sent in ${sentMs} ms (${AT_ONCE} at a time), all handled by ${doneMs} ms; ` +
          `stream: ${stream.byResource.size} pull requests in order, ${stream.overlapping} overlapping pairs, ${total - new Set(ids).size} lost; ` +
          `bus: ${bus.overlapping} overlapping pairs, ${outOfOrder} of ${bus.byResource.size} pull requests out of order; ` +
          `work per delivery ${Math.min(...spans)}–${Math.max(...spans)} ms`,
      );
      // Later suites' deliveries are about the same repository: the count is of this test's own.
      const mine = new Set(all);
      t.holds(() => {
        expect(ordered().filter((line) => mine.has(line.delivery)).length).toBe(total);
        expect(onBus().filter((line) => mine.has(line.delivery)).length).toBe(total);
      });
    }, 360_000);

    it('a poison delivery holds up its own pull request only, until its retries are used up; then it goes to the failure destination, and the rest follow in order', async () => {
      const factor = readOrderedSubscribers({
        FORGEBRIDGE_ORDERED_SUBSCRIBERS: JSON.stringify([
          { function: 'onPullRequestOrdered', handler: 'functions/ordered/handler.handler' },
        ]),
      })[0]?.parallelizationFactor as number;
      const slot = (number: number) => slotOf(partitionKeyOf('github', `${repository}#pr:${number}`), factor);
      const poisoned = 5000;
      // Three other pull requests, each in a shard slot of its own, not the poisoned one's.
      const others: number[] = [];
      for (let number = 5001; others.length < 3; number++) {
        if (slot(number) !== slot(poisoned) && !others.some((other) => slot(other) === slot(number)))
          others.push(number);
      }
      const before = await post(poisoned, 0);
      const poison = await post(poisoned, 1, true);
      // The other pull requests' deliveries beside the poisoned one's later ones.
      const [after, otherIds] = await Promise.all([
        (async () => [await post(poisoned, 2), await post(poisoned, 3)])(),
        Promise.all(others.map(async (number) => [await post(number, 0), await post(number, 1)])),
      ]);
      // A queued delivery would reach the stream when the retrier writes it, after the later ones: none may be.
      expect(queued, 'deliveries the ingest queued').toEqual([]);
      const mine = () => ordered().filter((line) => line.resource === `${repository}#pr:${poisoned}`);
      await t.waitFor(() => mine().length >= 3, { timeoutMs: 60_000 });

      const failures = t.stack.orderedStream?.failures() ?? [];
      const failure = failures.find((message) => message.delivery === poison);
      expect(failure, JSON.stringify(failures)).toBeDefined();
      expect(failure).toMatchObject({
        requestContext: { condition: 'RetryAttemptsExhausted', approximateInvokeCount: 4 },
        KinesisBatchInfo: { batchSize: 1 },
        partitionKey: partitionKeyOf('github', `${repository}#pr:${poisoned}`),
      });
      const gaveUpAt = Date.parse(failure?.timestamp as string);
      const lines = mine();
      // Before the poison, then what came after it, in order, each started only once the poison was given up.
      expect(lines.map((line) => line.delivery)).toEqual([before, ...after]);
      for (const line of lines.slice(1)) expect(line.startedAt).toBeGreaterThanOrEqual(gaveUpAt);
      // The other pull requests went on: each was handled before the poison was given up.
      const handledIds = new Map(ordered().map((line) => [line.delivery, line]));
      for (const id of otherIds.flat()) {
        expect(handledIds.get(id)?.endedAt, id).toBeLessThan(gaveUpAt);
      }
      // The delivery log has the subscriber's error for the poison, and ok for the ones around it.
      const log = new DeliveryLog({ client, tableName: t.stack.names.deliveriesTable });
      const name = `forgebridge-${t.stack.stage}-onPullRequestOrdered`;
      const logged = await log.get(poison, { source: 'github' });
      expect(logged?.subscribers[name]).toMatchObject({
        outcome: 'error',
        error: { name: 'WebhookReceiveError' },
      });
      expect((await log.get(after[0] as string, { source: 'github' }))?.subscribers[name]).toMatchObject({
        outcome: 'ok',
      });
      // `forgebridge dlq --queue ordered`: the failure queue's pointer, its record read back from the stream.
      const env = {
        ...cleanCliEnv(),
        FORGEBRIDGE_SQS_ENDPOINT: t.stack.endpoints.sqs,
        FORGEBRIDGE_KINESIS_ENDPOINT: t.stack.endpoints.kinesis as string,
        FORGEBRIDGE_LAMBDA_ENDPOINT: t.stack.endpoints.lambda,
        FORGEBRIDGE_STATE_FILE: '/nonexistent/forgebridge-state.json',
      };
      const listed = await runCli(['dlq', 'list', '--queue', 'ordered', '--json'], env);
      expect(listed.stderr).toBe('');
      const messages = (JSON.parse(listed.stdout) as { messages: Record<string, unknown>[] }).messages;
      expect(messages.find((message) => message.deliveryId === poison)).toMatchObject({
        subscriber: name,
        detailType: 'pull_request.synchronize',
        errorCode: 'RetryAttemptsExhausted',
        retryAttempts: 4,
      });
      // Still poisoned: the replay hands it to the subscriber once, which fails it again; the message stays.
      const replayed = await runCli(
        ['dlq', 'replay', '--queue', 'ordered', '--subscriber', 'onPullRequestOrdered', '--yes', '--json'],
        env,
      );
      expect(replayed.code, replayed.stderr).toBe(1);
      expect(JSON.parse(replayed.stdout)).toMatchObject({ sent: 0, failed: 1, deleted: 0 });
      console.log(
        `poison: given up after ${failure?.requestContext.approximateInvokeCount} invocations, ${gaveUpAt - (lines[0]?.endedAt ?? gaveUpAt)} ms after the delivery before it; ` +
          `the other ${others.length} pull requests were done ${Math.round(gaveUpAt - Math.max(...otherIds.flat().map((id) => handledIds.get(id)?.endedAt ?? 0)))} ms before that`,
      );
      t.holds(() => {
        expect(mine().length).toBe(3);
        expect(
          (t.stack.orderedStream?.failures() ?? []).filter((message) => message.delivery === poison),
        ).toHaveLength(1);
      });
    }, 120_000);
  });
}
