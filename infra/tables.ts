/**
 * The DynamoDB tables of forgebridge, defined once: key schema and TTL attribute as `infra/tables.yml`
 * declares them for CloudFormation, and as the local stack and the tests create them in DynamoDB Local.
 */
import type { AttributeDefinition, CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { DedupeTable, DeliveryLogTable, TokenTable } from '../lib/aws/core/index.js';

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
  /** A string sort key, when the table has one. */
  sortKey?: string;
  /** Attribute holding the expiry in epoch seconds; TTL is enabled on it. */
  ttlAttribute: string;
  /**
   * A global secondary index: string partition key, a number sort key unless `sortKeyType` says `S`, and keys
   * only unless `include` names the other attributes it holds.
   */
  index?: {
    name: string;
    partitionKey: string;
    sortKey: string;
    sortKeyType?: 'S' | 'N';
    include?: readonly string[];
  };
}

/**
 * The dedupe table (partition key `pk`, TTL on `expiresAt`, sparse index `queue-due` on `queue` + `dueAt` for
 * the retrier), the token table (partition key `pk`; the
 * store keeps the token's own expiry in `tokenExpiresAt`, so TTL on `expiresAt` never purges a live token) and
 * the delivery log (`pk` + `sk`, TTL on `expiresAt`, index `by-day` on `day` + `at` holding the summaries).
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
  deliveries: {
    logicalId: 'DeliveriesTable',
    partitionKey: DeliveryLogTable.partitionKey,
    sortKey: DeliveryLogTable.sortKey,
    ttlAttribute: DeliveryLogTable.ttlAttribute,
    index: {
      name: DeliveryLogTable.listIndex,
      partitionKey: DeliveryLogTable.dayAttribute,
      sortKey: DeliveryLogTable.atAttribute,
      sortKeyType: 'S',
      include: DeliveryLogTable.listAttributes,
    },
  },
} as const satisfies Record<string, TableDefinition>;

/**
 * The `CreateTable` request of a definition: on-demand, a string partition key (and sort key, if it has one),
 * and its index if it has one.
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
  if (definition.sortKey !== undefined) {
    attributes.push({ AttributeName: definition.sortKey, AttributeType: 'S' });
    input.KeySchema?.push({ AttributeName: definition.sortKey, KeyType: 'RANGE' });
  }
  if ('index' in definition && definition.index !== undefined) {
    const { index } = definition;
    attributes.push(
      { AttributeName: index.partitionKey, AttributeType: 'S' },
      { AttributeName: index.sortKey, AttributeType: index.sortKeyType ?? 'N' },
    );
    input.GlobalSecondaryIndexes = [
      {
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection:
          index.include === undefined
            ? { ProjectionType: 'KEYS_ONLY' }
            : { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.include] },
      },
    ];
  }
  return input;
}
