// withSourceHooks: the local stack names its forge stand-ins' hooks on config/local.yml's sources through the one
// source parser, so a hook the ingest would refuse fails where it is set, and the other fields stay as written.
import { describe, expect, it } from 'vitest';
import { readWebhookSources, withSourceHooks } from '../../../../lib/aws/stage/index.js';

const SOURCES = [
  { name: 'default' },
  { name: 'github', forge: 'github', secretEnv: 'GH_SECRET', dedupeTtlSeconds: 3_600 },
  { name: 'gitlab', forge: 'gitlab' },
];
const env = { FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify(SOURCES) };
const hook = {
  kind: 'repo',
  owner: 'acme',
  repo: 'app',
  id: 12,
  provider: 'gh',
  api: 'http://127.0.0.1:4010',
};

describe('withSourceHooks()', () => {
  it('sets the hook on the named sources only and keeps every other field as written', () => {
    const value = withSourceHooks(env, { github: hook });
    expect(JSON.parse(value)).toEqual([SOURCES[0], { ...SOURCES[1], hook }, SOURCES[2]]);
    const read = readWebhookSources({ FORGEBRIDGE_WEBHOOK_SOURCES: value });
    expect(read.map((source) => [source.name, source.hook?.kind])).toEqual([
      ['default', undefined],
      ['github', 'repo'],
      ['gitlab', undefined],
    ]);
    expect(read[1]?.secretEnv).toBe('GH_SECRET');
  });

  it('leaves the sources as they are when no hook names one of them', () => {
    expect(JSON.parse(withSourceHooks(env, { elsewhere: hook }))).toEqual(SOURCES);
  });

  it('refuses a hook the ingest would refuse, naming the field', () => {
    expect(() => withSourceHooks(env, { gitlab: hook })).toThrow(
      new TypeError(
        '"FORGEBRIDGE_WEBHOOK_SOURCES[2].hook.kind" "repo" is a github hook: the source\'s "forge" must be "github"',
      ),
    );
  });

  it('needs the sources variable and a non-empty json array in it', () => {
    expect(() => withSourceHooks({}, { github: hook })).toThrow(
      new TypeError('environment variable "FORGEBRIDGE_WEBHOOK_SOURCES" is required to set a hook'),
    );
    expect(() => withSourceHooks({ FORGEBRIDGE_WEBHOOK_SOURCES: '{}' }, {})).toThrow(
      new TypeError('environment variable "FORGEBRIDGE_WEBHOOK_SOURCES" must be a non-empty json array'),
    );
  });
});
