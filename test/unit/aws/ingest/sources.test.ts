// Webhook sources (issue 10): FORGEBRIDGE_WEBHOOK_SOURCES parsing, forgeWebhookSources routing by path
// (unknown source 404 before any secret is read), the event entry's forge fields and the dedupe key per source.
import { createHash } from 'node:crypto';
import {
  DeleteItemCommand,
  DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { dedupeKeyOf } from '../../../../lib/aws/delivery-key.js';
import {
  createIngestHandler,
  type ForgeWebhookEvent,
  resolveDelivery,
  webhookErrors,
} from '../../../../lib/aws/index.js';
import { forgeWebhookSources } from '../../../../lib/aws/ingest/index.js';
import { buildEventEntry, eventEntrySize } from '../../../../lib/aws/publish/event-entry.js';
import { DeliveryQueue, type QueuedDelivery } from '../../../../lib/aws/queue/index.js';
import { readIngestConfig } from '../../../../lib/aws/stage/function-config.js';
import { deliveryHeaders, type Forge } from '../../../../lib/webhooks/index.js';
import { invoke, lambdaContext, recordingLogger } from './events.js';

const required = { FORGEBRIDGE_BUS_NAME: 'bus', FORGEBRIDGE_DEDUPE_TABLE: 'dedupe' };
const sourcesEnv = (value: unknown) => ({
  ...required,
  FORGEBRIDGE_WEBHOOK_SOURCES: typeof value === 'string' ? value : JSON.stringify(value),
});

describe('readIngestConfig(): webhook sources', () => {
  it('keeps one default source from FORGEBRIDGE_FORGE and the secret parameter when there is no list', () => {
    const config = readIngestConfig({
      ...required,
      FORGEBRIDGE_FORGE: 'gitlab',
      FORGEBRIDGE_WEBHOOK_SECRET_PARAMETER: '/forgebridge/dev/webhook-secret',
    });
    expect(config.sources).toEqual([
      {
        name: 'default',
        forge: 'gitlab',
        secretParameter: '/forgebridge/dev/webhook-secret',
        secretEnv: 'FORGEBRIDGE_WEBHOOK_SECRET',
        deliveryOptions: { allowSha1: true, forge: 'gitlab' },
      },
    ]);
  });

  it('reads the list: each source with its forge, parameter, offline variable and header overrides', () => {
    const config = readIngestConfig(
      sourcesEnv([
        { name: 'default', forge: 'github', secretParameter: '/forgebridge/dev/webhook-secret' },
        { name: 'gitlab-acme', forge: 'gitlab', secretParameter: '/forgebridge/dev/gitlab-acme' },
        { name: 'ci', secretParameter: '/ci', secretEnv: 'CI_SECRET', eventHeader: 'X-CI-Event' },
      ]),
    );
    expect(config.sources).toEqual([
      {
        name: 'default',
        forge: 'github',
        secretParameter: '/forgebridge/dev/webhook-secret',
        secretEnv: 'FORGEBRIDGE_WEBHOOK_SECRET',
        deliveryOptions: { allowSha1: true, forge: 'github' },
      },
      {
        name: 'gitlab-acme',
        forge: 'gitlab',
        secretParameter: '/forgebridge/dev/gitlab-acme',
        secretEnv: 'FORGEBRIDGE_WEBHOOK_SECRET_GITLAB_ACME',
        deliveryOptions: { allowSha1: true, forge: 'gitlab' },
      },
      {
        name: 'ci',
        forge: 'generic',
        secretParameter: '/ci',
        secretEnv: 'CI_SECRET',
        deliveryOptions: { allowSha1: true, forge: 'generic', headers: { event: 'x-ci-event' } },
      },
    ]);
  });

  it.each([
    ['not json', '[{', '"FORGEBRIDGE_WEBHOOK_SOURCES" must be a non-empty json array'],
    ['an object', { name: 'a' }, '"FORGEBRIDGE_WEBHOOK_SOURCES" must be a non-empty json array'],
    ['empty', [], '"FORGEBRIDGE_WEBHOOK_SOURCES" must be a non-empty json array'],
    ['an entry not an object', ['a'], '"FORGEBRIDGE_WEBHOOK_SOURCES[0]" must be an object'],
    ['no name', [{ forge: 'github' }], '"FORGEBRIDGE_WEBHOOK_SOURCES[0].name" is required'],
    ['a name not a string', [{ name: 3 }], '"FORGEBRIDGE_WEBHOOK_SOURCES[0].name" must be a string'],
    ['an upper-case name', [{ name: 'GitLab' }], '"FORGEBRIDGE_WEBHOOK_SOURCES[0].name" must be 1 to 64'],
    ['a name with a slash', [{ name: 'a/b' }], '"FORGEBRIDGE_WEBHOOK_SOURCES[0].name" must be 1 to 64'],
    ['a name ending in a hyphen', [{ name: 'a-' }], '"FORGEBRIDGE_WEBHOOK_SOURCES[0].name" must be 1 to 64'],
    [
      'a name of 65 characters',
      [{ name: 'a'.repeat(65) }],
      '"FORGEBRIDGE_WEBHOOK_SOURCES[0].name" must be 1 to 64',
    ],
    [
      'a repeated name',
      [{ name: 'a' }, { name: 'a' }],
      '"FORGEBRIDGE_WEBHOOK_SOURCES[1].name" "a" is repeated',
    ],
    [
      'an unknown forge',
      [{ name: 'a', forge: 'gogs' }],
      '"FORGEBRIDGE_WEBHOOK_SOURCES[0].forge" must be one of',
    ],
    [
      'an unknown field',
      [{ name: 'a', secret: 'x' }],
      '"FORGEBRIDGE_WEBHOOK_SOURCES[0]" has an unknown field "secret"',
    ],
    [
      'a relative parameter',
      [{ name: 'a', secretParameter: 'webhook' }],
      '"FORGEBRIDGE_WEBHOOK_SOURCES[0].secretParameter" must be a parameter name starting with "/"',
    ],
    [
      'a bad secretEnv',
      [{ name: 'a', secretEnv: 'A-B' }],
      '"FORGEBRIDGE_WEBHOOK_SOURCES[0].secretEnv" must be',
    ],
    [
      'a bad header',
      [{ name: 'a', eventHeader: 'x event' }],
      '"FORGEBRIDGE_WEBHOOK_SOURCES[0].eventHeader" must be',
    ],
  ])('refuses %s with a TypeError naming the field', (_label, value, message) => {
    expect(() => readIngestConfig(sourcesEnv(value))).toThrow(TypeError);
    expect(() => readIngestConfig(sourcesEnv(value))).toThrow(message);
  });

  it('refuses FORGEBRIDGE_FORGE or a header variable beside the list, and an unknown FORGEBRIDGE_FORGE', () => {
    for (const name of ['FORGEBRIDGE_FORGE', 'FORGEBRIDGE_EVENT_HEADER', 'FORGEBRIDGE_DELIVERY_HEADER']) {
      expect(() => readIngestConfig({ ...sourcesEnv([{ name: 'a' }]), [name]: 'github' })).toThrow(
        new TypeError(`environment variable "${name}" cannot be combined with "FORGEBRIDGE_WEBHOOK_SOURCES"`),
      );
    }
    expect(() => readIngestConfig({ ...required, FORGEBRIDGE_FORGE: 'gogs' })).toThrow(
      /^environment variable "FORGEBRIDGE_FORGE" must be one of "generic", "github"/,
    );
  });
});

const SECRETS: Record<string, string> = {
  default: 'default-secret',
  'gitlab-acme': 'gitlab-secret',
  gitea: 'gitea-secret',
};
const FORGES: Record<string, Forge> = { default: 'github', 'gitlab-acme': 'gitlab', gitea: 'gitea' };

function routed(path: string, headers: Record<string, string>, body: string): APIGatewayProxyEventV2 {
  const source = /^\/webhooks\/([^/]+)$/.exec(path)?.[1];
  return {
    version: '2.0',
    routeKey: source === undefined ? 'POST /webhooks' : 'POST /webhooks/{source}',
    rawPath: path,
    rawQueryString: '',
    headers,
    ...(source === undefined ? {} : { pathParameters: { source } }),
    requestContext: { http: { method: 'POST', path } } as APIGatewayProxyEventV2['requestContext'],
    body,
    isBase64Encoded: false,
  };
}

function sourcesChain() {
  const reads: string[] = [];
  const seen: ForgeWebhookEvent<unknown>['webhook'][] = [];
  const handler = middy(async (event: ForgeWebhookEvent<unknown>) => {
    seen.push(event.webhook);
    return { statusCode: 202, body: '' };
  })
    .use(
      forgeWebhookSources({
        sources: Object.keys(SECRETS).map((name) => ({
          name,
          forge: FORGES[name] as Forge,
          secret: async () => {
            reads.push(name);
            return [SECRETS[name] as string];
          },
        })),
      }),
    )
    .use(httpJsonBodyParser())
    .use(webhookErrors());
  return { handler, reads, seen };
}

const mergeRequest = JSON.stringify({
  object_kind: 'merge_request',
  object_attributes: { id: 99, iid: 1, action: 'open' },
});

describe('forgeWebhookSources()', () => {
  it('reads each source with its own forge preset and secret, and names the source', async () => {
    const { handler, reads, seen } = sourcesChain();
    const gitlab = deliveryHeaders('gitlab-secret', mergeRequest, {
      forge: 'gitlab',
      name: 'Merge Request Hook',
      id: 'gl-1',
    });
    expect((await invoke(handler, routed('/webhooks/gitlab-acme', gitlab, mergeRequest))).statusCode).toBe(
      202,
    );
    const push = JSON.stringify({ ref: 'refs/heads/main' });
    const github = deliveryHeaders('default-secret', push, { forge: 'github', name: 'push', id: 'gh-1' });
    expect((await invoke(handler, routed('/webhooks', github, push))).statusCode).toBe(202);
    expect(seen).toEqual([
      {
        id: 'gl-1',
        name: 'pull_request',
        action: 'opened',
        forge: 'gitlab',
        nativeName: 'Merge Request Hook',
        nativeAction: 'open',
        secretIndex: 0,
        source: 'gitlab-acme',
      },
      {
        id: 'gh-1',
        name: 'push',
        action: undefined,
        forge: 'github',
        nativeName: 'push',
        nativeAction: undefined,
        secretIndex: 0,
        source: 'default',
      },
    ]);
    expect(reads).toEqual(['gitlab-acme', 'default']);
  });

  it("refuses another source's secret 401, and another forge's headers 400", async () => {
    const { handler } = sourcesChain();
    const wrongSecret = deliveryHeaders('default-secret', mergeRequest, {
      forge: 'gitlab',
      name: 'Merge Request Hook',
      id: 'gl-2',
    });
    const answer = await invoke(handler, routed('/webhooks/gitlab-acme', wrongSecret, mergeRequest));
    expect(answer.statusCode).toBe(401);
    expect(JSON.parse(answer.body)).toEqual({
      error: { code: 'invalid_signature', message: 'token does not match' },
    });
    const giteaHeaders = deliveryHeaders('gitlab-secret', mergeRequest, {
      forge: 'gitea',
      name: 'push',
      id: 'g-1',
    });
    expect(
      (await invoke(handler, routed('/webhooks/gitlab-acme', giteaHeaders, mergeRequest))).statusCode,
    ).toBe(400);
  });

  it.each([
    ['an unconfigured name', '/webhooks/bitbucket', 'unknown webhook source "bitbucket"'],
    ['a name that is no source name', '/webhooks/..%2F', 'unknown webhook source'],
    ['an upper-case name', '/webhooks/Gitea', 'unknown webhook source'],
  ])('answers %s 404 unknown_source before any secret is read', async (_label, path, message) => {
    const { handler, reads, seen } = sourcesChain();
    const body = JSON.stringify({ ref: 'x' });
    const headers = deliveryHeaders('gitea-secret', body, { forge: 'gitea', name: 'push', id: 'x-1' });
    const event = routed(path, headers, body);
    event.pathParameters = { source: decodeURIComponent(path.slice('/webhooks/'.length)) };
    const answer = await invoke(handler, event);
    expect(answer.statusCode).toBe(404);
    expect(JSON.parse(answer.body)).toEqual({ error: { code: 'unknown_source', message } });
    expect(reads).toEqual([]);
    expect(seen).toEqual([]);
  });

  it('reads a Function URL path (no route parameters) the same way', async () => {
    const { handler, seen } = sourcesChain();
    const body = JSON.stringify({ action: 'opened', number: 1 });
    const headers = deliveryHeaders('gitea-secret', body, {
      forge: 'gitea',
      name: 'pull_request',
      id: 'ge-1',
    });
    expect((await invoke(handler, routed('/webhooks/gitea', headers, body))).statusCode).toBe(202);
    const event = routed('/webhooks/gitea', headers, body);
    delete event.pathParameters;
    event.headers['x-gitea-delivery'] = 'ge-2';
    expect((await invoke(handler, event)).statusCode).toBe(202);
    expect(seen.map((webhook) => [webhook.id, webhook.source])).toEqual([
      ['ge-1', 'gitea'],
      ['ge-2', 'gitea'],
    ]);
    const unknown = routed('/webhooks/nope', headers, body);
    delete unknown.pathParameters;
    expect((await invoke(handler, unknown)).statusCode).toBe(404);
  });

  it('refuses invalid sources at construction', () => {
    expect(() => forgeWebhookSources({ sources: [] })).toThrow('"sources" must be a non-empty array');
    expect(() => forgeWebhookSources({ sources: [{ name: 'A', secret: 's' }] })).toThrow('"sources[0].name"');
    expect(() =>
      forgeWebhookSources({
        sources: [
          { name: 'a', secret: 's' },
          { name: 'a', secret: 't' },
        ],
      }),
    ).toThrow('"sources[1].name" is repeated');
    expect(() => forgeWebhookSources({ sources: [{ name: 'a', secret: undefined }] })).toThrow(
      '"secret" is required',
    );
    expect(() =>
      forgeWebhookSources({ sources: [{ name: 'a', secret: 's', forge: 'gogs' as Forge }] }),
    ).toThrow('"forge" must be one of');
  });
});

describe('buildEventEntry(): forge fields', () => {
  const gitlabPayload = {
    object_kind: 'merge_request',
    project: { id: 15 },
    object_attributes: { action: 'open' },
    repository: { name: 'r' },
  };
  const delivery = {
    id: 'gl-1',
    name: 'pull_request',
    payload: gitlabPayload,
    forge: 'gitlab',
    action: 'opened',
    source: 'gitlab-acme',
    nativeEvent: 'Merge Request Hook',
    nativeAction: 'open',
  };

  it('routes on the mapped action and carries forge, source and the native names', () => {
    const entry = buildEventEntry(delivery, { source: 'forge.webhooks' });
    expect(entry.DetailType).toBe('pull_request.opened');
    expect(entry.Detail).toBe(
      JSON.stringify({
        delivery: 'gl-1',
        event: 'pull_request',
        action: 'opened',
        forge: 'gitlab',
        source: 'gitlab-acme',
        nativeEvent: 'Merge Request Hook',
        nativeAction: 'open',
        payload: gitlabPayload,
      }),
    );
    expect(eventEntrySize(entry)).toBe(
      14 + 'forge.webhooks'.length + 'pull_request.opened'.length + entry.Detail.length,
    );
  });

  it('keeps the forge fields beside the routing fields when claim-checked', () => {
    const payloadRef = { bucket: 'b', key: 'deliveries/gl-1', bytes: 10, sha256: 'ab' };
    const entry = buildEventEntry(delivery, { source: 'forge.webhooks', payloadRef });
    expect(entry.DetailType).toBe('pull_request.opened');
    expect(JSON.parse(entry.Detail)).toEqual({
      delivery: 'gl-1',
      event: 'pull_request',
      action: 'opened',
      forge: 'gitlab',
      source: 'gitlab-acme',
      nativeEvent: 'Merge Request Hook',
      nativeAction: 'open',
      payload: { repository: { name: 'r' } },
      payloadRef,
    });
  });

  it('has no action for a forge delivery without one, whatever the payload holds; payload.action without a forge', () => {
    const push = { ...delivery, name: 'push', action: undefined, payload: { action: 'x' } };
    expect(buildEventEntry(push, { source: 's' }).DetailType).toBe('push');
    const { forge: _forge, action: _action, ...plain } = push;
    expect(buildEventEntry(plain, { source: 's' }).DetailType).toBe('push.x');
  });

  it('is read back by resolveDelivery with the mapped action for receive()', async () => {
    const entry = buildEventEntry(delivery, { source: 'forge.webhooks' });
    expect(await resolveDelivery({ detail: JSON.parse(entry.Detail) })).toEqual({
      id: 'gl-1',
      name: 'pull_request',
      payload: gitlabPayload,
      action: 'opened',
      forge: 'gitlab',
      source: 'gitlab-acme',
      nativeName: 'Merge Request Hook',
      nativeAction: 'open',
    });
    // An event published before forges existed: no action key, so payload.action still chooses handlers.
    const old = await resolveDelivery({
      detail: { delivery: 'd', event: 'issues', payload: { action: 'opened' } },
    });
    expect(old).toEqual({ id: 'd', name: 'issues', payload: { action: 'opened' } });
    expect(Object.hasOwn(old, 'action')).toBe(false);
  });
});

describe('dedupe key per source', () => {
  const dynamo = mockClient(DynamoDBClient);
  const events = mockClient(EventBridgeClient);
  const keyOf = (id: string) => `delivery#${createHash('md5').update(JSON.stringify(id)).digest('base64')}`;

  beforeEach(() => {
    dynamo.reset();
    events.reset();
    dynamo.on(PutItemCommand).resolves({});
    dynamo.on(UpdateItemCommand).resolves({});
    dynamo.on(DeleteItemCommand).resolves({});
    events.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'e' }] });
  });

  it('is the delivery id for the default source (as before sources) and prefixed by any other source', () => {
    expect(dedupeKeyOf({ id: 'd-1' })).toBe('d-1');
    expect(dedupeKeyOf({ id: 'd-1', source: 'default' })).toBe('d-1');
    expect(dedupeKeyOf({ id: 'd-1', source: 'gitlab-acme' })).toBe('source#gitlab-acme#d-1');
  });

  it('publishes the same delivery id from two sources twice, each with its own record, and detail.delivery unchanged', async () => {
    const logger = recordingLogger();
    const handler = createIngestHandler({
      env: {
        FORGEBRIDGE_BUS_NAME: 'bus',
        FORGEBRIDGE_DEDUPE_TABLE: 'dedupe',
        FORGEBRIDGE_PUBLISH_BUDGET_MS: '200',
        FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([
          { name: 'default', forge: 'github' },
          { name: 'gitea', forge: 'gitea' },
        ]),
      },
      clients: {
        dynamodb: new DynamoDBClient({ region: 'us-east-1' }),
        eventBridge: new EventBridgeClient({ region: 'us-east-1' }),
      },
      sourceSecret: ({ name }) => `${name}-secret`,
      logger,
    });
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const github = deliveryHeaders('default-secret', body, { forge: 'github', name: 'push', id: '42' });
    const gitea = deliveryHeaders('gitea-secret', body, { forge: 'gitea', name: 'push', id: '42' });
    expect((await invoke(handler, routed('/webhooks', github, body), lambdaContext())).statusCode).toBe(202);
    expect((await invoke(handler, routed('/webhooks/gitea', gitea, body), lambdaContext())).statusCode).toBe(
      202,
    );
    const keys = dynamo.commandCalls(PutItemCommand).map((call) => call.args[0].input.Item?.pk?.S);
    expect(keys).toEqual([keyOf('42'), keyOf('source#gitea#42')]);
    const details = events
      .commandCalls(PutEventsCommand)
      .map((call) => JSON.parse(call.args[0].input.Entries?.[0]?.Detail ?? '{}'));
    expect(details.map(({ delivery, forge, source }) => ({ delivery, forge, source }))).toEqual([
      { delivery: '42', forge: 'github', source: 'default' },
      { delivery: '42', forge: 'gitea', source: 'gitea' },
    ]);
  });
});

