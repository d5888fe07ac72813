import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GitHubAppError } from '../../../../lib/aws/index.js';
import type { GitHubAppConfig } from '../../../../lib/aws/tokens/config.js';
import {
  gitHubAppKey,
  gitHubAppTarget,
  loadGitHubAppKey,
  signGitHubAppJwt,
} from '../../../../lib/aws/tokens/github-app.js';
import { createTokenSource } from '../../../../lib/aws/tokens/token-source.js';
import { AccessToken } from '../../../../lib/oauth2/index.js';
import { registerSecret } from '../../../helpers/secrets.js';

const API = 'https://api.github.test';
const { privateKey: pkcs1, publicKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const pkcs8 = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
}).privateKey;
const keyBody = pkcs1.split('\n').filter((line) => line !== '' && !line.startsWith('-----'));
registerSecret(pkcs1, pkcs8, ...keyBody);
const key = loadGitHubAppKey(pkcs1, '12345');
const config: GitHubAppConfig = {
  kind: 'github_app',
  provider: 'github',
  appId: '12345',
  installationId: 678,
  apiUrl: API,
};

let agent: MockAgent;
/** What the forge received: method, path, headers and body of each request. */
let received: { method: string; path: string; headers: Headers; body: string }[];

function forge(path: string, status: number, body: unknown, method = 'POST') {
  agent
    .get(API)
    .intercept({ method, path })
    .reply((options) => {
      received.push({
        method: options.method,
        path: options.path,
        headers: new Headers(options.headers as Record<string, string>),
        body: options.body === undefined || options.body === null ? '' : String(options.body),
      });
      return {
        statusCode: status,
        data: typeof body === 'string' ? body : JSON.stringify(body),
        responseOptions: { headers: { 'content-type': 'application/json; charset=utf-8' } },
      };
    });
}

const tokenAnswer = {
  token: 'ghs_unit_token',
  expires_at: '2030-01-01T00:00:00Z',
  permissions: { issues: 'read' },
  repository_selection: 'all',
};

beforeEach(() => {
  received = [];
  agent = new MockAgent();
  agent.disableNetConnect();
});
afterEach(async () => {
  await agent.close();
});

describe('signGitHubAppJwt()', () => {
  it('signs RS256 with iss = the app id as a string, iat 60 s back and exp 9 minutes ahead', async () => {
    const now = 1_800_000_000_500;
    const jwt = await signGitHubAppJwt('12345', key, now);
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'RS256', typ: 'JWT' });
    expect(decodeJwt(jwt)).toEqual({ iss: '12345', iat: 1_800_000_000 - 60, exp: 1_800_000_000 + 540 });
    const { payload } = await jwtVerify(jwt, createPublicKey(publicKey), {
      algorithms: ['RS256'],
      issuer: '12345',
      currentDate: new Date(now),
    });
    expect((payload.exp as number) - (payload.iat as number)).toBeLessThanOrEqual(600);
  });
});

