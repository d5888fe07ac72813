import { type Command, Option } from 'commander';
import { AwsDefaults } from '../../aws/core/index.js';
import { type Forge, Forges } from '../../webhooks/index.js';
import { type EventName, parseEventName } from '../events.js';
import { paint, print, printJson } from '../output.js';

interface RulesOptions {
  forge?: Forge;
  eventSource?: string;
  function?: string;
  handler?: string;
  json?: boolean;
}

/** An EventBridge event pattern. */
export type EventPattern = Record<string, unknown>;

/**
 * The EventBridge pattern that matches what the ingest publishes for `event[.action]` (lib/aws/ingest/
 * event-entry.ts): `Source` is the configured source, `DetailType` is `event.action` (or `event` when the
 * delivery has no action), `detail.event` the event name and `detail.forge` the forge preset. A plain event
 * that has actions matches every one of them through `detail.event`.
 */
export function eventPattern(name: EventName, source: string, forge?: Forge): EventPattern {
  const pattern: EventPattern = { source: [source] };
  const detail: Record<string, unknown> = {};
  if (name.action !== undefined || !name.hasActions) pattern['detail-type'] = [name.full];
  else detail.event = [name.event];
  if (forge !== undefined) detail.forge = [forge];
  if (Object.keys(detail).length > 0) pattern.detail = detail;
  return pattern;
}

/** `onIssuesOpened` for `issues.opened`. */
export function functionName(name: EventName): string {
  const words = name.full.split(/[._-]+/).filter((word) => word.length > 0);
  return `on${words.map((word) => word[0]?.toUpperCase() + word.slice(1)).join('')}`;
}

/**
 * A serverless.yml `functions` entry subscribing `functionName` to the pattern on the stack's bus, in the
 * repository's own form (serverless.yml: `Bus`, `custom.forgebridge.source`, the retry policy and the dead
 * letter queue of the example subscribers).
 */
export function serverlessSnippet(
  pattern: EventPattern,
  fn: string,
  handler: string,
  usesStackSource: boolean,
): string {
  const lines = [
    'functions:',
    `  ${fn}:`,
    `    handler: ${handler}`,
    '    events:',
    '      - eventBridge:',
    '          eventBus: !GetAtt Bus.Name',
    '          pattern:',
  ];
  for (const [key, value] of Object.entries(pattern)) {
    lines.push(`            ${key}:`);
    if (key === 'source' && usesStackSource) {
      lines.push(`              - \${self:custom.forgebridge.source}`);
    } else if (Array.isArray(value)) {
      for (const item of value) lines.push(`              - ${yamlScalar(item)}`);
    } else {
      for (const [field, values] of Object.entries(value as Record<string, unknown[]>)) {
        lines.push(`              ${field}:`);
        for (const item of values) lines.push(`                - ${yamlScalar(item)}`);
      }
    }
  }
  lines.push(
    `          retryPolicy: \${self:custom.forgebridge.retryPolicy}`,
    '          deadLetterQueueArn: !GetAtt SubscriberDeadLetterQueue.Arn',
    '    iamRoleStatements:',
    `      - \${self:custom.forgebridge.iam.claimChecksRead}`,
  );
  return lines.join('\n');
}

/** Registers `rules <event[.action]>`. */
export function registerRules(program: Command): void {
  program
    .command('rules')
    .description('print the EventBridge pattern of an event and a serverless.yml snippet subscribing to it')
    .argument('<event[.action]>', 'catalogue event name, for example "issues.opened" or "push"')
    .addOption(
      new Option('--forge <forge>', 'match only deliveries read with this forge preset').choices(Forges),
    )
    .option(
      '--event-source <source>',
      `EventBridge source the ingest publishes with (default: FORGEBRIDGE_SOURCE or "${AwsDefaults.source}")`,
    )
    .option(
      '--function <name>',
      'function name in the snippet (default: "on" + the event name in PascalCase)',
    )
    .option('--handler <path>', 'handler in the snippet (default: functions/<name>/handler.handler)')
    .option('--json', 'print the pattern and the snippet as JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ forgebridge rules issues.opened
  $ forgebridge rules pull_request --forge gitlab --json`,
    )
    .action((name: string, options: RulesOptions) => {
      const event = parseEventName(name);
      const source = options.eventSource ?? (process.env.FORGEBRIDGE_SOURCE || AwsDefaults.source);
      const pattern = eventPattern(event, source, options.forge);
      const fn = options.function ?? functionName(event);
      const handler = options.handler ?? `functions/${kebab(fn)}/handler.handler`;
      const snippet = serverlessSnippet(pattern, fn, handler, options.eventSource === undefined);
      if (options.json) {
        printJson({ event: event.full, pattern, serverless: snippet });
        return;
      }
      print(paint('bold', 'EventBridge pattern'));
      print(JSON.stringify(pattern, null, 2));
      print();
      print(paint('bold', 'serverless.yml'));
      print(snippet);
    });
}

function kebab(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}

function yamlScalar(value: unknown): string {
  const text = String(value);
  return /^[A-Za-z0-9_.-]+$/.test(text) && !/^(true|false|null|yes|no|on|off|~)$/i.test(text)
    ? text
    : JSON.stringify(text);
}
