// The governor's decisions with a stub DynamoDB client and a fake clock: what it writes, how it reads a refusal,
// and that nothing of the store's failures reaches the call. Its behaviour against DynamoDB Local:
// test/integration/aws/governor.
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { limitVerdict, primaryFigures } from '../../../../lib/aws/governor/answers.js';
import { governedCall } from '../../../../lib/aws/governor/governed-call.js';
import { ForgeGovernor, type GovernorEvent } from '../../../../lib/aws/governor/governor.js';
import {
  bookExpression,
  expressions,
  MAX_RECLAIM,
  paceOf,
  takeExpression,
} from '../../../../lib/aws/governor/item.js';
import { ForgeLimitBounds, parseBudgets } from '../../../../lib/aws/governor/limits.js';
import { currentInvocation, inInvocation, runInvocation } from '../../../../lib/aws/invocation.js';

type Input = {
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames: Record<string, string>;
};

/** A client answering each `send` with the next of `answers` (a value resolves, an Error rejects). */
function stubClient(answers: unknown[]) {
  const inputs: Input[] = [];
  const client = {
    send: vi.fn(async (command: { input: Input }) => {
      inputs.push(command.input);
      const answer = answers.length > 1 ? answers.shift() : answers[0];
      if (answer instanceof Error) throw answer;
      return answer;
    }),
  } as unknown as DynamoDBDocumentClient;
  return { client, inputs };
}

/** A refused write, with the item as it was (`ReturnValuesOnConditionCheckFailure`). */
function refused(item?: Record<string, unknown>) {
  return Object.assign(new Error('The conditional request failed'), {
    name: 'ConditionalCheckFailedException',
    ...(item === undefined ? {} : { Item: marshall(item) }),
  });
}

function clock(start = 1_000_000) {
  let now = start;
  return {
    now: () => now,
    sleep: vi.fn(async (ms: number) => {
      now += ms;
    }),
  };
}

const options = (client: DynamoDBDocumentClient, extra: object = {}) => ({
  client,
  tableName: 'tokens',
  owner: 'github#1#2',
  limits: { concurrency: 2, budgets: [] },
  random: () => 0.5,
  ...extra,
});

