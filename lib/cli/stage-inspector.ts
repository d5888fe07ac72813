/**
 * `forgebridge inspect --stage`: the inspector's replay on a deployed stage, as `forgebridge replay --stage`
 * does it: a claim-checked delivery is put on the stage's bus again from its S3 object, any other starts an
 * archive replay of its time window (with `--archive`). Samples are not sent from here: the stage's secrets
 * stay where they are.
 */
import { randomUUID } from 'node:crypto';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { S3Client } from '@aws-sdk/client-s3';
import type { DeliveryDetails } from '../aws/internal.js';
import { type ActionAnswer, HttpError, type InspectorActions } from '../inspector/index.js';
import { archiveReplay, busArnOf, replayName, republish } from './aws-replay.js';
import { awsFailure, type LogTarget } from './delivery-log.js';
import { CliError } from './errors.js';

/** Options of {@link stageActions}. */
export interface StageActionsOptions {
  target: LogTarget;
  stage: string;
  eventBridge: EventBridgeClient;
  s3: S3Client;
  /** The stage's bus: a name or an ARN. */
  busName: string;
  /** The EventBridge source of the entries (`forge.webhooks`). */
  eventSource: string;
  /** The bus archive to replay a delivery without a claim check from. */
  archive?: string | undefined;
  /** Only these rules get an archive replay; none: every rule of the bus. */
  ruleArns: readonly string[];
  /** How far after the delivery an archive replay's window closes, in ms. */
  windowMs: number;
}

/** The replays of a deployed stage, for the inspector. */
export function stageActions(options: StageActionsOptions): InspectorActions {
  const claimCheckOf = (details: DeliveryDetails) =>
    details.records.find((record) => record.payloadRef !== undefined);
  const failed = (error: unknown): HttpError => {
    if (error instanceof HttpError) return error;
    const message =
      error instanceof CliError ? error.message : awsFailure(error, options.target, 'replay').message;
    return new HttpError(502, 'replay_failed', message);
  };
  return {
    label: `stage "${options.stage}"`,
    canReplay: (details) => claimCheckOf(details) !== undefined || options.archive !== undefined,
    async replay(details, freshId): Promise<ActionAnswer> {
      const claimChecked = claimCheckOf(details);
      try {
        if (claimChecked !== undefined) {
          const id = freshId ? randomUUID() : details.deliveryId;
          const done = await republish({
            record: claimChecked,
            deliveryId: id,
            s3: options.s3,
            eventBridge: options.eventBridge,
            eventSource: options.eventSource,
            eventBusName: options.busName,
          });
          return { mode: 'republish', deliveryId: id, replayOf: details.deliveryId, eventId: done.eventId };
        }
        if (options.archive === undefined) {
          throw new HttpError(
            409,
            'no_claim_check',
            'the delivery has no claim check: start "forgebridge inspect" with "--archive <arn>" to replay it from the bus archive',
          );
        }
        if (freshId) {
          throw new HttpError(
            400,
            'invalid_request',
            'a fresh delivery id needs a claim-checked delivery: an archive replay re-sends the events as archived',
          );
        }
        const result = await archiveReplay({
          eventBridge: options.eventBridge,
          archiveArn: options.archive,
          busArn: busArnOf(options.busName, options.archive),
          ruleArns: options.ruleArns,
          receivedAt: details.latest.receivedAt,
          beforeMs: 60_000,
          afterMs: options.windowMs,
          name: replayName(details.deliveryId),
          wait: false,
          pollMs: 3_000,
        });
        return {
          mode: 'archive',
          deliveryId: details.deliveryId,
          name: result.name,
          state: result.state,
          eventStartTime: result.eventStartTime.toISOString(),
          eventEndTime: result.eventEndTime.toISOString(),
        };
      } catch (error) {
        throw failed(error);
      }
    },
  };
}
