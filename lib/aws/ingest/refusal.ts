/**
 * The refusal side channel: what a request {@link forgeWebhook} refused said of itself (its unverified headers,
 * and for a failed signature the diagnosis), kept beside the thrown error and computed only when asked for.
 */
import {
  type DeliveryOptions,
  diagnoseSignature,
  ErrorCodes,
  type Forge,
  resolvePreset,
  routeForgeEvent,
  type SignatureDiagnosis,
} from '../../webhooks/index.js';
import type { HeaderMap } from '../types.js';

/**
 * What a refused request said of itself, read from its headers (unverified), and for a failed signature the
 * diagnosis; {@link refusalOf} computes it on demand, so a refusal costs nothing more unless someone asks.
 */
export interface RefusalFacts {
  forge: Forge;
  /** The delivery id header, when present. */
  deliveryId?: string | undefined;
  /** The catalogue event name the headers (and body, when it is JSON) claim. */
  event?: string | undefined;
  action?: string | undefined;
  nativeEvent?: string | undefined;
  nativeAction?: string | undefined;
  /** `diagnoseSignature`'s finding for a signature refused or missing. */
  diagnosis?: SignatureDiagnosis | undefined;
}

const refusals = new WeakMap<object, () => RefusalFacts>();

/** The facts of a request `forgeWebhook` refused, computed now; `undefined` for any other error. */
export function refusalOf(error: unknown): RefusalFacts | undefined {
  const facts = typeof error === 'object' && error !== null ? refusals.get(error) : undefined;
  return facts?.();
}

/** Keeps how to compute a refused request's facts beside the error `forgeWebhook` throws for it. */
export function keepRefusal(error: object, facts: () => RefusalFacts): void {
  refusals.set(error, facts);
}

/** Bodies up to this size are parsed to name a refused delivery's action; a larger one keeps only its event. */
const MAX_PARSED_REFUSAL_BYTES = 1024 * 1024;

function firstHeader(headers: HeaderMap, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = Object.hasOwn(headers, name) ? headers[name] : undefined;
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string' && first !== '') return first;
  }
  return undefined;
}

export function describeRefusal(
  code: string,
  request: { headers: HeaderMap; body: Buffer },
  options: Omit<DeliveryOptions, 'secret'>,
  secrets: string | readonly string[],
): RefusalFacts {
  const preset = resolvePreset(options.forge);
  const headerNames = options.headers ?? {};
  const eventHeaders = headerNames.event ? [headerNames.event.toLowerCase()] : preset.eventHeaders;
  const deliveryHeaders = headerNames.delivery
    ? [headerNames.delivery.toLowerCase()]
    : preset.deliveryHeaders;
  const facts: RefusalFacts = {
    forge: preset.forge,
    deliveryId: firstHeader(request.headers, deliveryHeaders),
  };
  const nativeName = firstHeader(request.headers, eventHeaders);
  if (nativeName !== undefined) {
    let payload: unknown;
    if (request.body.byteLength <= MAX_PARSED_REFUSAL_BYTES) {
      try {
        payload = JSON.parse(request.body.toString('utf8'));
      } catch {
        payload = undefined;
      }
    }
    const route = routeForgeEvent(preset.forge, nativeName, payload);
    facts.event = route.name;
    facts.action = route.action;
    facts.nativeEvent = nativeName;
    facts.nativeAction = route.nativeAction;
  }
  // The diagnosis knows the preset's signature headers only: with renamed ones it would misread the request.
  const customSignatureHeaders =
    headerNames.signature256 !== undefined ||
    headerNames.signature !== undefined ||
    headerNames.token !== undefined;
  const signatureCodes: readonly string[] = [
    ErrorCodes.invalidSignature,
    ErrorCodes.missingHeader,
    ErrorCodes.invalidHeader,
    ErrorCodes.staleTimestamp,
    ErrorCodes.futureTimestamp,
  ];
  if (signatureCodes.includes(code) && !customSignatureHeaders) {
    try {
      const diagnosis = diagnoseSignature({
        body: request.body,
        headers: request.headers,
        secrets: typeof secrets === 'string' ? secrets : [...secrets],
        forge: preset.forge,
        allowSha1: options.allowSha1 ?? true,
        ...(options.toleranceSeconds === undefined ? {} : { toleranceSeconds: options.toleranceSeconds }),
        ...(options.verifyWith === undefined ? {} : { verifyWith: options.verifyWith }),
      });
      // A missing event or delivery header with a good signature is no signature matter.
      if (diagnosis.verdict !== 'verified') facts.diagnosis = diagnosis;
    } catch {
      // No diagnosis is better than a failed log record.
    }
  }
  return facts;
}
