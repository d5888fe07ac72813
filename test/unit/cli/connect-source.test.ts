// Where `forgebridge connect` finds a deployed stage's source (the SDK clients mocked): the ingest's URL from the
// stack's outputs (its Function URL, else the HTTP API, or `--url`), the newest secret of the source's SSM
// parameter, the stage's delivery log; and which source of the stage file a forge's hook goes to.
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { WebhookSourceConfig } from '../../../lib/aws/stage/index.js';
import { pickSource, type StageSources, sourceEndpoint } from '../../../lib/cli/connect-source.js';

const cloudFormation = mockClient(CloudFormationClient);
const ssm = mockClient(SSMClient);
const AWS = { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y' };

beforeEach(() => {
  cloudFormation.reset();
  ssm.reset();
});

const outputs = (entries: Record<string, string>) => ({
  Stacks: [
    {
      StackName: 'forgebridge-prod',
      CreationTime: new Date(),
      StackStatus: 'UPDATE_COMPLETE' as const,
      Outputs: Object.entries(entries).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
    },
  ],
});

describe('sourceEndpoint on a deployed stage', () => {
  it("posts to the Function URL's source path, signs with the newest secret of the parameter, reads the stage's log", async () => {
    cloudFormation.on(DescribeStacksCommand).resolves(
      outputs({
        IngestLambdaFunctionUrl: 'https://abc.lambda-url.eu-west-1.on.aws/',
        HttpApiUrl: 'https://api.example',
        DeliveriesTableName: 'forgebridge-prod-deliveries',
      }),
    );
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: 'old-secret,new-secret', Version: 3 } });
    const endpoint = await sourceEndpoint(
      { stage: 'prod', region: 'eu-west-1' },
      { name: 'github', secretParameter: '/forgebridge/prod/webhook-secret/github' },
      AWS,
    );
    expect(endpoint.url).toBe('https://abc.lambda-url.eu-west-1.on.aws/webhooks/github');
    expect(endpoint.log).toMatchObject({
      kind: 'aws',
      tableName: 'forgebridge-prod-deliveries',
      region: 'eu-west-1',
    });
    expect(await endpoint.secret()).toBe('new-secret');
    expect(ssm.commandCalls(GetParameterCommand)[0]?.args[0].input).toEqual({
      Name: '/forgebridge/prod/webhook-secret/github',
      WithDecryption: true,
    });
  });

  it('takes the HTTP API without a Function URL, and --url over both; default is /webhooks', async () => {
    cloudFormation
      .on(DescribeStacksCommand)
      .resolves(outputs({ HttpApiUrl: 'https://api.example', DeliveriesTableName: 't' }));
    const viaApi = await sourceEndpoint(
      { stage: 'prod', region: 'eu-west-1' },
      { name: 'default', secretParameter: '/p' },
      AWS,
    );
    expect(viaApi.url).toBe('https://api.example/webhooks');
    const given = await sourceEndpoint(
      { stage: 'prod', region: 'eu-west-1', url: 'https://hooks.example.com/' },
      { name: 'gl', secretParameter: '/p' },
      AWS,
    );
    expect(given.url).toBe('https://hooks.example.com/webhooks/gl');
  });

  it('says in one line what is missing: the stack has no ingest URL, the parameter no secret', async () => {
    cloudFormation.on(DescribeStacksCommand).resolves(outputs({ DeliveriesTableName: 't' }));
    await expect(
      sourceEndpoint({ stage: 'prod', region: 'eu-west-1' }, { name: 'github', secretParameter: '/p' }, AWS),
    ).rejects.toThrow(
      'stack "forgebridge-prod" has no ingest URL output (IngestLambdaFunctionUrl, HttpApiUrl): pass "--url"',
    );
    ssm.on(GetParameterCommand).rejects(Object.assign(new Error('missing'), { name: 'ParameterNotFound' }));
    const endpoint = await sourceEndpoint(
      { stage: 'prod', region: 'eu-west-1', url: 'https://x.example' },
      { name: 'github', secretParameter: '/forgebridge/prod/webhook-secret/github' },
      AWS,
    );
    await expect(endpoint.secret()).rejects.toThrow(
      'parameter "/forgebridge/prod/webhook-secret/github" holds no secret: put the source\'s secret there first',
    );
  });
});

describe('pickSource', () => {
  const source = (name: string, forge: string) => ({ name, forge }) as WebhookSourceConfig;
  const stage = (sources: WebhookSourceConfig[]): StageSources => ({
    stage: 'prod',
    file: 'config/prod.yml',
    sources,
    providers: ['forge'],
    defaultProvider: 'forge',
  });

  it("takes the stage's one source of the forge, or the one named", () => {
    const one = stage([source('default', 'generic'), source('gh', 'github'), source('gl', 'gitlab')]);
    expect(pickSource(one, 'github', undefined).name).toBe('gh');
    expect(pickSource(one, 'gitlab', 'gl').name).toBe('gl');
  });

  it('refuses none, two, an unknown name and a source of another forge, naming the sources', () => {
    const two = stage([source('a', 'github'), source('b', 'github')]);
    expect(() => pickSource(two, 'github', undefined)).toThrow(
      'config/prod.yml has 2 github sources: pass "--source <name>" (its sources: a (github), b (github))',
    );
    expect(() => pickSource(two, 'gitlab', undefined)).toThrow('config/prod.yml has no gitlab source');
    expect(() => pickSource(two, 'github', 'c')).toThrow('config/prod.yml has no source "c"');
    expect(() => pickSource(two, 'gitlab', 'a')).toThrow(
      'source "a" is a github source: a gitlab hook needs a gitlab source',
    );
  });
});
