// The arithmetic of `npm run bench -- cost`: list prices, the billed units AWS derives from each request
// (PutEvents 64 KB chunks, DynamoDB write units from item sizes, S3 requests, CloudWatch Logs bytes), and a
// Lambda duration model from measured CPU time. Pure functions, checked by test/unit/bench/cost-model.test.ts.

/** us-east-1 list prices, arm64 Lambda, first tier; docs/cost.md holds the same table with its date and sources. */
export const Prices = {
  date: '2026-11-26',
  /** Lambda, per request. */
  lambdaRequest: 0.2 / 1e6,
  /** Lambda arm64 duration, per GB-second (first 7.5 billion GB-s a month). */
  lambdaGbSecond: 0.0000133334,
  /** HTTP API, per request up to 512 KB (each further 512 KB is billed as another request). */
  httpApiRequest: 1.0 / 1e6,
  /** Lambda Function URL: no charge beyond the function's own. */
  functionUrlRequest: 0,
  /** EventBridge custom event, per 64 KB chunk of a PutEvents entry. */
  putEventsChunk: 1.0 / 1e6,
  /** DynamoDB on-demand, per write request unit (1 KB). */
  dynamoDbWriteUnit: 0.625 / 1e6,
  /** DynamoDB on-demand, per read request unit (4 KB strongly consistent). */
  dynamoDbReadUnit: 0.125 / 1e6,
  /** S3 Standard PUT, per request. */
  s3Put: 0.005 / 1000,
  /** S3 Standard GET, per request. */
  s3Get: 0.0004 / 1000,
  /** CloudWatch Logs standard ingestion, per GB. */
  logsGb: 0.5,
  /** Kinesis Data Streams provisioned, per PUT payload unit (25 KB of a record). */
  kinesisPutUnit: 0.014 / 1e6,
  /** Kinesis Data Streams provisioned, per shard-hour: a fixed cost, used or not. */
  kinesisShardHour: 0.015,
} as const;
export type PriceTable = {
  readonly [K in keyof typeof Prices]: (typeof Prices)[K] extends string ? string : number;
};

/** The payload units (25 KB each, rounded up) AWS bills one Kinesis record for. */
export const kinesisPutUnits = (recordBytes: number) => Math.max(1, Math.ceil(recordBytes / (25 * 1024)));

/** What one Lambda invocation adds to the logs besides what the function prints: START, END and REPORT lines. */
export const LAMBDA_PLATFORM_LOG_BYTES = 260;
/** Memory at which a Lambda function has one full vCPU: below it, CPU time stretches by 1769 / memory. */
export const FULL_VCPU_MB = 1769;

/** Assumed round trip of each call inside the region, in ms (the function waits, and is billed, for it). */
export const CallLatencyMs = {
  dynamodb: 6,
  eventbridge: 12,
  kinesis: 10,
  s3: 20,
  /** Extra S3 time per MB moved. */
  s3PerMb: 15,
} as const;

/** The size DynamoDB bills for an attribute value in its wire form (`{ S: '...' }`, `{ M: {...} }`). */
export function attributeValueBytes(value: Record<string, unknown>): number {
  const [type, inner] = Object.entries(value)[0] ?? ['NULL', true];
  switch (type) {
    case 'S':
      return Buffer.byteLength(inner as string);
    case 'N': {
      const digits = String(inner).replace(/^[-+]?0*|[.eE].*$/g, '').length || 1;
      return Math.ceil(digits / 2) + 1;
    }
    case 'B':
      return typeof inner === 'string'
        ? Buffer.from(inner, 'base64').byteLength
        : (inner as Uint8Array).byteLength;
    case 'BOOL':
    case 'NULL':
      return 1;
    case 'SS':
      return (inner as string[]).reduce((sum, item) => sum + Buffer.byteLength(item), 0);
    case 'NS':
      return (inner as string[]).reduce((sum, item) => sum + attributeValueBytes({ N: item }), 0);
    case 'L': {
      const items = inner as Record<string, unknown>[];
      return 3 + items.reduce((sum, item) => sum + 1 + attributeValueBytes(item), 0);
    }
    case 'M':
      return (
        3 + itemBytes(inner as Record<string, Record<string, unknown>>) + Object.keys(inner as object).length
      );
    default:
      throw new TypeError(`unknown DynamoDB attribute type ${type}`);
  }
}

