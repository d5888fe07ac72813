import { describe, expect, it } from 'vitest';
import type { SelectedDelivery } from '../../../lib/cli/bulk-replay.js';
import {
  archiveArnParts,
  functionArnOf,
  planArchiveReplay,
  stageArchiveArn,
} from '../../../lib/cli/subscriber-archive.js';

const ARN = 'arn:aws:events:eu-west-1:123456789012:archive/forgebridge-prod-archive';
const at = (receivedAt: number) =>
  ({ deliveryId: String(receivedAt), event: 'push', receivedAt, outcome: 'error' }) as SelectedDelivery;

describe('archiveArnParts()', () => {
  it('reads an archive ARN and refuses anything else in one line', () => {
    expect(archiveArnParts(ARN)).toEqual({
      partition: 'aws',
      region: 'eu-west-1',
      account: '123456789012',
      name: 'forgebridge-prod-archive',
    });
    for (const bad of [
      'forgebridge-prod-archive',
      'arn:aws:events:eu-west-1:123456789012:event-bus/forgebridge-prod',
      'arn:aws:events:eu-west-1:1234:archive/x',
      'arn:aws:events:eu-west-1:123456789012:archive/',
      'arn:aws:lambda:eu-west-1:123456789012:archive/x',
    ]) {
      expect(() => archiveArnParts(bad), bad).toThrow('"--archive" must be an EventBridge archive ARN');
    }
    expect(functionArnOf('forgebridge-prod-onPush', archiveArnParts(ARN))).toBe(
      'arn:aws:lambda:eu-west-1:123456789012:function:forgebridge-prod-onPush',
    );
  });
});

describe('planArchiveReplay()', () => {
  it('replays what the archive holds over its window (a minute each side, never after now), the rest directly', () => {
    const now = 10_000_000;
    const plan = planArchiveReplay([at(1_000), at(5_000_000), at(9_990_000)], { heldFrom: 2_000_000 }, now);
    expect(plan.archived.map((d) => d.receivedAt)).toEqual([5_000_000, 9_990_000]);
    expect(plan.direct.map((d) => d.receivedAt)).toEqual([1_000]);
    expect(plan.start).toBe(5_000_000 - 60_000);
    expect(plan.end).toBe(now);
    // Never before what it holds.
    expect(planArchiveReplay([at(2_010_000)], { heldFrom: 2_000_000 }, now).start).toBe(2_000_000);
    expect(planArchiveReplay([at(1_000)], { heldFrom: 2_000_000 }, now)).toMatchObject({
      start: undefined,
      end: undefined,
    });
  });
});

describe('stageArchiveArn()', () => {
  it('takes --archive, else the stack output; neither is a usage error naming both ways out', () => {
    expect(stageArchiveArn(ARN, undefined, 'stage "prod"')).toBe(ARN);
    expect(stageArchiveArn(undefined, { BusArchiveArn: ARN }, 'stage "prod"')).toBe(ARN);
    expect(() => stageArchiveArn(undefined, { BusArchiveArn: '' }, 'stage "prod"')).toThrow(
      /^stage "prod" has no archive .*"--archive <arn>", or "--via invoke"/,
    );
  });
});
