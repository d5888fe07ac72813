import type { Command } from 'commander';
import type { DeliveryLog, SourceHook, WebhookSourceConfig } from '../../aws/internal.js';
import { deliveryLogOf } from '../../webhooks/index.js';
import {
  checkedHook,
  pickSource,
  type SourceEndpoint,
  type StageOptions,
  sourceEndpoint,
  stageSources,
} from '../connect-source.js';
import { runTestDelivery, type TestOutcome } from '../connect-test.js';
import { openLog } from '../delivery-log.js';
import { CliError, ExitCodes } from '../errors.js';
import { type ForgeClient, forgeClient } from '../forge-client.js';
import {
  attemptsRequest,
  createRequest,
  differences,
  type ForgeHook,
  forgeOf,
  getRequest,
  type HookPlace,
  hookFindings,
  listRequest,
  placeLabel,
  readAttempts,
  readHook,
  updateRequest,
  type WantedHook,
} from '../forge-hooks.js';
import { HOOK_APIS, type HookForge, HookForges, type PlaceOptions } from '../hook-apis/index.js';
import { type HookEntry, writeHook } from '../hook-config-file.js';
import { projectEvents, type RoutedEvents } from '../hook-events.js';
import { print } from '../output.js';
import { positiveInteger } from '../parse.js';

interface ConnectOptions extends StageOptions, PlaceOptions {
  source?: string;
  api?: string;
  tokenEnv?: string;
  provider?: string;
  allEvents?: boolean;
  dryRun?: boolean;
  check?: boolean;
  timeout: string;
}

/** Registers `connect github`, `connect gitlab` and `connect --check`. */
export function registerConnect(program: Command): void {
  const connect = program
    .command('connect')
    .description(
      "create or update a forge's hook for a source, prove it with the forge's test delivery, and write it into config/<stage>.yml",
    )
    .option(
      '--check',
      "read every hook the stage's file names from its forge and report what is wrong (exit 1 if anything)",
    );
  addCommon(connect);
  connect.action(async (options: ConnectOptions) => {
    if (options.check !== true)
      throw new CliError('name the forge ("connect github" or "connect gitlab") or pass "--check"');
    await check(undefined, options);
  });
  for (const forge of HookForges) {
    const api = HOOK_APIS[forge];
    const sub = connect.command(forge).description(`connect a ${api.placeWords} to a source`);
    for (const [flags, description] of api.placeOptions) sub.option(flags, description);
    // The common options are connect's own (given before or after the forge): the help shows them here too.
    sub.configureHelp({ showGlobalOptions: true });
    sub.addHelpText(
      'after',
      `
The token comes from the environment variable "--token-env" names, never from the command line. The source's
secret is read from the local stack or the stage's SSM parameter and never printed.

Examples:
  $ GITHUB_TOKEN=... forgebridge connect github --repo acme/web --token-env GITHUB_TOKEN
  $ forgebridge connect gitlab --project acme/web --stage prod --token-env GITLAB_TOKEN --dry-run
  $ forgebridge connect --check --stage prod --token-env GITHUB_TOKEN

Exit codes: 0 connected (or nothing wrong), 1 the test delivery failed (or --check found a problem), 2 bad input,
3 the forge, the stack or AWS could not be reached.`,
    );
    sub.action(async (_options: ConnectOptions, command: Command) => {
      const options = command.optsWithGlobals<ConnectOptions>();
      if (options.check === true) await check(forge, options);
      else await connectHook(forge, options);
    });
  }
}

function addCommon(command: Command): void {
  command
    .option('--stage <name>', 'the deployed stage (default: the local stack, config/local.yml)')
    .option(
      '--dir <path>',
      'the project directory holding config/ and serverless.yml (default: the working directory)',
    )
    .option('--source <name>', "the source to connect (default: the stage's one source of the forge)")
    .option(
      '--api <url>',
      "the forge's REST API (default: https://api.github.com, https://gitlab.com/api/v4)",
    )
    .option('--token-env <name>', 'the environment variable holding the forge token')
    .option(
      '--provider <name>',
      "the token-store provider the reconciler calls the API with (default: the stage's one OAuth client)",
    )
    .option('--all-events', "subscribe to every event, not only those the stage's rules route")
    .option('--dry-run', 'print what would be done; change nothing at the forge or in the file')
    .option('--timeout <seconds>', 'how long to wait for the test delivery to show in the delivery log', '30')
    .option('--region <region>', "AWS region of the stage (default: AWS_REGION / the profile's)")
    .option('--stack <name>', 'CloudFormation stack of the stage (default: "forgebridge-<stage>")')
    .option('--url <url>', "the ingest's base URL (default: the local stack's, or the stage stack's output)");
}