describe('ForgeGovernor (unit)', () => {
  it('refuses bad options with a TypeError naming the option', () => {
    const { client } = stubClient([{}]);
    expect(() => new ForgeGovernor({ ...options(client), client: undefined as never })).toThrow(
      '"client" is required',
    );
    expect(() => new ForgeGovernor({ ...options(client), tableName: '' })).toThrow('"tableName" is required');
    expect(() => new ForgeGovernor({ ...options(client), owner: '' })).toThrow('"owner" is required');
    expect(() => new ForgeGovernor({ ...options(client), limits: { concurrency: 0, budgets: [] } })).toThrow(
      '"limits.concurrency" must be a whole number from 1 to 1000',
    );
    expect(
      () => new ForgeGovernor({ ...options(client), limits: { concurrency: 1001, budgets: [] } }),
    ).toThrow('"limits.concurrency" must be a whole number from 1 to 1000');
    const budget = { scope: 'writes' as const, limit: 10, seconds: 1, burst: 1 };
    expect(
      () =>
        new ForgeGovernor({ ...options(client), limits: { concurrency: 1, budgets: Array(5).fill(budget) } }),
    ).toThrow('"limits.budgets" holds at most 4 budgets');
    expect(() => new ForgeGovernor({ ...options(client), maxWaitMs: -1 })).toThrow('"maxWaitMs"');
    expect(() => new ForgeGovernor({ ...options(client), leaseSeconds: 0 })).toThrow('"leaseSeconds"');
  });

  it('makes the item of a new owner, then takes its turn; a failed make is tried again by the next try', async () => {
    const time = clock();
    const { client, inputs } = stubClient([
      refused(),
      new Error('throttled'),
      refused(),
      {},
      { Attributes: { leases: {} } },
    ]);
    const governor = new ForgeGovernor({ ...options(client), ...time });
    const permit = await governor.acquire('GET');
    expect(permit.governed).toBe(true);
    expect(inputs.map((input) => input.UpdateExpression.split(' ')[1])).toEqual([
      '#l.#id',
      '#l',
      '#l.#id',
      '#l',
      '#l.#id',
    ]);
    expect(inputs[1]?.UpdateExpression).toBe('SET #l = if_not_exists(#l, :empty), #ttl = :ttl');
  });

  it('removes expired leases of crashed holders, checked to be there still, and counts them out of the limit', async () => {
    const time = clock();
    const now = time.now();
    const { client, inputs } = stubClient([
      refused({ pk: 'governor#github#1#2', leases: { dead1: now - 5, dead2: now - 1 } }),
      { Attributes: { leases: {} } },
    ]);
    await new ForgeGovernor({ ...options(client), ...time }).acquire('GET');
    const reclaim = inputs[1] as Input;
    expect(reclaim.UpdateExpression).toMatch(/ REMOVE #l\.#r0, #l\.#r1$/);
    expect(reclaim.ConditionExpression).toContain('attribute_exists(#l.#r0) AND attribute_exists(#l.#r1)');
    expect([reclaim.ExpressionAttributeNames['#r0'], reclaim.ExpressionAttributeNames['#r1']]).toEqual([
      'dead1',
      'dead2',
    ]);
    expect(time.sleep).not.toHaveBeenCalled();
  });

  it('tries again at once when only its guess of a budget was wrong, and waits as for a slot after three', async () => {
    const time = clock();
    const now = time.now();
    // The budget's next arrival is behind now: not a refusal by it, only this instance's guess of it.
    const item = { pk: 'x', leases: {}, 'pace:writes:5/1s': now - 10 };
    const { client } = stubClient([
      refused(item),
      refused(item),
      refused(item),
      refused(item),
      { Attributes: {} },
    ]);
    const events: GovernorEvent[] = [];
    const governor = new ForgeGovernor({
      ...options(client, { limits: { concurrency: 2, budgets: parseBudgets('writes:5/1s') } }),
      ...time,
      onEvent: (event) => events.push(event),
    });
    const permit = await governor.acquire('POST');
    expect(time.sleep).toHaveBeenCalledTimes(1);
    expect(permit.waitedMs).toBeGreaterThan(0);
    expect(events).toEqual([{ type: 'waited', ms: permit.waitedMs, limit: 'concurrency' }]);
  });

  it('books its turn in a budget ahead of now, sleeps until it, then takes its slot without drawing again', async () => {
    const time = clock();
    const now = time.now();
    const attribute = 'pace:writes:5/1s';
    const { client, inputs } = stubClient([
      refused({ pk: 'x', leases: {}, [attribute]: now + 750 }),
      // The booking: the next arrival moved on by one interval (250 ms): this call's turn is at now + 750.
      { Attributes: { leases: {}, [attribute]: now + 1000 } },
      { Attributes: { leases: {} } },
    ]);
    const events: GovernorEvent[] = [];
    const governor = new ForgeGovernor({
      ...options(client, { limits: { concurrency: 2, budgets: parseBudgets('writes:5/1s') } }),
      ...time,
      onEvent: (event) => events.push(event),
    });
    const permit = await governor.acquire('POST');
    expect(inputs[1]?.UpdateExpression).toBe('SET #p0 = #p0 + :i0');
    expect(inputs[1]?.ConditionExpression).toBe('(#p0 > :a0 AND #p0 <= :b0)');
    expect(time.sleep).toHaveBeenCalledWith(750);
    // The slot's write draws from no budget: the booking did.
    expect(inputs[2]?.UpdateExpression).not.toContain('#p0');
    expect(permit.waitedMs).toBe(750);
    expect(events).toEqual([{ type: 'waited', ms: 750, limit: 'writes:5/1s' }]);
  });

  it('a booking refused because its turn would come past the deadline fails at once, with that turn', async () => {
    const time = clock();
    const now = time.now();
    const attribute = 'pace:writes:5/1s';
    const ahead = { pk: 'x', leases: {}, [attribute]: now + 10_000 };
    const { client } = stubClient([refused(ahead), refused(ahead)]);
    const governor = new ForgeGovernor({
      ...options(client, { limits: { concurrency: 2, budgets: parseBudgets('writes:5/1s') } }),
      ...time,
    });
    const error = await governor.acquire('POST', { deadline: now + 2_000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ForgeRateLimitError', limit: 'writes:5/1s' });
    expect((error as { resetAt: Date }).resetAt.getTime()).toBe(now + 10_000);
    expect(time.sleep).not.toHaveBeenCalled();
  });

  it('a booking refused because the budget went idle meanwhile tries again at once; a store failing then goes on unthrottled', async () => {
    const time = clock();
    const now = time.now();
    const attribute = 'pace:writes:5/1s';
    const { client, inputs } = stubClient([
      refused({ pk: 'x', leases: {}, [attribute]: now + 750 }),
      refused({ pk: 'x', leases: {}, [attribute]: now - 1 }),
      { Attributes: { leases: {} } },
    ]);
    const limits = { concurrency: 2, budgets: parseBudgets('writes:5/1s') };
    const permit = await new ForgeGovernor({ ...options(client, { limits }), ...time }).acquire('POST');
    expect(permit.governed).toBe(true);
    expect(inputs).toHaveLength(3);
    expect(time.sleep).not.toHaveBeenCalled();
    const failing = stubClient([
      refused({ pk: 'x', leases: {}, [attribute]: now + 750 }),
      new Error('throttled'),
    ]);
    const events: GovernorEvent[] = [];
    const unthrottled = await new ForgeGovernor({
      ...options(failing.client, { limits }),
      ...time,
      onEvent: (event) => events.push(event),
    }).acquire('POST');
    expect(unthrottled.governed).toBe(false);
    expect(events).toEqual([{ type: 'unavailable' }]);
  });

  it('a stop in force voids the turn it had booked: after the stop the call books again', async () => {
    const time = clock();
    const now = time.now();
    const attribute = 'pace:writes:5/1s';
    const { client, inputs } = stubClient([
      refused({ pk: 'x', leases: {}, [attribute]: now + 250 }),
      { Attributes: { leases: {}, [attribute]: now + 500 } },
      // At its turn a stop has come in force (another instance was told to wait).
      refused({
        pk: 'x',
        leases: {},
        [attribute]: now + 500,
        stopUntil: now + 5_000,
        stopReason: 'retry-after',
      }),
      { Attributes: { leases: {} } },
    ]);
    const limits = { concurrency: 2, budgets: parseBudgets('writes:5/1s') };
    await new ForgeGovernor({ ...options(client, { limits }), ...time }).acquire('POST');
    expect(time.sleep).toHaveBeenNthCalledWith(1, 250);
    expect(time.sleep).toHaveBeenNthCalledWith(2, 4_750);
    // Its last try draws from the budget again.
    expect(inputs[3]?.UpdateExpression).toContain('#p0');
  });

  it('guesses a busy budget from the item it saw last, and moves its next arrival one interval on', async () => {
    const time = clock();
    const now = time.now();
    const { client, inputs } = stubClient([
      { Attributes: { leases: {}, 'pace:writes:3/1s~2': now + 100 } },
      { Attributes: { leases: {} } },
    ]);
    const governor = new ForgeGovernor({
      ...options(client, { limits: { concurrency: 2, budgets: parseBudgets('writes:3/1s~2') } }),
      ...time,
    });
    await governor.acquire('POST');
    await governor.acquire('POST');
    expect(inputs[0]?.UpdateExpression).toContain('#p0 = :n0');
    expect(inputs[1]?.UpdateExpression).toContain('#p0 = #p0 + :i0');
    expect(inputs[1]?.ConditionExpression).toContain('(#p0 > :now AND #p0 <= :t0)');
  });

  it('gives the slot back once, keeps a longer stop another instance set, and never fails the call on the store', async () => {
    const warn = vi.fn();
    const logger = { debug: vi.fn(), info: vi.fn(), warn, error: vi.fn() };
    const { client, inputs } = stubClient([{ Attributes: {} }, refused(), {}]);
    const governor = new ForgeGovernor({
      ...options(client),
      logger,
      onEvent: () => {
        throw new Error('a metric that throws');
      },
    });
    const permit = await governor.acquire('POST');
    const verdict = await permit.release({ status: 429, headers: new Headers() });
    expect(verdict.limited).toBe('secondary');
    // The stop write was refused (a longer one stands): the slot is still given back.
    expect(inputs.map((input) => input.UpdateExpression.split(',')[0])).toEqual([
      expect.stringMatching(/^SET #l\.#id/),
      'SET #s = :until',
      'SET #ttl = :ttl REMOVE #l.#id',
    ]);
    expect(await permit.release({ status: 200, headers: new Headers() })).toEqual({});
    expect(inputs).toHaveLength(3);
    const failing = stubClient([{ Attributes: {} }, new Error('down')]);
    const other = new ForgeGovernor({ ...options(failing.client), logger });
    await expect((await other.acquire('GET')).release()).resolves.toEqual({});
    expect(warn).toHaveBeenCalledWith('forge api governor could not give a slot back', {
      owner: 'github#1#2',
      error: 'Error',
    });
  });

  it('records the primary budget the answer states when it gives the slot back', async () => {
    const { client, inputs } = stubClient([{ Attributes: {} }, {}]);
    const permit = await new ForgeGovernor(options(client)).acquire('GET');
    await permit.release({
      status: 200,
      headers: new Headers({ 'x-ratelimit-remaining': '17', 'x-ratelimit-reset': '1800000000' }),
    });
    expect(inputs[1]?.UpdateExpression).toBe('SET #ttl = :ttl, #rem = :rem, #reset = :reset REMOVE #l.#id');
  });
});

describe('the slot given back inside an invocation', () => {
  it('is written beside what the caller does next, and the invocation waits for it before it ends', async () => {
    let finish: () => void = () => undefined;
    const written: string[] = [];
    const client = {
      send: vi.fn(async (command: { input: Input }) => {
        if (command.input.UpdateExpression.includes('REMOVE #l.#id')) {
          await new Promise<void>((resolve) => {
            finish = resolve;
          });
          written.push('released');
        }
        return { Attributes: {} };
      }),
    } as unknown as DynamoDBDocumentClient;
    const governor = new ForgeGovernor(options(client));
    const steps: string[] = [];
    const handler = inInvocation(async (_event: unknown, _context: unknown) => {
      const permit = await governor.acquire('GET');
      await permit.release({ status: 200, headers: new Headers() });
      steps.push(`answered, released: ${written.length}`);
      setTimeout(() => finish(), 20);
    });
    await handler({}, { getRemainingTimeInMillis: () => 5_000 });
    steps.push(`ended, released: ${written.length}`);
    expect(steps).toEqual(['answered, released: 0', 'ended, released: 1']);
  });
});

describe('limitVerdict', () => {
  const now = Date.parse('2026-12-07T12:00:00Z');
  const answer = (status: number, headers: Record<string, string> = {}) => ({
    status,
    headers: new Headers(headers),
  });

  it('reads retry-after in seconds or as an HTTP date, a primary budget at 0 until its reset, a bare 429 as a minute', () => {
    expect(limitVerdict(answer(403, { 'retry-after': '30' }), now)).toEqual({
      limited: 'secondary',
      stopUntil: now + 30_000,
    });
    expect(limitVerdict(answer(429, { 'retry-after': 'Mon, 07 Dec 2026 12:00:45 GMT' }), now)).toEqual({
      limited: 'secondary',
      stopUntil: now + 45_000,
    });
    const reset = String(now / 1000 + 600);
    expect(
      limitVerdict(answer(403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset }), now),
    ).toEqual({
      limited: 'primary',
      stopUntil: now + 600_000,
    });
    expect(limitVerdict(answer(403, { 'x-ratelimit-remaining': '0' }), now)).toEqual({
      limited: 'primary',
      stopUntil: now + 60_000,
    });
    expect(limitVerdict(answer(429), now)).toEqual({ limited: 'secondary', stopUntil: now + 60_000 });
    expect(limitVerdict(answer(200, { 'x-ratelimit-remaining': '0' }), now)).toEqual({
      stopUntil: now + 60_000,
    });
    // A past reset stops no one; a plain 403 is a permission, not a limit.
    expect(
      limitVerdict(answer(200, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' }), now),
    ).toEqual({
      stopUntil: now,
    });
    expect(limitVerdict(answer(403), now)).toEqual({});
    expect(limitVerdict(undefined, now)).toEqual({});
  });

  it("reads GitLab's RateLimit-* where GitHub's names are absent, a reset in epoch seconds or in seconds from now", () => {
    const reset = String(now / 1000 + 42);
    // GitLab's 429 after its per-minute quota: Retry-After decides, the figures are the budget's.
    expect(
      limitVerdict(
        answer(429, { 'ratelimit-remaining': '0', 'ratelimit-reset': reset, 'retry-after': '42' }),
        now,
      ),
    ).toEqual({ limited: 'secondary', stopUntil: now + 42_000 });
    expect(limitVerdict(answer(429, { 'ratelimit-remaining': '0', 'ratelimit-reset': reset }), now)).toEqual({
      limited: 'primary',
      stopUntil: now + 42_000,
    });
    // A success that spent the last of the minute's quota stops the others until its reset.
    expect(limitVerdict(answer(200, { 'ratelimit-remaining': '0', 'ratelimit-reset': '30' }), now)).toEqual({
      stopUntil: now + 30_000,
    });
    expect(
      primaryFigures(
        answer(200, { 'ratelimit-remaining': '1999', 'ratelimit-reset': reset, 'ratelimit-limit': '2000' }),
        now,
      ),
    ).toEqual({ remaining: 1999, resetAt: now + 42_000, total: 2000 });
    expect(primaryFigures(answer(200, { 'ratelimit-remaining': '7', 'ratelimit-reset': '60' }), now)).toEqual(
      {
        remaining: 7,
        resetAt: now + 60_000,
        total: undefined,
      },
    );
    // GitHub's names win where both are sent; a malformed GitLab header is named as sent.
    expect(
      primaryFigures(
        answer(200, {
          'x-ratelimit-remaining': '17',
          'x-ratelimit-reset': '1800000000',
          'ratelimit-remaining': '3',
          'ratelimit-reset': '1800000999',
        }),
        now,
      ),
    ).toEqual({ remaining: 17, resetAt: 1_800_000_000_000, total: undefined });
    const malformed: string[] = [];
    expect(
      limitVerdict(answer(200, { 'ratelimit-remaining': '-1', 'ratelimit-reset': 'soon' }), now, (header) =>
        malformed.push(header),
      ),
    ).toEqual({});
    expect(malformed).toEqual(['ratelimit-remaining', 'ratelimit-reset']);
  });

  it('says which header it could not read, and never takes it on trust', () => {
    const malformed: string[] = [];
    const verdict = limitVerdict(
      answer(200, { 'retry-after': 'Mon, 99 Dec 2026 99:99:99 GMT', 'x-ratelimit-remaining': '1e3' }),
      now,
      (header) => malformed.push(header),
    );
    expect(verdict).toEqual({});
    expect(malformed).toEqual(['x-ratelimit-remaining', 'retry-after']);
    expect(primaryFigures(answer(200, { 'x-ratelimit-remaining': '5' }))).toBeUndefined();
    expect(primaryFigures(undefined)).toBeUndefined();
  });
});

describe('governedCall without the store', () => {
  it('keeps the stop itself: waits out a secondary-limit answer before its one retry', async () => {
    const { client } = stubClient([new Error('down')]);
    const governor = new ForgeGovernor(options(client));
    const answers = [
      { status: 429, headers: new Headers({ 'retry-after': '1' }) },
      { status: 200, headers: new Headers() },
    ];
    const started = Date.now();
    const result = await governedCall(governor, 'POST', async () => answers.shift());
    expect(result?.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    // A result that carries no answer is passed on as it is.
    expect(await governedCall(governor, 'GET', async () => 'plain')).toBe('plain');
  });
});

describe('invocation', () => {
  it('knows the deadline of a Lambda context, none without one, and keeps an outer invocation', async () => {
    expect(currentInvocation()).toBeUndefined();
    const before = Date.now();
    const deadline = runInvocation(
      { getRemainingTimeInMillis: () => 5_000 },
      () => currentInvocation()?.deadline,
    );
    expect(deadline).toBeGreaterThanOrEqual(before + 5_000);
    expect(runInvocation(undefined, () => currentInvocation()?.deadline)).toBeUndefined();
    expect(
      runInvocation({ getRemainingTimeInMillis: () => Number.NaN }, () => currentInvocation()?.deadline),
    ).toBe(undefined);
    const inner = inInvocation(async (_event: unknown, _context: unknown) => currentInvocation());
    const outer = await runInvocation({ getRemainingTimeInMillis: () => 1_000 }, async () => ({
      outer: currentInvocation(),
      inner: await inner({}, { getRemainingTimeInMillis: () => 9_000 }),
    }));
    expect(outer.inner).toBe(outer.outer);
  });
});

describe("DynamoDB's limits at the settings' bounds", () => {
  // DynamoDB refuses an expression over 4 KB and an item over 400 KB, and a refused write leaves the calls
  // unthrottled: the largest writes the settings allow must fit.
  const budgets = Array.from({ length: ForgeLimitBounds.budgets }, (_, index) => ({
    scope: 'writes' as const,
    limit: 999_999_999,
    seconds: 999_999_999 - index,
    burst: 999_999_998,
  }));
  const paces = budgets.map(paceOf);
  const now = Date.parse('2026-12-07T12:00:00Z');
  const busy = Object.fromEntries(paces.map((pace) => [pace.attribute, now + 1]));

  it('the largest try (every budget busy, the most expired leases removed) and booking stay far under 4 KB', () => {
    const take = takeExpression({
      lease: randomUUID(),
      leaseUntil: now + 30_000,
      limit: ForgeLimitBounds.concurrency + MAX_RECLAIM,
      ttl: now / 1000 + 999_999_999,
      reclaim: Array.from({ length: MAX_RECLAIM }, () => randomUUID()),
      paces,
      seen: busy,
      now,
    });
    const book = bookExpression(paces, now, now + 60_000);
    for (const parts of [take, book]) {
      const { UpdateExpression, ConditionExpression } = expressions(parts);
      expect(Buffer.byteLength(UpdateExpression)).toBeLessThan(1536);
      expect(Buffer.byteLength(ConditionExpression)).toBeLessThan(1536);
    }
  });

  it('the fullest item (every slot held, every budget, a stop, the primary figures) stays far under 400 KB', () => {
    const leases = Object.fromEntries(
      Array.from({ length: ForgeLimitBounds.concurrency }, () => [randomUUID(), now + 30_000]),
    );
    const item = {
      pk: `governor#github#app-${'9'.repeat(20)}#installation-${'9'.repeat(20)}`,
      leases,
      ...busy,
      stopUntil: now,
      stopReason: 'retry-after',
      remaining: 12_500,
      resetAt: now,
      total: 12_500,
      expiresAt: now / 1000,
    };
    // The item's JSON is longer than its DynamoDB size (names and values as UTF-8, a number in at most 21 bytes,
    // 3 bytes a map and 1 an entry): a bound from above.
    expect(Buffer.byteLength(JSON.stringify(item))).toBeLessThan(60 * 1024);
  });
});