/** An item's size as DynamoDB bills it: each attribute's name (UTF-8) plus its value. */
export function itemBytes(item: Record<string, Record<string, unknown>>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item))
    bytes += Buffer.byteLength(name) + attributeValueBytes(value);
  return bytes;
}

/** Write request units of one write: 1 per started KB of the larger of the item before and after, at least 1. */
export function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 1024));
}

/** EventBridge bills each PutEvents entry per started 64 KB. */
export function putEventsChunks(entryBytes: number): number {
  return Math.max(1, Math.ceil(entryBytes / (64 * 1024)));
}

/** An HTTP API request is metered per started 512 KB. */
export function httpApiRequests(requestBytes: number): number {
  return Math.max(1, Math.ceil(requestBytes / (512 * 1024)));
}

/**
 * Billed Lambda milliseconds: the CPU time measured on one full core, stretched by the CPU share the memory size
 * gives, plus the waits on AWS calls; Lambda bills per started ms.
 */
export function billedMs(cpuMs: number, waitMs: number, memoryMb: number): number {
  const stretch = Math.max(1, FULL_VCPU_MB / memoryMb);
  return Math.ceil(cpuMs * stretch + waitMs);
}

/** Everything one delivery was billed for, summed over the functions it went through. */
export interface Units {
  /** Lambda invocations (ingest and subscribers). */
  invocations: number;
  /** Lambda GB-seconds. */
  gbSeconds: number;
  /** Requests metered by the ingress (HTTP API: per 512 KB; 0 for a Function URL). */
  ingressRequests: number;
  putEventsChunks: number;
  writeUnits: number;
  readUnits: number;
  s3Puts: number;
  s3Gets: number;
  logBytes: number;
  /** Kinesis PUT payload units (25 KB each) of the ordered stream. */
  kinesisPutUnits: number;
}

export const noUnits = (): Units => ({
  invocations: 0,
  gbSeconds: 0,
  ingressRequests: 0,
  putEventsChunks: 0,
  writeUnits: 0,
  readUnits: 0,
  s3Puts: 0,
  s3Gets: 0,
  logBytes: 0,
  kinesisPutUnits: 0,
});

export function addUnits(a: Units, b: Units): Units {
  const sum = noUnits();
  for (const key of Object.keys(sum) as (keyof Units)[]) sum[key] = a[key] + b[key];
  return sum;
}

/** One line of the bill: what, how many units per delivery, the unit price, dollars per million deliveries. */
export interface CostLine {
  item: string;
  unitsPerDelivery: number;
  unitPrice: number;
  perMillion: number;
}

/** The bill of `deliveries` deliveries whose units were summed in `units`, per million deliveries. */
export function costLines(
  units: Units,
  deliveries: number,
  ingress: 'http-api' | 'function-url',
  prices: PriceTable = Prices,
): CostLine[] {
  const line = (item: string, total: number, unitPrice: number): CostLine => {
    const unitsPerDelivery = total / deliveries;
    return { item, unitsPerDelivery, unitPrice, perMillion: unitsPerDelivery * unitPrice * 1e6 };
  };
  return [
    ingress === 'http-api'
      ? line('HTTP API requests', units.ingressRequests, prices.httpApiRequest)
      : line('Function URL requests', deliveries, prices.functionUrlRequest),
    line('Lambda requests', units.invocations, prices.lambdaRequest),
    line('Lambda GB-seconds (arm64)', units.gbSeconds, prices.lambdaGbSecond),
    line('EventBridge PutEvents 64 KB chunks', units.putEventsChunks, prices.putEventsChunk),
    line('DynamoDB write units', units.writeUnits, prices.dynamoDbWriteUnit),
    line('DynamoDB read units', units.readUnits, prices.dynamoDbReadUnit),
    line('S3 PUT requests', units.s3Puts, prices.s3Put),
    line('S3 GET requests', units.s3Gets, prices.s3Get),
    line('CloudWatch Logs GB ingested', units.logBytes / 1024 ** 3, prices.logsGb),
    ...(units.kinesisPutUnits > 0
      ? [line('Kinesis PUT payload units (25 KB)', units.kinesisPutUnits, prices.kinesisPutUnit)]
      : []),
  ];
}

export const total = (lines: readonly CostLine[]) => lines.reduce((sum, line) => sum + line.perMillion, 0);