/** The hook's place from the options: exactly one of the forge's two. */
export function placeOf(forge: HookForge, options: ConnectOptions): HookPlace {
  return HOOK_APIS[forge].placeOf(options);
}

/** The forge token from the variable `--token-env` names; never from the command line. */
export function tokenFrom(
  options: Pick<ConnectOptions, 'tokenEnv'>,
  env: NodeJS.ProcessEnv = process.env,
): { token: string; label: string } {
  const name = options.tokenEnv;
  if (name === undefined)
    throw new CliError('missing "--token-env <NAME>": the environment variable holding the forge token');
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    throw new CliError('"--token-env" must be an environment variable name (GITHUB_TOKEN)');
  const token = env[name];
  if (token === undefined || token.trim() === '')
    throw new CliError(`the environment variable ${name} ("--token-env") is not set or empty`);
  return { token: token.trim(), label: `$${name}` };
}

function routed(forge: HookForge, options: ConnectOptions): RoutedEvents {
  return options.allEvents === true ? { all: true } : projectEvents(options.dir ?? process.cwd(), forge);
}

function eventsFor(forge: HookForge, events: RoutedEvents): string[] {
  return HOOK_APIS[forge].events(events);
}

/** The hook entry a source names, in the reconciler's shape. */
export function hookEntry(place: HookPlace, id: number, api: string, provider: string): HookEntry {
  const { kind, ...where } = place;
  return { kind, api, id, ...where, provider };
}

/** Every hook of the place, all pages. */
async function listHooks(client: ForgeClient, place: HookPlace): Promise<ForgeHook[]> {
  const hooks: ForgeHook[] = [];
  for (let page = 1; page <= 20; page += 1) {
    const { body } = await client.send(listRequest(place, page));
    const items = Array.isArray(body) ? body : [];
    for (const item of items) {
      const hook = readHook(forgeOf(place), item);
      if (hook !== undefined) hooks.push(hook);
    }
    if (items.length < 100) break;
  }
  return hooks;
}

async function connectHook(forge: HookForge, options: ConnectOptions): Promise<void> {
  const place = placeOf(forge, options);
  const { token, label } = tokenFrom(options);
  const timeoutMs = positiveInteger(options.timeout, '--timeout') * 1000;
  const stage = stageSources(options);
  const source = pickSource(stage, forge, options.source);
  const provider = options.provider ?? stage.defaultProvider;
  if (provider === undefined) {
    throw new CliError(
      `pass "--provider <name>": the stage has ${stage.providers.length} OAuth clients (${stage.providers.join(', ')})`,
    );
  }
  // The forge's public API by default (`--api` names another: GitHub Enterprise, a self-managed GitLab).
  const api = (options.api ?? deliveryLogOf(forge).api).replace(/\/+$/, '');
  // The hook as the reconciler will read it: the same checks (https, http on loopback only; the names).
  const entry = checkedHook(forge, hookEntry(place, 1, api, provider)) as SourceHook;
  const endpoint = await sourceEndpoint(options, source);
  const secret = await endpoint.secret();
  const wanted: WantedHook = { url: endpoint.url, secret, events: eventsFor(forge, routed(forge, options)) };
  const client = forgeClient({ forge, api: entry.api, token, tokenLabel: label, hidden: [secret] });
  const existing = (await listHooks(client, place)).find((hook) => hook.url === wanted.url);
  const where = `${forge} hook${existing === undefined ? '' : ` ${existing.id}`} on ${placeLabel(place)}`;
  if (options.dryRun === true) {
    for (const line of plan(existing, wanted, where, source, stage.file)) print(line);
    return;
  }
  let hook: ForgeHook;
  let keyed = false;
  if (existing === undefined) {
    hook = mustRead(forge, (await client.send(createRequest(place, wanted))).body);
    keyed = true;
  } else if (differences(existing, wanted).length > 0) {
    keyed = existing.hasSecret === false;
    hook = mustRead(
      forge,
      (await client.send(updateRequest(place, existing, wanted, { secret: keyed }))).body,
    );
  } else hook = existing;
  const log = openLog(endpoint.log);
  try {
    let outcome = await test(client, place, hook.id, log.log, source.name, endpoint, timeoutMs);
    if (!outcome.verified && outcome.secretProblem === true && !keyed) {
      // The forge never shows a secret: a hook that signs with another one is re-keyed once, then tested again.
      await client.send(updateRequest(place, hook, wanted, { secret: true }));
      outcome = await test(client, place, hook.id, log.log, source.name, endpoint, timeoutMs);
    }
    if (!outcome.verified) {
      throw new CliError(
        `${forge} hook ${hook.id} -> source ${source.name}: ${outcome.reason ?? 'the test delivery failed'}`,
        ExitCodes.failed,
      );
    }
    writeHook(stage.file, source.name, hookEntry(place, hook.id, entry.api, provider));
    print(
      `connected: ${forge} hook ${hook.id} -> source ${source.name}; ping verified in ${(outcome.ms / 1000).toFixed(1)} s`,
    );
  } finally {
    log.client.destroy();
  }
}

