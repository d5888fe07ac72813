import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { createTableInput, TableDefinitions } from '../../../infra/tables.js';

/** js-yaml (already in the tree through osls) with CloudFormation's short tags read as plain values. */
interface JsYaml {
  Type: new (
    tag: string,
    options: { kind: 'scalar' | 'sequence' | 'mapping'; construct: (data: unknown) => unknown },
  ) => unknown;
  DEFAULT_SCHEMA: { extend(types: unknown[]): unknown };
  load(text: string, options: { schema: unknown }): unknown;
}
const yaml = createRequire(import.meta.url)('js-yaml') as JsYaml;
const cfnTags = ['!Ref', '!GetAtt', '!Sub', '!Join', '!Select', '!If', '!Equals', '!Split'].flatMap((tag) =>
  (['scalar', 'sequence', 'mapping'] as const).map(
    (kind) => new yaml.Type(tag, { kind, construct: (data) => data }),
  ),
);

interface TableResource {
  Properties: {
    KeySchema: { AttributeName: string; KeyType: string }[];
    AttributeDefinitions: { AttributeName: string; AttributeType: string }[];
    TimeToLiveSpecification?: { AttributeName: string; Enabled: boolean };
    GlobalSecondaryIndexes?: unknown[];
  };
}

function tablesYml(): Record<string, TableResource> {
  const text = readFileSync(new URL('../../../infra/tables.yml', import.meta.url), 'utf8');
  const document = yaml.load(text, { schema: yaml.DEFAULT_SCHEMA.extend(cfnTags) }) as {
    Resources: Record<string, TableResource>;
  };
  return document.Resources;
}

describe('table definitions', () => {
  it('create on-demand tables with one string partition key; the dedupe table with its sparse queue index', () => {
    expect(createTableInput(TableDefinitions.dedupe, 'dedupe')).toEqual({
      TableName: 'dedupe',
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'queue', AttributeType: 'S' },
        { AttributeName: 'dueAt', AttributeType: 'N' },
      ],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'queue-due',
          KeySchema: [
            { AttributeName: 'queue', KeyType: 'HASH' },
            { AttributeName: 'dueAt', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
    });
    expect(createTableInput(TableDefinitions.tokens, 'tokens')).toEqual({
      TableName: 'tokens',
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    });
  });

  it('create the delivery log with pk + sk and its by-day index holding the summaries only', () => {
    const input = createTableInput(TableDefinitions.deliveries, 'deliveries');
    expect(input).toMatchObject({
      TableName: 'deliveries',
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
        { AttributeName: 'day', AttributeType: 'S' },
        { AttributeName: 'at', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    });
    const [index] = input.GlobalSecondaryIndexes ?? [];
    expect(index?.IndexName).toBe('by-day');
    expect(index?.KeySchema).toEqual([
      { AttributeName: 'day', KeyType: 'HASH' },
      { AttributeName: 'at', KeyType: 'RANGE' },
    ]);
    expect(index?.Projection?.ProjectionType).toBe('INCLUDE');
    const projected = index?.Projection?.NonKeyAttributes ?? [];
    expect(projected).toEqual(
      expect.arrayContaining(['deliveryId', 'event', 'outcome', 'verdict', 'expiresAt']),
    );
    for (const heavy of ['headers', 'body', 'subscribers']) expect(projected).not.toContain(heavy);
    expect(TableDefinitions.deliveries.ttlAttribute).toBe('expiresAt');
  });

  for (const definition of Object.values(TableDefinitions)) {
    it(`match ${definition.logicalId} in infra/tables.yml (key schema and TTL attribute)`, () => {
      const resource = tablesYml()[definition.logicalId];
      expect(resource).toBeDefined();
      const input = createTableInput(definition, 'any');
      expect(resource?.Properties.KeySchema).toEqual(input.KeySchema);
      expect(resource?.Properties.KeySchema?.[0]).toEqual({
        AttributeName: definition.partitionKey,
        KeyType: 'HASH',
      });
      expect(resource?.Properties.AttributeDefinitions).toEqual(input.AttributeDefinitions);
      expect(resource?.Properties.GlobalSecondaryIndexes).toEqual(input.GlobalSecondaryIndexes);
      expect(resource?.Properties.TimeToLiveSpecification).toEqual({
        AttributeName: definition.ttlAttribute,
        Enabled: true,
      });
    });
  }
});
