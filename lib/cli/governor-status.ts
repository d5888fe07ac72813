/**
 * `forgebridge status`'s forge API line: each token owner's governor item in the token table (`governor#<owner>`),
 * read with one scan of that small table: the calls in flight now, a stop in force (a `retry-after` or a primary
 * budget at 0 that the forge announced), and the primary budget as its last answer stated it.
 */
import { type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { GOVERNOR_KEY_PREFIX } from '../aws/internal.js';

/** One owner's governor, as `status` shows it. */
export interface GovernorOwnerStatus {
  /** The token table key of the token (`provider#clientId#scope`, or a GitHub App installation's). */
  owner: string;
  /** Slots held whose lease has not expired. */
  inFlight: number;
  /** No call of this owner goes out before `until` (ISO), for `reason`. */
  stop?: { until: string; reason: string };
  /** The primary budget as the forge's last answer stated it. */
  primary?: { remaining: number; total?: number; resetAt: string };
}

/** Most scan pages (1 MB each) read; a token table holds a few items per token. */
const MAX_PAGES = 10;

/** Every owner's governor item of `tableName`, at `now` (epoch ms), oldest key first. */
export async function governorStatus(
  client: DynamoDBClient,
  tableName: string,
  now: number,
): Promise<GovernorOwnerStatus[]> {
  const owners: GovernorOwnerStatus[] = [];
  let start: Record<string, never> | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const output = await client.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'begins_with(pk, :prefix)',
        ExpressionAttributeValues: { ':prefix': { S: GOVERNOR_KEY_PREFIX } },
        ...(start === undefined ? {} : { ExclusiveStartKey: start }),
      }),
    );
    for (const raw of output.Items ?? []) owners.push(ownerOf(unmarshall(raw), now));
    start = output.LastEvaluatedKey as Record<string, never> | undefined;
    if (start === undefined) break;
  }
  return owners.sort((a, b) => a.owner.localeCompare(b.owner));
}

function ownerOf(item: Record<string, unknown>, now: number): GovernorOwnerStatus {
  const leases = (item.leases ?? {}) as Record<string, unknown>;
  const status: GovernorOwnerStatus = {
    owner: String(item.pk).slice(GOVERNOR_KEY_PREFIX.length),
    inFlight: Object.values(leases).filter((until) => typeof until === 'number' && until > now).length,
  };
  if (typeof item.stopUntil === 'number' && item.stopUntil > now) {
    status.stop = {
      until: new Date(item.stopUntil).toISOString(),
      reason: String(item.stopReason ?? 'retry-after'),
    };
  }
  if (typeof item.remaining === 'number' && typeof item.resetAt === 'number' && item.resetAt > now) {
    status.primary = {
      remaining: item.remaining,
      ...(typeof item.total === 'number' ? { total: item.total } : {}),
      resetAt: new Date(item.resetAt).toISOString(),
    };
  }
  return status;
}

/** The owner's line: `3 in flight, stopped until … (retry-after), 4211 of 5000 left until …`. */
export function governorLine(status: GovernorOwnerStatus): string {
  const parts = [`${status.inFlight} in flight`];
  if (status.stop !== undefined) parts.push(`stopped until ${status.stop.until} (${status.stop.reason})`);
  if (status.primary !== undefined) {
    const { remaining, total, resetAt } = status.primary;
    parts.push(`${remaining}${total === undefined ? '' : ` of ${total}`} left until ${resetAt}`);
  }
  return `${status.owner}: ${parts.join(', ')}`;
}
