/**
 * Shared shapes of the AWS-facing pieces.
 */

/** HTTP headers as API Gateway and Node hand them over: any case, single or repeated values. */
export type HeaderMap = Record<string, string | string[] | undefined>;

/** The transport-neutral request the ingest handles (what `fromApiGatewayEvent` produces). */
export interface IngestRequest {
  /** HTTP method; when given and not POST the answer is 404. */
  method?: string;
  headers: HeaderMap;
  /** The body as API Gateway passes it: raw text, or base64 when `isBase64Encoded`. */
  body: string;
  isBase64Encoded?: boolean;
}

/** The ingest's answer, directly usable as an API Gateway (1.0 and 2.0) or Function URL result. */
export interface IngestResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** A verified delivery, ready to publish. */
export interface Delivery {
  /** The delivery id (`X-Forge-Delivery`). */
  id: string;
  /** The event name (`X-Forge-Event`), e.g. `issues`. */
  name: string;
  /** The parsed JSON payload. */
  payload: unknown;
  /** The exact bytes received, stored as-is by the claim check. */
  rawBody: Uint8Array;
  /**
   * The forge preset it was read with. When set, `action` is the delivery's action (the catalogue's, mapped
   * from the forge's own) instead of `payload.action`.
   */
  forge?: string | undefined;
  /** The catalogue action (`opened`), when `forge` is set. */
  action?: string | undefined;
  /** The configured source it came in through (`/webhooks/{source}`; `default` for `/webhooks`). */
  source?: string | undefined;
  /**
   * The hook that sent it, where the forge names one (GitHub's `X-GitHub-Hook-ID`): part of its identity, since
   * GitHub gives one event the same delivery id at every hook ({@link dedupeKeyOf}).
   */
  hook?: string | undefined;
  /** The forge's own event name (`Merge Request Hook`). */
  nativeEvent?: string | undefined;
  /** The forge's own action (`open`). */
  nativeAction?: string | undefined;
  /**
   * How the delivery was proven to come from the forge when no signature was checked: `forge-api`, fetched by
   * the reconciler over the forge's authenticated API (a delivery too large for the ingest).
   */
  verified?: 'forge-api' | undefined;
}

/** Where a claim-checked payload lives. Sits at `detail.payloadRef`. */
export interface PayloadRef {
  bucket: string;
  key: string;
  /** Size of the raw body in bytes. */
  bytes: number;
  /** Lowercase hex SHA-256 of the raw body. */
  sha256: string;
}

/** The `detail` of every published event. */
export interface DeliveryDetail {
  delivery: string;
  event: string;
  action?: string;
  /** The forge preset the delivery was read with (`gitlab`). */
  forge?: string;
  /** The configured source it came in through (`default` for `/webhooks`). */
  source?: string;
  /** The hook that sent it (GitHub's `X-GitHub-Hook-ID`), where the forge names one: two Apps on one URL differ here. */
  hook?: string;
  /** The forge's own event name (`Merge Request Hook`). */
  nativeEvent?: string;
  /** The forge's own action (`open`), when there is one. */
  nativeAction?: string;
  /** `forge-api` when the reconciler fetched it over the forge's authenticated API instead of a signature check. */
  verified?: 'forge-api';
  /** The whole payload, or only the routing fields when `payloadRef` is set. */
  payload: unknown;
  payloadRef?: PayloadRef;
  /** Set when `forgebridge replay --since` put the delivery on the bus again: see {@link ReplayMark}. */
  replay?: ReplayMark;
}

/**
 * What a delivery put on the bus again by `forgebridge replay --since` (without `--subscriber`) carries, under its
 * original delivery id: the run, when it was sent, and the subscribers that had reported `ok` for it by then (their
 * names in the delivery log), so each of those can tell it has already taken it.
 */
export interface ReplayMark {
  /** The replay run's id: every delivery of one run carries the same. */
  run: string;
  /** When the run sent it (ISO 8601). */
  at: string;
  /** The subscribers that had reported `ok` for the delivery when it was sent again. */
  ok: string[];
}

/** The PutEvents request entry for one delivery (the SDK's `PutEventsRequestEntry`, with the fields we set). */
export interface DeliveryEntry {
  Source: string;
  DetailType: string;
  Detail: string;
  EventBusName?: string;
  Resources?: string[];
  /** The X-Ray trace header of the invocation that publishes it: the subscriber's segment joins that trace. */
  TraceHeader?: string;
}

/**
 * The minimal logger the AWS pieces write to (powertools `Logger` and `console` both fit).
 * Nothing secret is ever passed to it.
 */
export interface LoggerLike {
  info(message: string, ...extra: unknown[]): void;
  warn(message: string, ...extra: unknown[]): void;
  error(message: string, ...extra: unknown[]): void;
}

/**
 * What the token store needs of a token: `AccessToken` from `lib/oauth2` fits.
 */
export interface TokenLike {
  readonly token: string;
  /** Epoch seconds; absent for a token that never expires. */
  readonly expiresAt?: number | undefined;
  readonly refreshToken?: string | undefined;
  toHash(): Record<string, unknown>;
}

/**
 * Identifies one stored token: the DynamoDB partition key is `provider#clientId#scope`.
 */
export interface TokenKey {
  provider: string;
  clientId: string;
  /** Space-separated scopes; empty or absent means the client's default scope. */
  scope?: string;
}
