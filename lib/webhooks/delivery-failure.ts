/** A refused delivery as `readDelivery` answers it: status, stable code, and a message safe to show. */
import { ErrorCodes } from './constants.js';
import type { DeliveryFailureStatus, DeliveryResult } from './types.js';

/** A refused delivery. */
export type DeliveryFailure = Extract<DeliveryResult, { ok: false }>;

export function failure(status: DeliveryFailureStatus, code: string, message: string): DeliveryFailure {
  return { ok: false, status, code, message };
}

export function missing(header: string): DeliveryFailure {
  return failure(400, ErrorCodes.missingHeader, `missing "${header}" header`);
}

/** Sender-controlled text for a message: printable ASCII only, at most 64 characters. */
export function safe(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}...` : clean;
}