describe('DeliveryQueue: forge fields', () => {
  const documents = mockClient(DynamoDBDocumentClient);

  beforeEach(() => {
    documents.reset();
    documents.on(PutCommand).resolves({});
  });

  it('keeps the mapped action, forge, source and native names under a per-source key, and gives them back', async () => {
    const queue = new DeliveryQueue({
      client: new DynamoDBClient({ region: 'us-east-1' }),
      tableName: 'dedupe',
    });
    const payload = { object_attributes: { action: 'open' } };
    const rawBody = Buffer.from(JSON.stringify(payload));
    const delivery = {
      id: 'gl-1',
      name: 'pull_request',
      payload,
      rawBody,
      forge: 'gitlab',
      action: 'opened',
      source: 'gitlab-acme',
      nativeEvent: 'Merge Request Hook',
      nativeAction: 'open',
    };
    expect(await queue.enqueue(delivery)).toBe('queued');
    const item = documents.commandCalls(PutCommand)[0]?.args[0].input.Item as Record<string, unknown>;
    expect(item).toMatchObject({
      pk: 'queue#source#gitlab-acme#gl-1',
      delivery: 'gl-1',
      event: 'pull_request',
      forge: 'gitlab',
      action: 'opened',
      source: 'gitlab-acme',
      nativeEvent: 'Merge Request Hook',
      nativeAction: 'open',
    });
    const loaded = await queue.load(item as unknown as QueuedDelivery);
    expect(loaded).toEqual({ ...delivery, rawBody: item.body });
    expect(buildEventEntry(loaded, { source: 'forge.webhooks' }).DetailType).toBe('pull_request.opened');
    // A default-source delivery keeps the key it had before sources.
    await queue.enqueue({
      id: 'd-1',
      name: 'push',
      payload: {},
      rawBody: Buffer.from('{}'),
      source: 'default',
    });
    expect(documents.commandCalls(PutCommand)[1]?.args[0].input.Item?.pk).toBe('queue#d-1');
  });
});