describe('loadGitHubAppKey()', () => {
  it('reads PKCS#1 (as GitHub hands it out), PKCS#8, and a PEM pasted on one line with literal \\n', () => {
    expect(loadGitHubAppKey(pkcs1, '1').asymmetricKeyType).toBe('rsa');
    expect(loadGitHubAppKey(pkcs8, '1').asymmetricKeyType).toBe('rsa');
    expect(loadGitHubAppKey(pkcs1.trim().replaceAll('\n', '\\n'), '1').asymmetricKeyType).toBe('rsa');
  });

  it('refuses anything else with an error naming the app, never the value', () => {
    const ec = generateKeyPairSync('ec', {
      namedCurve: 'P-256',
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    }).privateKey;
    for (const value of ['not a key at all', publicKey, ec, pkcs1.slice(0, 200)]) {
      const error = (() => {
        try {
          loadGitHubAppKey(value, '12345');
        } catch (caught) {
          return caught as GitHubAppError;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(GitHubAppError);
      expect(error).toMatchObject({
        code: 'github_app_failed',
        message: 'the private key of app "12345" is not an rsa private key in pem',
      });
      expect(error?.cause).toBeUndefined();
    }
  });
});

describe('gitHubAppKey()', () => {
  it('keys by provider, app and installation or account, with the narrowing in the scope', () => {
    expect(gitHubAppKey(config)).toEqual({
      provider: 'github',
      clientId: 'app/12345',
      scope: 'installation/678',
    });
    const { installationId: _, ...rest } = config;
    expect(
      gitHubAppKey({
        ...rest,
        account: 'octo',
        repositories: ['a'],
        repositoryIds: [7],
        permissions: { issues: 'read' },
      }),
    ).toEqual({
      provider: 'github',
      clientId: 'app/12345',
      scope: 'account/octo repository/a repository_id/7 permission/issues:read',
    });
  });
});

describe('gitHubAppTarget()', () => {
  it('posts to access_tokens with the app JWT and GitHub’s headers, and no body when not narrowing', async () => {
    forge('/app/installations/678/access_tokens', 201, tokenAnswer);
    const before = Math.floor(Date.now() / 1000);
    const token = await gitHubAppTarget(config, key, { connection: { dispatcher: agent } }).fetchToken(
      undefined,
    );
    expect(token).toBeInstanceOf(AccessToken);
    expect(token.token).toBe('ghs_unit_token');
    expect(token.expiresAt).toBe(Date.parse('2030-01-01T00:00:00Z') / 1000);
    expect(token.toHash()).toMatchObject({
      access_token: 'ghs_unit_token',
      expires_at: 1_893_456_000,
      token_type: 'bearer',
      permissions: { issues: 'read' },
      repository_selection: 'all',
    });
    expect(token.headers()).toEqual({ Authorization: 'Bearer ghs_unit_token' });
    const [request] = received;
    expect(request?.method).toBe('POST');
    expect(request?.body).toBe('');
    expect(request?.headers.get('accept')).toBe('application/vnd.github+json');
    expect(request?.headers.get('x-github-api-version')).toBe('2022-11-28');
    const jwt = /^Bearer (.+)$/.exec(request?.headers.get('authorization') ?? '')?.[1] ?? '';
    const claims = decodeJwt(jwt);
    expect(claims.iss).toBe('12345');
    expect(claims.iat).toBeGreaterThanOrEqual(before - 60);
    expect(claims.iat).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) - 60);
    expect((claims.exp as number) - (claims.iat as number)).toBe(600);
  });

  it('narrows with a JSON body of repositories, repository_ids and permissions', async () => {
    forge('/app/installations/678/access_tokens', 201, tokenAnswer);
    const narrow = {
      ...config,
      repositories: ['hello'],
      repositoryIds: [42],
      permissions: { issues: 'write' as const },
    };
    await gitHubAppTarget(narrow, key, { connection: { dispatcher: agent } }).fetchToken(undefined);
    expect(received[0]?.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(received[0]?.body ?? '')).toEqual({
      repositories: ['hello'],
      repository_ids: [42],
      permissions: { issues: 'write' },
    });
  });

  it('dates the JWT by the given clock', async () => {
    forge('/app/installations/678/access_tokens', 201, tokenAnswer);
    await gitHubAppTarget(config, key, {
      connection: { dispatcher: agent },
      now: () => 1_700_000_000_000,
    }).fetchToken(undefined);
    const jwt = (received[0]?.headers.get('authorization') ?? '').slice('Bearer '.length);
    expect(decodeJwt(jwt)).toMatchObject({ iat: 1_700_000_000 - 60, exp: 1_700_000_000 + 540 });
  });

  it('names the status and the forge’s message, cleaned and bounded, never the JWT', async () => {
    const target = gitHubAppTarget(config, key, { connection: { dispatcher: agent } });
    forge('/app/installations/678/access_tokens', 401, {
      message: 'A JSON web token could not be decoded',
      documentation_url: 'https://docs.github.com/rest',
    });
    await expect(target.fetchToken(undefined)).rejects.toMatchObject({
      name: 'GitHubAppError',
      code: 'github_app_failed',
      status: 401,
      message:
        'installation token request of app "12345" failed: 401 "A JSON web token could not be decoded"',
    });
    // A forge echoing the JWT back: redacted. A long message: cut.
    agent
      .get(API)
      .intercept({ method: 'POST', path: '/app/installations/678/access_tokens' })
      .reply((options) => {
        const jwt =
          new Headers(options.headers as Record<string, string>).get('authorization')?.slice(7) ?? '';
        return { statusCode: 403, data: JSON.stringify({ message: `bad\ntoken ${jwt} ${'x'.repeat(300)}` }) };
      });
    const echoed = (await target.fetchToken(undefined).catch((caught: unknown) => caught)) as GitHubAppError;
    expect(echoed.status).toBe(403);
    expect(echoed.message).toMatch(
      /^installation token request of app "12345" failed: 403 "bad token \[FILTERED\] x+…"$/,
    );
    expect(echoed.message).not.toMatch(/eyJ/);
    forge('/app/installations/678/access_tokens', 502, '<html>bad gateway</html>');
    await expect(target.fetchToken(undefined)).rejects.toMatchObject({
      status: 502,
      message: 'installation token request of app "12345" failed: 502',
    });
  });

  it('refuses a 2xx without a token or a readable expires_at', async () => {
    const target = gitHubAppTarget(config, key, { connection: { dispatcher: agent } });
    for (const body of [{ expires_at: '2030-01-01T00:00:00Z' }, { token: 'ghs_x', expires_at: 'soon' }, []]) {
      forge('/app/installations/678/access_tokens', 201, body);
      await expect(target.fetchToken(undefined)).rejects.toMatchObject({
        name: 'GitHubAppError',
        status: 201,
        message:
          'installation token request of app "12345" answered 201 without a "token" and an "expires_at"',
      });
    }
  });

  it('bounds the answer it reads, and names a transport failure without the JWT', async () => {
    const target = gitHubAppTarget(config, key, { connection: { dispatcher: agent } });
    forge('/app/installations/678/access_tokens', 201, {
      ...tokenAnswer,
      padding: 'x'.repeat(5 * 1024 * 1024),
    });
    const large = (await target.fetchToken(undefined).catch((caught: unknown) => caught)) as GitHubAppError;
    expect(large).toBeInstanceOf(GitHubAppError);
    expect(large.message).toMatch(
      /^POST \/app\/installations\/678\/access_tokens of app "12345" failed: .*maxResponseBytes/,
    );
    agent
      .get(API)
      .intercept({ method: 'POST', path: '/app/installations/678/access_tokens' })
      .replyWithError(new Error('socket hang up'));
    const failed = (await target.fetchToken(undefined).catch((caught: unknown) => caught)) as GitHubAppError;
    expect(failed).toBeInstanceOf(GitHubAppError);
    expect(failed.message).toMatch(/^POST \/app\/installations\/678\/access_tokens of app "12345" failed: /);
    expect(failed.message).not.toMatch(/eyJ/);
  });

  it('looks the installation up once by account (org, then user) and again after a 404 from access_tokens', async () => {
    const { installationId: _, ...rest } = config;
    const target = gitHubAppTarget({ ...rest, account: 'octocat' }, key, {
      connection: { dispatcher: agent },
    });
    forge('/orgs/octocat/installation', 404, { message: 'Not Found' }, 'GET');
    forge('/users/octocat/installation', 200, { id: 910 }, 'GET');
    forge('/app/installations/910/access_tokens', 201, tokenAnswer);
    forge('/app/installations/910/access_tokens', 404, { message: 'Not Found' });
    forge('/orgs/octocat/installation', 404, { message: 'Not Found' }, 'GET');
    forge('/users/octocat/installation', 200, { id: 911 }, 'GET');
    forge('/app/installations/911/access_tokens', 201, tokenAnswer);
    await target.fetchToken(undefined);
    await expect(target.fetchToken(undefined)).rejects.toMatchObject({ status: 404 });
    await target.fetchToken(undefined);
    expect(received.map((request) => `${request.method} ${request.path}`)).toEqual([
      'GET /orgs/octocat/installation',
      'GET /users/octocat/installation',
      'POST /app/installations/910/access_tokens',
      'POST /app/installations/910/access_tokens',
      'GET /orgs/octocat/installation',
      'GET /users/octocat/installation',
      'POST /app/installations/911/access_tokens',
    ]);
    for (const request of received) expect(request.headers.get('authorization')).toMatch(/^Bearer eyJ/);
  });
});

describe('createTokenSource() of a GitHub App', () => {
  const ddbMock = mockClient(DynamoDBDocumentClient);
  const ssmMock = mockClient(SSMClient);
  afterEach(() => {
    ddbMock.reset();
    ssmMock.reset();
    vi.restoreAllMocks();
  });

  it('reads the private key from SSM (decrypted) once, and stores the installation token', async () => {
    ssmMock.on(GetParameterCommand).resolves({ Parameter: { Value: pkcs1 } });
    ddbMock.on(GetCommand).resolves({});
    ddbMock.on(UpdateCommand).resolves({});
    ddbMock.on(PutCommand).resolves({});
    forge('/app/installations/678/access_tokens', 201, tokenAnswer);
    const source = createTokenSource(
      { ...config, privateKeyParameter: '/fb/github-app/key' },
      {
        documentClient: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' })),
        ssm: new SSMClient({ region: 'us-east-1' }),
        tableName: 'tokens',
        env: {},
        connection: { dispatcher: agent },
      },
    );
    expect(source.key).toBe('github#app%2F12345#installation%2F678');
    const token = await (await source.store()).get();
    expect(token.token).toBe('ghs_unit_token');
    await source.store();
    expect(ssmMock.commandCalls(GetParameterCommand).map((call) => call.args[0].input)).toEqual([
      { Name: '/fb/github-app/key', WithDecryption: true },
    ]);
    const put = ddbMock.commandCalls(PutCommand)[0]?.args[0].input;
    expect(put?.Item?.token).toMatchObject({ access_token: 'ghs_unit_token', expires_at: 1_893_456_000 });
  });

  it('fails the store with the app named, not the key, when the parameter holds no RSA key', async () => {
    ssmMock.on(GetParameterCommand).resolves({ Parameter: { Value: 'garbage' } });
    const source = createTokenSource(
      { ...config, privateKeyParameter: '/fb/github-app/key' },
      {
        documentClient: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' })),
        ssm: new SSMClient({ region: 'us-east-1' }),
        tableName: 'tokens',
        env: {},
      },
    );
    await expect(source.store()).rejects.toThrow(
      new GitHubAppError('the private key of app "12345" is not an rsa private key in pem'),
    );
  });
});
