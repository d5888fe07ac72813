// `forgebridge secret rotate` / `finish` on the local stack's source (its state file) with the delivery log on
// DynamoDB Local: finish reads the log's records, written through DeliveryLog.record as the ingest writes them,
// and removes the old secret only once the source's last N verified deliveries used the new one.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TableDefinitions } from '../../../infra/tables.js';
import { DeliveryLog } from '../../../lib/aws/delivery-log/index.js';
import { createTable } from '../../../local-stack/dynamodb.js';
import { useDynamoDbLocal } from '../../helpers/aws-local.js';
import { runMain } from '../../helpers/cli-in-process.js';

const ddb = useDynamoDbLocal();
const OLD = 'local-github-secret-old';
let dir: string;
let stateFile: string;
let tableName: string;
let log: DeliveryLog;

function writeState(secret: string): void {
  const source = { name: 'github', forge: 'github', url: 'http://127.0.0.1:9/webhooks/github', secret };
  writeFileSync(
    stateFile,
    JSON.stringify({ webhookUrl: 'http://127.0.0.1:9/webhooks', secret: 'x', sources: [source] }),
  );
}

async function delivered(secretIndex: number, source = 'github'): Promise<void> {
  const result = await log.record({
    deliveryId: randomUUID(),
    event: 'push',
    forge: 'github',
    source,
    verdict: 'verified',
    httpStatus: 202,
    outcome: 'published',
    secretIndex,
  });
  expect(result.ok).toBe(true);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'forgebridge-rotation-'));
  stateFile = join(dir, 'local-stack.json');
  tableName = `deliveries-${randomUUID().slice(0, 8)}`;
  await createTable(ddb.endpoint, TableDefinitions.deliveries, tableName);
  log = new DeliveryLog({ client: ddb.client(), tableName });
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('forgebridge secret rotate / finish on the local stack', () => {
  it('rotates, refuses to finish until the forge signs with the new secret, then finishes', async () => {
    writeState(OLD);
    const env = { FORGEBRIDGE_STATE_FILE: stateFile };
    const rotated = await runMain(['secret', 'rotate', '--source', 'github'], env);
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    const fresh = /^ {2}([0-9a-f]{64})$/m.exec(rotated.stdout)?.[1] as string;
    expect(fresh).toMatch(/^[0-9a-f]{64}$/);
    // The list goes to a file of the user's, never into a command line to paste (and the shell's history).
    const listFile = join(dir, 'secrets', 'github.env');
    expect(rotated.stdout).toContain(`restart it with: (set -a; . ${listFile}; set +a; npm start)`);
    expect(rotated.stdout).not.toContain(OLD);
    expect(rotated.stdout.split(fresh)).toHaveLength(2);
    expect(readFileSync(listFile, 'utf8')).toBe(`FORGEBRIDGE_WEBHOOK_SECRET_GITHUB='${OLD},${fresh}'\n`);
    expect(statSync(listFile).mode & 0o777).toBe(0o600);

    // The stack restarted with the list: its state file says so.
    writeState(`${OLD},${fresh}`);
    const finish = [
      'secret',
      'finish',
      '--source',
      'github',
      '--endpoint',
      ddb.endpoint,
      '--table',
      tableName,
    ];
    const finishArgs = [...finish, '--deliveries', '3'];

    await delivered(0);
    await delivered(1);
    await delivered(1);
    await delivered(0, 'gitlab'); // another source's deliveries do not count
    const early = await runMain(finishArgs, env);
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(
      /^forgebridge: old secret kept: 1 of the source's last 3 verified deliveries were signed with the old secret/,
    );
    expect(early.stderr).not.toContain(fresh);

    await delivered(1);
    const done = await runMain(finishArgs, env);
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('the last 3 verified deliveries of source "github" used the new secret');
    expect(done.stdout).not.toContain(fresh);
    expect(readFileSync(join(dir, 'secrets', 'github.env'), 'utf8')).toBe(
      `FORGEBRIDGE_WEBHOOK_SECRET_GITHUB='${fresh}'\n`,
    );

    // A second rotation [fresh, next] before any new delivery: the first rotation's rows (position 1 = fresh)
    // prove nothing about next, and finish must not store [next] while the forge signs with fresh.
    writeState(fresh);
    const again = await runMain(['secret', 'rotate', '--source', 'github'], env);
    expect(again.code).toBe(0);
    const next = /^ {2}([0-9a-f]{64})$/m.exec(again.stdout)?.[1] as string;
    await new Promise((resolve) => setTimeout(resolve, 5));
    writeState(`${fresh},${next}`);
    const locked = await runMain(finishArgs, env);
    expect(locked.code).toBe(1);
    expect(locked.stderr).toMatch(
      /^forgebridge: old secret kept: the log holds 0 verified deliveries of the source since /,
    );
    expect(readFileSync(join(dir, 'secrets', 'github.env'), 'utf8')).toContain(`'${fresh},${next}'`);
  });

  it('refuses to finish with too few deliveries in the log, and without a rotation', async () => {
    writeState(`${OLD},another-new-secret`);
    const env = { FORGEBRIDGE_STATE_FILE: stateFile };
    const other = `deliveries-${randomUUID().slice(0, 8)}`;
    await createTable(ddb.endpoint, TableDefinitions.deliveries, other);
    const args = ['secret', 'finish', '--source', 'github', '--endpoint', ddb.endpoint, '--table', other];
    const empty = await runMain(args, env);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(
      /the log holds 0 verified deliveries of the source since \S+ \(when the current list took effect\), 5 wanted/,
    );
    writeState(OLD);
    const none = await runMain(args, env);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no rotation under way');
  });
});
