// The alarms' settings of a stage (docs/operations.md, "Alarms"), read from its resolved settings, and the
// whole-number check every numeric setting of lib/aws/stage-config.ts goes through.
import type { StageSettingName } from '../stage-config.js';

/** The alarms' settings (docs/operations.md, "Alarms"). */
export interface AlarmSettings {
  email: string;
  /** Hours without a verified delivery before a source's quiet alarm fires; 0: off. */
  quietHours: number;
  signatureFailures: number;
  ingest5xx: number;
  queueAgeSeconds: number;
  subscriberErrors: number;
  failedAtForge: number;
  /** Records of the ordered stream gone to the failure destination before the alarm fires (0: the first one). */
  orderedFailures: number;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** The alarm settings, each checked: a `TypeError` naming the setting. */
export function readAlarmSettings(settings: Record<StageSettingName, string>): AlarmSettings {
  const email = settings.FORGEBRIDGE_ALARM_EMAIL.trim();
  if (email !== '' && !EMAIL.test(email)) {
    throw new TypeError('"FORGEBRIDGE_ALARM_EMAIL" must be one email address');
  }
  return {
    email,
    // A window of 1 hour or longer (an alarm evaluates at most one day); 0 turns the alarm off.
    quietHours: whole(settings, 'FORGEBRIDGE_ALARM_QUIET_HOURS', { max: 24 }),
    signatureFailures: whole(settings, 'FORGEBRIDGE_ALARM_SIGNATURE_FAILURES'),
    ingest5xx: whole(settings, 'FORGEBRIDGE_ALARM_INGEST_5XX'),
    queueAgeSeconds: whole(settings, 'FORGEBRIDGE_ALARM_QUEUE_AGE_SECONDS', { min: 60 }),
    subscriberErrors: whole(settings, 'FORGEBRIDGE_ALARM_SUBSCRIBER_ERRORS'),
    failedAtForge: whole(settings, 'FORGEBRIDGE_ALARM_FAILED_AT_FORGE'),
    orderedFailures: whole(settings, 'FORGEBRIDGE_ALARM_ORDERED_FAILURES'),
  };
}

export function whole(
  settings: Record<StageSettingName, string>,
  name: StageSettingName,
  { min = 0, max = Number.MAX_SAFE_INTEGER } = {},
): number {
  const value = Number(settings[name]);
  if (settings[name].trim() === '' || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`"${name}" must be a whole number from ${min} to ${max}`);
  }
  return value;
}
