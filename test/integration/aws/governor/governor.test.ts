// The forge API governor against DynamoDB Local: several governors of one owner, each with its own client as
// separate Lambda instances would have, share the concurrency limit, the budgets and the forge's stops.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { governedCall } from '../../../../lib/aws/governor/governed-call.js';
import {
  ForgeGovernor,
  type ForgeGovernorOptions,
  GOVERNOR_KEY_PREFIX,
  type GovernorEvent,
} from '../../../../lib/aws/governor/governor.js';
import { parseBudgets } from '../../../../lib/aws/governor/limits.js';
import { AwsErrorCodes, ForgeRateLimitError } from '../../../../lib/aws/index.js';
import { useDynamoDbLocal } from '../../../helpers/aws-local.js';

const ddb = useDynamoDbLocal();
let table: string;
let owners = 0;

beforeAll(async () => {
  ({ tokens: table } = await ddb.tables());
});

/** A fresh owner per test, and `count` governors of it, each an instance of its own. */
function instances(count: number, options: Partial<ForgeGovernorOptions> = {}) {
  owners += 1;
  const owner = `github#app-${owners}#installation`;
  const events: GovernorEvent[] = [];
  const governors = Array.from(
    { length: count },
    () =>
      new ForgeGovernor({
        client: ddb.documentClient(),
        tableName: table,
        owner,
        limits: { concurrency: 2, budgets: [] },
        onEvent: (event) => events.push(event),
        ...options,
      }),
  );
  return { owner, governors, events };
}

const headers = (entries: Record<string, string>) => new Headers(entries);

