/**
 * The DynamoDB tables of forgebridge, defined once: key schema and TTL attribute as `infra/tables.yml`
 * declares them for CloudFormation, and as the local stack and the tests create them in DynamoDB Local.
 */
import type { AttributeDefinition, CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { DedupeTable, TokenTable } from '../lib/aws/constants.js';

/**
 * One table: its partition key (a string) and its TTL attribute.
 *
 * @example
 * ```ts
 * createTableInput(TableDefinitions.dedupe, 'forgebridge-dev-dedupe');
 * ```
 * @see https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-dynamodb-table.html
 */
export interface TableDefinition {
  /** Logical id in serverless.yml (`infra/tables.yml`). */
  logicalId: string;
  partitionKey: string;
  /** Attribute holding the expiry in epoch seconds; TTL is enabled on it. */
  ttlAttribute: string;
  /** A sparse global secondary index (string partition key, number sort key, keys only). */
  index?: { name: string; partitionKey: string; sortKey: string };
}

/**
 * The dedupe table (partition key `pk`, TTL on `expiresAt`, sparse index `queue-due` on `queue` + `dueAt` for
 * the retrier) and the token table (partition key `pk`; the
 * store keeps the token's own expiry in `tokenExpiresAt`, so TTL on `expiresAt` never purges a live token).
 *
 * @example
 * ```ts
 * TableDefinitions.dedupe.ttlAttribute; // 'expiresAt'
 * ```
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html
 */
export const TableDefinitions = {
  dedupe: {
    logicalId: 'DedupeTable',
    partitionKey: DedupeTable.partitionKey,
    ttlAttribute: DedupeTable.ttlAttribute,
    index: {
      name: DedupeTable.queueIndex,
      partitionKey: DedupeTable.queueAttribute,
      sortKey: DedupeTable.dueAttribute,
    },
  },
  tokens: { logicalId: 'TokenTable', partitionKey: TokenTable.partitionKey, ttlAttribute: 'expiresAt' },
} as const satisfies Record<string, TableDefinition>;

/**
 * The `CreateTable` request of a definition: on-demand, one string partition key, and its index if it has one.
 *
 * @example
 * ```ts
 * await dynamodb.send(new CreateTableCommand(createTableInput(TableDefinitions.tokens, 'tokens')));
 * ```
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_CreateTable.html
 */
export function createTableInput(definition: TableDefinition, tableName: string): CreateTableCommandInput {
  const attributes: AttributeDefinition[] = [{ AttributeName: definition.partitionKey, AttributeType: 'S' }];
  const input: CreateTableCommandInput = {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: attributes,
    KeySchema: [{ AttributeName: definition.partitionKey, KeyType: 'HASH' }],
  };
  if ('index' in definition && definition.index !== undefined) {
    const { index } = definition;
    attributes.push(
      { AttributeName: index.partitionKey, AttributeType: 'S' },
      { AttributeName: index.sortKey, AttributeType: 'N' },
    );
    input.GlobalSecondaryIndexes = [
      {
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ];
  }
  return input;
}