function test(
  client: ForgeClient,
  place: HookPlace,
  hookId: number,
  log: DeliveryLog,
  source: string,
  endpoint: SourceEndpoint,
  timeoutMs: number,
): Promise<TestOutcome> {
  return runTestDelivery({ client, place, hookId, log, source, url: endpoint.url, timeoutMs });
}

function mustRead(forge: HookForge, body: unknown): ForgeHook {
  const hook = readHook(forge, body);
  if (hook === undefined)
    throw new CliError(`the ${forge} api answered something that is not a hook`, ExitCodes.failed);
  return hook;
}

/** What `--dry-run` prints: the forge-side change, the test, the file. */
export function plan(
  existing: ForgeHook | undefined,
  wanted: WantedHook,
  where: string,
  source: Pick<WebhookSourceConfig, 'name'>,
  file: string,
): string[] {
  const events = wanted.events.join(', ');
  const settings = `url ${wanted.url}, content type json, TLS verification on, active, the source's secret, events ${events}`;
  const change =
    existing === undefined
      ? `would create a ${where}: ${settings}`
      : differences(existing, wanted).length === 0
        ? `${where} already posts to ${wanted.url} as it should: nothing to change`
        : `would update ${where} (${differences(existing, wanted).join(', ')}): ${settings}`;
  return [
    `dry run: ${change}`,
    `dry run: would have the forge send its test delivery and wait for source ${source.name}'s delivery log to show it verified`,
    `dry run: would write the hook into ${file} (source ${source.name})`,
  ];
}

/** `--check`: every hook of the stage's file (of one forge), read from its forge, one line per finding. */
async function check(only: HookForge | undefined, options: ConnectOptions): Promise<void> {
  const { token, label } = tokenFrom(options);
  const stage = stageSources(options);
  const hooked = stage.sources.filter(
    (source): source is WebhookSourceConfig & { hook: SourceHook } =>
      source.hook !== undefined &&
      source.hook.kind !== 'app' &&
      (only === undefined || (source.forge as string) === only) &&
      (options.source === undefined || source.name === options.source),
  );
  if (hooked.length === 0) {
    throw new CliError(
      `${stage.file} names no ${only === undefined ? '' : `${only} `}hook to check: run "forgebridge connect ${only ?? 'github'}" first`,
    );
  }
  let wrong = 0;
  for (const source of hooked) {
    const forge = source.forge as HookForge;
    const place = placeFromHook(source.hook);
    const endpoint = await sourceEndpoint(options, source);
    const client = forgeClient({ forge, api: source.hook.api, token, tokenLabel: label, hidden: [] });
    const id = source.hook.id as number;
    const name = `source ${source.name}, ${forge} hook ${id} on ${placeLabel(place)}`;
    const answer = await client.send(getRequest(place, id), [404]);
    if (answer.status === 404) {
      print(`${name}: not found at the forge (deleted, or the token may not see it)`);
      wrong += 1;
      continue;
    }
    const hook = mustRead(forge, answer.body);
    // The hook's recent deliveries, where the forge shows them to this token.
    const log = await client.send(attemptsRequest(place, id), [403, 404]);
    const attempts = log.status === 200 ? readAttempts(forge, log.body) : [];
    const events = eventsFor(forge, routed(forge, options));
    const findings = hookFindings(hook, { url: endpoint.url, events }, attempts);
    if (findings.length === 0) print(`${name}: ok`);
    for (const finding of findings) print(`${name}: ${finding}`);
    if (findings.length > 0) wrong += 1;
  }
  process.exitCode = wrong > 0 ? ExitCodes.failed : ExitCodes.ok;
}

function placeFromHook(hook: SourceHook): HookPlace {
  switch (hook.kind) {
    case 'repo':
      return { kind: 'repo', owner: hook.owner as string, repo: hook.repo as string };
    case 'org':
      return { kind: 'org', org: hook.org as string };
    case 'project':
      return { kind: 'project', project: hook.project as string };
    case 'group':
      return { kind: 'group', group: hook.group as string };
    default:
      throw new CliError('an App\'s hook ("kind: app") is the App\'s settings: "connect" does not manage it');
  }
}