/** What `governor` rejects a `method` call with that must have its turn within `withinMs` (`undefined`: no rejection). */
async function refusal(governor: ForgeGovernor, method: string, withinMs: number) {
  return (await governor.acquire(method, { deadline: Date.now() + withinMs }).then(
    (permit) => permit.release().then(() => undefined),
    (error: unknown) => error,
  )) as ForgeRateLimitError | undefined;
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function item(owner: string) {
  const { Item } = await ddb.documentClient().send(
    new GetCommand({
      TableName: table,
      Key: { pk: `${GOVERNOR_KEY_PREFIX}${owner}` },
      ConsistentRead: true,
    }),
  );
  return Item;
}

describe('ForgeGovernor against DynamoDB Local', () => {
  it('holds every instance of an owner to its concurrency limit, and every call gets its turn', async () => {
    const { governors, events } = instances(3);
    let flying = 0;
    let most = 0;
    const calls = Array.from({ length: 12 }, async (_, index) => {
      const governor = governors[index % governors.length] as ForgeGovernor;
      const permit = await governor.acquire('GET');
      flying += 1;
      most = Math.max(most, flying);
      await sleep(30);
      flying -= 1;
      await permit.release({ status: 200, headers: headers({}) });
      return permit;
    });
    const permits = await Promise.all(calls);
    expect(permits.every((permit) => permit.governed)).toBe(true);
    expect(most).toBe(2);
    expect(events.some((event) => event.type === 'waited' && event.limit === 'concurrency')).toBe(true);
    expect(events.filter((event) => event.type === 'refused')).toEqual([]);
  });

  it('paces content-creating requests: never more than the limit in any window, reads not counted', async () => {
    const { governors } = instances(2, {
      limits: { concurrency: 10, budgets: parseBudgets('writes:4/1s') },
    });
    const started = Date.now();
    const writes = await Promise.all(
      Array.from({ length: 7 }, async (_, index) => {
        const permit = await (governors[index % 2] as ForgeGovernor).acquire('POST');
        const at = Date.now();
        await permit.release();
        return at;
      }),
    );
    const reads = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const permit = await (governors[0] as ForgeGovernor).acquire('GET');
        await permit.release();
        return permit.waitedMs;
      }),
    );
    writes.sort((a, b) => a - b);
    // 4 in any second: one every 1000 / (4 - 1) ms.
    for (let i = 4; i < writes.length; i++) {
      expect((writes[i] as number) - (writes[i - 4] as number)).toBeGreaterThanOrEqual(1000);
    }
    expect((writes.at(-1) as number) - started).toBeGreaterThanOrEqual(6 * 333);
    expect(Math.max(...reads)).toBeLessThan(300);
  });

  it('frees the slot of an instance that died holding it once its lease expires', async () => {
    const { owner, governors } = instances(2, { limits: { concurrency: 1, budgets: [] }, leaseSeconds: 1 });
    const [dead, alive] = governors as [ForgeGovernor, ForgeGovernor];
    await dead.acquire('POST'); // never released: the instance crashed
    const permit = await alive.acquire('GET');
    expect(permit.waitedMs).toBeGreaterThanOrEqual(800);
    await permit.release();
    expect(Object.keys(((await item(owner)) as { leases: object }).leases)).toEqual([]);
  });

  it('after a mass crash, the slots come back a batch a try: 200 dead leases, 200 new calls each get one', async () => {
    const limits = { concurrency: 200, budgets: [] };
    const { owner, governors } = instances(200, { limits, leaseSeconds: 0.5 });
    // Every instance dies holding its slot.
    for (const governor of governors) await governor.acquire('POST');
    expect(Object.keys(((await item(owner)) as { leases: object }).leases)).toHaveLength(200);
    await sleep(600);
    // 200 new instances, one call each: every try removes at most 25 of the dead, so each try's expressions stay
    // far under DynamoDB's 4 KB, and each call gets its slot.
    const next = Array.from(
      { length: 200 },
      () => new ForgeGovernor({ client: ddb.documentClient(), tableName: table, owner, limits }),
    );
    const permits = await Promise.all(next.map((governor) => governor.acquire('GET')));
    expect(permits.every((permit) => permit.governed)).toBe(true);
    // Every dead lease is gone: the 200 held are the new calls'.
    expect(Object.keys(((await item(owner)) as { leases: object }).leases)).toHaveLength(200);
    await Promise.all(permits.map((permit) => permit.release()));
    expect(Object.keys(((await item(owner)) as { leases: object }).leases)).toHaveLength(0);
  }, 60_000);

  it('a retry-after one instance was told stops the others until then', async () => {
    const { owner, governors, events } = instances(2);
    const [told, other] = governors as [ForgeGovernor, ForgeGovernor];
    const first = await told.acquire('POST');
    const verdict = await first.release({ status: 403, headers: headers({ 'retry-after': '1' }) });
    expect(verdict.limited).toBe('secondary');
    expect((await item(owner))?.stopReason).toBe('retry-after');
    const started = Date.now();
    const permit = await other.acquire('GET');
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
    await permit.release();
    expect(events).toContainEqual({ type: 'limit-answer', status: 403, limit: 'retry-after' });
  });

  it('a call that cannot get its turn before its deadline fails with a typed error naming the limit', async () => {
    const { owner, governors, events } = instances(2, { limits: { concurrency: 1, budgets: [] } });
    const [holder, waiter] = governors as [ForgeGovernor, ForgeGovernor];
    const held = await holder.acquire('GET');
    const error = await waiter.acquire('GET', { deadline: Date.now() + 150 }).catch((e: unknown) => e);
    await held.release();
    expect(error).toBeInstanceOf(ForgeRateLimitError);
    expect(error).toMatchObject({ code: AwsErrorCodes.forgeRateLimited, limit: 'concurrency', owner });
    expect((error as Error).message).toMatch(
      /^forge api limit "concurrency" of "github#app-\d+#installation" holds/,
    );
    expect(events).toContainEqual({ type: 'refused', limit: 'concurrency' });
  });

  it('a budget that frees up past the deadline fails at once, with when it resets', async () => {
    const { governors } = instances(1, { limits: { concurrency: 5, budgets: parseBudgets('writes:2/60s') } });
    const governor = governors[0] as ForgeGovernor;
    await (await governor.acquire('POST')).release();
    const started = Date.now();
    const error = await refusal(governor, 'PATCH', 5_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(error?.limit).toBe('writes:2/60s');
    expect(error?.resetAt.getTime()).toBeGreaterThan(Date.now() + 55_000);
  });

  it('a primary budget of 0 remaining is not spent further, by any instance, until it resets', async () => {
    const { owner, governors } = instances(2);
    const [first, second] = governors as [ForgeGovernor, ForgeGovernor];
    const reset = Math.floor(Date.now() / 1000) + 120;
    const permit = await first.acquire('GET');
    const verdict = await permit.release({
      status: 200,
      headers: headers({
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(reset),
        'x-ratelimit-limit': '5000',
      }),
    });
    expect(verdict.limited).toBeUndefined();
    expect(await item(owner)).toMatchObject({
      stopReason: 'primary',
      remaining: 0,
      total: 5000,
      resetAt: reset * 1000,
    });
    const error = await refusal(second, 'GET', 200);
    expect(error?.limit).toBe('primary');
    expect(error?.resetAt.getTime()).toBe(reset * 1000);
  });

  it("GitLab's RateLimit-* budget at 0 (no x- prefix) stops every instance until its reset too", async () => {
    const { owner, governors } = instances(2);
    const [first, second] = governors as [ForgeGovernor, ForgeGovernor];
    const reset = Math.floor(Date.now() / 1000) + 45;
    const permit = await first.acquire('POST');
    await permit.release({
      status: 200,
      headers: headers({
        'ratelimit-remaining': '0',
        'ratelimit-reset': String(reset),
        'ratelimit-limit': '2000',
      }),
    });
    expect(await item(owner)).toMatchObject({
      stopReason: 'primary',
      remaining: 0,
      total: 2000,
      resetAt: reset * 1000,
    });
    const error = await refusal(second, 'GET', 200);
    expect(error).toBeInstanceOf(ForgeRateLimitError);
    expect(error?.limit).toBe('primary');
    expect(error?.resetAt.getTime()).toBe(reset * 1000);
  });

  it('malformed rate-limit headers are ignored and said so; a limit answer without a usable time waits a minute', async () => {
    const { owner, governors, events } = instances(1);
    const governor = governors[0] as ForgeGovernor;
    const ok = await (await governor.acquire('GET')).release({
      status: 200,
      headers: headers({ 'x-ratelimit-remaining': 'lots', 'x-ratelimit-reset': '-5', 'retry-after': 'soon' }),
    });
    expect(ok).toEqual({});
    expect(
      events.filter((event) => event.type === 'malformed-header').map((event) => event.type),
    ).toHaveLength(3);
    expect((await item(owner))?.stopUntil).toBeUndefined();
    const before = Date.now();
    const limited = await (await governor.acquire('POST')).release({
      status: 403,
      headers: headers({ 'retry-after': 'Thu, 99 Foo 2026 nonsense' }),
    });
    expect(limited.limited).toBe('secondary');
    const stop = (await item(owner))?.stopUntil as number;
    expect(stop - before).toBeGreaterThanOrEqual(59_000);
    expect(stop - before).toBeLessThanOrEqual(61_000);
  });

  it('a year-long retry-after is held to an hour', async () => {
    const { governors } = instances(1);
    const before = Date.now();
    const verdict = await (await (governors[0] as ForgeGovernor).acquire('GET')).release({
      status: 429,
      headers: headers({ 'retry-after': String(365 * 86_400) }),
    });
    expect((verdict.stopUntil as number) - before).toBeLessThanOrEqual(3_601_000);
  });

  it('goes on unthrottled when the store cannot be reached, and says so', async () => {
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    const { DynamoDBDocumentClient } = await import('@aws-sdk/lib-dynamodb');
    const unreachable = new DynamoDBClient({
      endpoint: 'http://127.0.0.1:9',
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      maxAttempts: 1,
    });
    const events: GovernorEvent[] = [];
    const governor = new ForgeGovernor({
      client: DynamoDBDocumentClient.from(unreachable),
      tableName: table,
      owner: 'unreachable',
      limits: { concurrency: 1, budgets: [] },
      onEvent: (event) => events.push(event),
    });
    const permits = [await governor.acquire('POST'), await governor.acquire('POST')];
    expect(permits.map((permit) => permit.governed)).toEqual([false, false]);
    expect(await permits[0]?.release({ status: 201, headers: headers({}) })).toEqual({});
    expect(events).toEqual([{ type: 'unavailable' }, { type: 'unavailable' }]);
    unreachable.destroy();
  });

  it('keeps its item only while used: a TTL ahead of now', async () => {
    const { owner, governors } = instances(1, {
      limits: { concurrency: 2, budgets: parseBudgets('writes:80/60s') },
    });
    await (await (governors[0] as ForgeGovernor).acquire('POST')).release();
    const expiresAt = (await item(owner))?.expiresAt as number;
    const now = Date.now() / 1000;
    expect(expiresAt).toBeGreaterThan(now + 3600);
    expect(expiresAt).toBeLessThan(now + 3600 + 61);
  });
});

