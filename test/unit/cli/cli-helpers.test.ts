import { describe, expect, it } from 'vitest';
import { eventPattern, functionName, serverlessSnippet } from '../../../lib/cli/commands/rules.js';
import { CliError, ExitCodes } from '../../../lib/cli/errors.js';
import {
  closestName,
  editDistance,
  findSample,
  forgeSpelling,
  parseEventName,
} from '../../../lib/cli/events.js';
import {
  DEFAULT_WEBHOOK_URL,
  DEVELOPMENT_WEBHOOK_SECRET,
  resolveTarget,
} from '../../../lib/cli/local-stack.js';
import { oneLine } from '../../../lib/cli/output.js';
import { commanderMessage } from '../../../lib/cli/program.js';
import { DEVELOPMENT_WEBHOOK_SECRET as STACK_SECRET } from '../../../local-stack/stack.js';

describe('parseEventName()', () => {
  it('splits a known name into event and action, and knows whether the event has actions', () => {
    expect(parseEventName('issues.opened')).toEqual({
      full: 'issues.opened',
      event: 'issues',
      action: 'opened',
      hasActions: true,
    });
    expect(parseEventName('push')).toEqual({
      full: 'push',
      event: 'push',
      action: undefined,
      hasActions: false,
    });
    expect(parseEventName('repository_dispatch.anything-goes').action).toBe('anything-goes');
  });

  it("takes the forge's spelling and reports the neutral name", () => {
    expect(parseEventName('github_app_authorization.revoked').full).toBe('forge_app_authorization.revoked');
    expect(forgeSpelling('forge_app_authorization')).toBe('github_app_authorization');
    expect(forgeSpelling('issues')).toBe('issues');
  });

  it('refuses an unknown name with the closest known one, and without one when nothing is close', () => {
    expect(() => parseEventName('issue.opened')).toThrow(
      new CliError('unknown event "issue.opened" (did you mean "issues.opened"?)'),
    );
    expect(() => parseEventName('zzzzzzzzzzzz')).toThrow(new CliError('unknown event "zzzzzzzzzzzz"'));
    expect(() => parseEventName('')).toThrow(CliError);
    try {
      parseEventName('nope\u0000');
    } catch (error) {
      expect((error as CliError).exitCode).toBe(ExitCodes.usage);
      expect((error as CliError).message).toContain('"nope?"');
    }
  });
});

describe('closestName() and editDistance()', () => {
  it('measures insertions, deletions and substitutions', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('push', 'push')).toBe(0);
  });

  it('suggests only a likely typo', () => {
    expect(closestName('pusj', ['push', 'pull_request'])).toBe('push');
    expect(closestName('deployment', ['push', 'issues'])).toBeUndefined();
  });
});

describe('findSample()', () => {
  it('finds the first example of an event and action, with the name the forge sends', () => {
    const sample = findSample(parseEventName('issues.opened'));
    expect(sample.nativeName).toBe('issues');
    expect(sample.payload.action).toBe('opened');
    expect(findSample(parseEventName('push')).payload).toHaveProperty('ref');
  });

  it('says to pass a file when the catalogue event has no example', () => {
    expect(() => findSample(parseEventName('content_reference.created'))).toThrow(
      new CliError('no sample payload for "content_reference.created": pass one with "--file"'),
    );
  });
});

describe('eventPattern()', () => {
  it('matches detail-type for an event.action and for an event without actions', () => {
    expect(eventPattern(parseEventName('issues.opened'), 'forge.webhooks')).toEqual({
      source: ['forge.webhooks'],
      'detail-type': ['issues.opened'],
    });
    expect(eventPattern(parseEventName('push'), 's')).toEqual({ source: ['s'], 'detail-type': ['push'] });
  });

  it('matches every action of an event through detail.event, and the forge through detail.forge', () => {
    expect(eventPattern(parseEventName('issues'), 's', 'gitea')).toEqual({
      source: ['s'],
      detail: { event: ['issues'], forge: ['gitea'] },
    });
  });
});

