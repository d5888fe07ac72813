// The arithmetic of the cost bench (bench/cost-model.ts) on a tiny fixed mix: item sizes as DynamoDB bills
// them, the units each request is billed, and the bill per million that follows.
import { describe, expect, it } from 'vitest';
import {
  attributeValueBytes,
  billedMs,
  costLines,
  httpApiRequests,
  itemBytes,
  noUnits,
  Prices,
  putEventsChunks,
  total,
  writeUnits,
} from '../../../bench/cost-model.js';

describe('DynamoDB item size', () => {
  it('counts names and values the way DynamoDB bills them', () => {
    // pk (2) + 'delivery#1' (10) + n (1) + 12345 (3 digits of precision pairs: ceil(5/2)+1 = 4) + ok (2) + BOOL (1)
    expect(itemBytes({ pk: { S: 'delivery#1' }, n: { N: '12345' }, ok: { BOOL: true } })).toBe(20);
    // A map: 3 bytes of its own, each entry's name and value, 1 byte per entry.
    expect(attributeValueBytes({ M: { a: { S: 'xy' } } })).toBe(3 + 1 + 2 + 1);
    expect(attributeValueBytes({ L: [{ S: 'abc' }, { NULL: true }] })).toBe(3 + (1 + 3) + (1 + 1));
    expect(attributeValueBytes({ B: Buffer.from('hello').toString('base64') })).toBe(5);
    expect(attributeValueBytes({ S: 'é' })).toBe(2);
  });

  it('bills a write per started kilobyte, at least one unit', () => {
    expect(writeUnits(0)).toBe(1);
    expect(writeUnits(1024)).toBe(1);
    expect(writeUnits(1025)).toBe(2);
    expect(writeUnits(20 * 1024 + 1)).toBe(21);
  });
});

describe('request units', () => {
  it('bills PutEvents per started 64 KB and an HTTP API request per started 512 KB', () => {
    expect(putEventsChunks(100)).toBe(1);
    expect(putEventsChunks(64 * 1024)).toBe(1);
    expect(putEventsChunks(64 * 1024 + 1)).toBe(2);
    expect(putEventsChunks(1024 * 1024)).toBe(16);
    expect(httpApiRequests(512 * 1024)).toBe(1);
    expect(httpApiRequests(512 * 1024 + 1)).toBe(2);
  });

  it('stretches CPU time below one full vCPU and adds the waits, per started ms', () => {
    expect(billedMs(10, 20, 1769)).toBe(30);
    expect(billedMs(10, 20, 3538)).toBe(30);
    expect(billedMs(1, 0, 128)).toBe(14); // 1769 / 128 = 13.8
    expect(billedMs(2.5, 10.2, 512)).toBe(Math.ceil(2.5 * (1769 / 512) + 10.2));
  });
});

describe('the bill of a tiny fixed mix', () => {
  // Two deliveries: one small, one claim-checked. Both through the ingest and one subscriber.
  const units = {
    ...noUnits(),
    invocations: 4,
    gbSeconds: 0.1,
    ingressRequests: 3,
    putEventsChunks: 2,
    writeUnits: 10,
    readUnits: 0,
    s3Puts: 1,
    s3Gets: 1,
    logBytes: 1024 ** 3 / 1000,
  };

  it('prices each line per million deliveries', () => {
    const lines = costLines(units, 2, 'http-api');
    const byItem = Object.fromEntries(lines.map((line) => [line.item, line.perMillion]));
    expect(byItem['HTTP API requests']).toBeCloseTo(1.5, 10); // 1.5 per delivery × $1 per million
    expect(byItem['Lambda requests']).toBeCloseTo(0.4, 10);
    expect(byItem['Lambda GB-seconds (arm64)']).toBeCloseTo(0.05 * 0.0000133334 * 1e6, 10);
    expect(byItem['EventBridge PutEvents 64 KB chunks']).toBeCloseTo(1, 10);
    expect(byItem['DynamoDB write units']).toBeCloseTo(5 * 0.625, 10);
    expect(byItem['S3 PUT requests']).toBeCloseTo(2.5, 10);
    expect(byItem['S3 GET requests']).toBeCloseTo(0.2, 10);
    expect(byItem['CloudWatch Logs GB ingested']).toBeCloseTo((1 / 2000) * 0.5 * 1e6, 10);
    expect(total(lines)).toBeCloseTo(1.5 + 0.4 + 0.05 * 0.0000133334 * 1e6 + 1 + 3.125 + 2.5 + 0.2 + 250, 10);
  });

  it('charges nothing for a Function URL and one request per delivery', () => {
    const [line] = costLines(units, 2, 'function-url');
    expect(line).toEqual({ item: 'Function URL requests', unitsPerDelivery: 1, unitPrice: 0, perMillion: 0 });
    expect(total(costLines(units, 2, 'http-api')) - total(costLines(units, 2, 'function-url'))).toBeCloseTo(
      1.5 * Prices.httpApiRequest * 1e6,
      10,
    );
  });
});