describe('governedCall', () => {
  it('waits out a secondary-limit answer and tries once more', async () => {
    const { governors } = instances(1);
    const answers = [
      { status: 403, headers: headers({ 'retry-after': '1' }) },
      { status: 201, headers: headers({}) },
    ];
    let sends = 0;
    const started = Date.now();
    const result = await governedCall(governors[0] as ForgeGovernor, 'POST', async () => answers[sends++]);
    expect(result?.status).toBe(201);
    expect(sends).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('does not try again when the wait ends past the deadline, nor on a primary limit', async () => {
    const first = instances(1).governors[0] as ForgeGovernor;
    const limited = Object.assign(new Error('forge said 403'), {
      response: { status: 403, headers: headers({ 'retry-after': '30' }) },
    });
    let sends = 0;
    const error = await governedCall(
      first,
      'POST',
      async () => {
        sends += 1;
        throw limited;
      },
      { deadline: Date.now() + 2_000 },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ForgeRateLimitError', limit: 'retry-after' });
    expect(sends).toBe(1);
    const reset = Math.floor(Date.now() / 1000) + 60;
    const primary = await governedCall(instances(1).governors[0] as ForgeGovernor, 'GET', async () => ({
      status: 403,
      headers: headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) }),
    })).catch((e: unknown) => e);
    expect(primary).toMatchObject({ name: 'ForgeRateLimitError', limit: 'primary' });
    // Another error of the call is the caller's, as it was.
    const plain = new Error('not found');
    const other = instances(1).governors[0] as ForgeGovernor;
    await expect(governedCall(other, 'GET', async () => Promise.reject(plain))).rejects.toBe(plain);
  });
});