describe('serverlessSnippet()', () => {
  it('writes a function subscribed to the pattern on the stack bus', () => {
    const pattern = eventPattern(parseEventName('issues'), 'forge.webhooks', 'gitlab');
    expect(
      serverlessSnippet(pattern, functionName(parseEventName('issues')), 'functions/x/handler.handler', true),
    ).toBe(
      [
        'functions:',
        '  onIssues:',
        '    handler: functions/x/handler.handler',
        '    events:',
        '      - eventBridge:',
        '          eventBus: !GetAtt Bus.Name',
        '          pattern:',
        '            source:',
        `              - \${self:custom.forgebridge.source}`,
        '            detail:',
        '              event:',
        '                - issues',
        '              forge:',
        '                - gitlab',
        `          retryPolicy: \${self:custom.forgebridge.retryPolicy}`,
        '          deadLetterQueueArn: !GetAtt SubscriberDeadLetterQueue.Arn',
        '    iamRoleStatements:',
        `      - \${self:custom.forgebridge.iam.claimChecksRead}`,
      ].join('\n'),
    );
  });

  it('quotes a YAML scalar that would read as another type', () => {
    const snippet = serverlessSnippet({ source: ['yes'], 'detail-type': ['a b'] }, 'onX', 'h', false);
    expect(snippet).toContain('- "yes"');
    expect(snippet).toContain('- "a b"');
  });

  it('names the function after the event', () => {
    expect(functionName(parseEventName('pull_request_review.submitted'))).toBe(
      'onPullRequestReviewSubmitted',
    );
  });
});

describe('resolveTarget()', () => {
  it('uses the same development secret as the local stack', () => {
    expect(DEVELOPMENT_WEBHOOK_SECRET).toBe(STACK_SECRET);
  });

  it('prefers the options, then the environment', () => {
    expect(resolveTarget({ url: 'http://a/x', secret: 's' }, {})).toEqual({
      url: 'http://a/x',
      secret: 's',
      local: false,
      forge: 'generic',
    });
    expect(
      resolveTarget({}, { FORGEBRIDGE_WEBHOOK_URL: 'https://b/y', FORGEBRIDGE_WEBHOOK_SECRET: 'one,two' }),
    ).toEqual({
      url: 'https://b/y',
      secret: 'one',
      local: false,
      forge: 'generic',
    });
  });

  it('falls back on the local stack (its state file or its defaults)', () => {
    const target = resolveTarget({}, { FORGEBRIDGE_STATE_FILE: '/nonexistent/forgebridge-state.json' });
    expect(target.local).toBe(true);
    expect(target.url.startsWith('http://127.0.0.1:')).toBe(true);
    expect(target.secret).toBe(DEVELOPMENT_WEBHOOK_SECRET);
    expect(target.url).toBe(DEFAULT_WEBHOOK_URL);
    expect(DEFAULT_WEBHOOK_URL).toBe('http://127.0.0.1:3000/webhooks');
  });

  it('appends a source to the URL, except "default"', () => {
    expect(resolveTarget({ url: 'http://a/webhooks/', secret: 's', source: 'gitlab' }, {}).url).toBe(
      'http://a/webhooks/gitlab',
    );
    expect(resolveTarget({ url: 'http://a/webhooks', secret: 's', source: 'default' }, {}).url).toBe(
      'http://a/webhooks',
    );
  });

  it('refuses a missing secret with a URL, a non-http URL and a bad source name', () => {
    expect(() => resolveTarget({ url: 'http://a/x' }, {})).toThrow(
      new CliError('missing secret: pass "--secret" (or set FORGEBRIDGE_WEBHOOK_SECRET) with "--url"'),
    );
    expect(() => resolveTarget({ url: 'file:///etc/passwd', secret: 's' }, {})).toThrow(
      new CliError('"--url" must be an http or https URL'),
    );
    expect(() =>
      resolveTarget({}, { FORGEBRIDGE_WEBHOOK_URL: 'nope', FORGEBRIDGE_WEBHOOK_SECRET: 's' }),
    ).toThrow(new CliError('"FORGEBRIDGE_WEBHOOK_URL" must be an http or https URL'));
    expect(() => resolveTarget({ url: 'http://a', secret: 's', source: 'Bad/Name' }, {})).toThrow(CliError);
  });
});

describe('error lines', () => {
  it("writes commander's messages in the house style on one line", () => {
    expect(commanderMessage("error: unknown option '--secert'\n(Did you mean --secret?)")).toBe(
      'unknown option "--secert" (did you mean "--secret"?)',
    );
    expect(
      commanderMessage(
        "error: option '--forge <forge>' argument 'svn' is invalid. Allowed choices are generic, github.",
      ),
    ).toBe('option "--forge <forge>" argument "svn" is invalid: allowed choices are generic, github');
  });

  it('joins lines and replaces control characters', () => {
    expect(oneLine('a\n  b\r\n\nc\u0007')).toBe('a b c?');
  });
});
