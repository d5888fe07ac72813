/**
 * The webhook source `forgebridge connect` connects a hook to: its name and forge (the stage file's sources), the
 * URL the forge must post to, the secret it must sign with (the local stack's state file, or the source's SSM
 * parameter of a deployed stage: never printed), the delivery log where the forge's test delivery shows, and
 * the stage file the hook is written into.
 */
import { SSMClient } from '@aws-sdk/client-ssm';
import { DEFAULT_SOURCE } from '../aws/core/index.js';
import {
  readIngestConfig,
  type SourceHook,
  stageConfigPath,
  stageDefaults,
  type WebhookSourceConfig,
} from '../aws/internal.js';
import { stageConfig } from './commands/config.js';
import { awsFailure, type LogTarget, resolveLogTarget, stackOutputs, stageRegion } from './delivery-log.js';
import { CliError, ExitCodes } from './errors.js';
import type { HookForge } from './hook-apis/index.js';
import { checkUrl, localSources } from './local-stack.js';
import { ParameterSecrets } from './secret-rotation.js';
import { readStackState, stateFile } from './state-file.js';

/** The CloudFormation outputs naming the ingest's doors: its Function URL, else the HTTP API. */
export const INGEST_URL_OUTPUTS = ['IngestLambdaFunctionUrl', 'HttpApiUrl'] as const;

/** Where a stage is read. */
export interface StageOptions {
  stage?: string | undefined;
  dir?: string | undefined;
  region?: string | undefined;
  stack?: string | undefined;
  /** The ingest's base URL, over the stack's outputs (a custom domain in front of it). */
  url?: string | undefined;
}

/** A source of the stage file, as the ingest reads it. */
export interface StageSources {
  /** `local` for the local stack. */
  stage: string;
  /** The stage file (`config/<stage>.yml` under the project). */
  file: string;
  sources: WebhookSourceConfig[];
  /** The token-store providers of the stage's OAuth clients, and its `FORGEBRIDGE_OAUTH_PROVIDER`. */
  providers: string[];
  defaultProvider: string | undefined;
}

/** The stage's sources and OAuth providers, from its file (`--dir`, the working directory by default). */
export function stageSources(options: StageOptions): StageSources {
  const stage = options.stage ?? 'local';
  const dir = options.dir ?? process.cwd();
  const config = stageConfig({ stage, dir });
  const settings = { ...config.settings, IS_OFFLINE: stage === 'local' ? 'true' : '' };
  const { sources } = readIngestConfig(settings);
  let providers: string[] = [];
  try {
    providers = (JSON.parse(config.settings.FORGEBRIDGE_OAUTH_CLIENTS) as { provider?: unknown }[])
      .map((client) => client.provider)
      .filter((provider): provider is string => typeof provider === 'string');
  } catch {
    // Checked by stageConfig: a list of clients.
  }
  const chosen = config.settings.FORGEBRIDGE_OAUTH_PROVIDER;
  return {
    stage,
    file: stageConfigPath(stage, dir),
    sources,
    providers,
    defaultProvider: chosen !== '' ? chosen : providers.length === 1 ? providers[0] : undefined,
  };
}

/** The source to connect: `--source`, else the stage's one source of the forge. */
export function pickSource(
  stage: StageSources,
  forge: HookForge,
  name: string | undefined,
): WebhookSourceConfig {
  const listed = stage.sources.map((source) => `${source.name} (${source.forge})`).join(', ');
  if (name !== undefined) {
    const source = stage.sources.find((candidate) => candidate.name === name);
    if (source === undefined)
      throw new CliError(`${stage.file} has no source "${name}" (its sources: ${listed})`);
    if (source.forge !== forge) {
      throw new CliError(
        `source "${name}" is a ${source.forge} source: a ${forge} hook needs a ${forge} source`,
      );
    }
    return source;
  }
  const matching = stage.sources.filter((candidate) => candidate.forge === forge);
  if (matching.length === 1) return matching[0] as WebhookSourceConfig;
  throw new CliError(
    matching.length === 0
      ? `${stage.file} has no ${forge} source (its sources: ${listed})`
      : `${stage.file} has ${matching.length} ${forge} sources: pass "--source <name>" (its sources: ${listed})`,
  );
}

/** Where a source is reached and read. */
export interface SourceEndpoint {
  /** The URL the forge posts to. */
  url: string;
  /** The log its deliveries are recorded in. */
  log: LogTarget;
  /** The secret the forge signs with (the newest of the source's list); read only when asked. */
  secret(): Promise<string>;
}

/** The source's path under the ingest's base: `/webhooks`, `/webhooks/<name>`. */
export function sourcePath(name: string): string {
  return name === DEFAULT_SOURCE ? '/webhooks' : `/webhooks/${name}`;
}

/** The URL, log and secret of a source: the running local stack's, or the deployed stage's. */
export async function sourceEndpoint(
  options: StageOptions,
  source: Pick<WebhookSourceConfig, 'name' | 'secretParameter'>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SourceEndpoint> {
  if (options.url !== undefined) checkUrl(options.url, '--url');
  const given = options.url?.replace(/\/+$/, '');
  if (options.stage === undefined || options.stage === 'local') {
    const log = await resolveLogTarget({}, env);
    const local = localSources(readStackState(stateFile(env)), env).find(
      (candidate) => candidate.name === source.name,
    );
    if (local === undefined) {
      throw new CliError(`the local stack has no source "${source.name}": restart "npm start"`);
    }
    return {
      url: given === undefined ? local.url : `${given}${sourcePath(source.name)}`,
      log,
      secret: async () => newest(local.secret),
    };
  }
  const region = stageRegion({ stage: options.stage, region: options.region }, env);
  const stack = options.stack ?? `forgebridge-${options.stage}`;
  let base = given;
  if (base === undefined) {
    const outputs = await stackOutputs(stack, region);
    const door = INGEST_URL_OUTPUTS.map((name) => outputs[name]).find(
      (value) => value !== undefined && value !== '',
    );
    if (door === undefined) {
      throw new CliError(
        `stack "${stack}" has no ingest URL output (${INGEST_URL_OUTPUTS.join(', ')}): pass "--url"`,
      );
    }
    base = door.replace(/\/+$/, '');
  }
  const log = await resolveLogTarget({ stage: options.stage, region, stack }, env);
  const parameter = source.secretParameter;
  return {
    url: `${base}${sourcePath(source.name)}`,
    log,
    async secret() {
      if (parameter === undefined) throw new CliError(`source "${source.name}" names no "secretParameter"`);
      const ssm = new SSMClient(region === undefined ? {} : { region });
      const label = {
        kind: 'aws' as const,
        endpoint: undefined,
        label: `stage "${options.stage}"`,
        fromState: false,
      };
      try {
        const { secrets } = await new ParameterSecrets(ssm, parameter).read();
        if (secrets.length === 0) {
          throw new CliError(
            `parameter "${parameter}" holds no secret: put the source's secret there first`,
            ExitCodes.usage,
          );
        }
        return newest(secrets.join(','));
      } catch (error) {
        throw awsFailure(error, label, `parameter "${parameter}"`);
      } finally {
        ssm.destroy();
      }
    },
  };
}

/** The newest secret of a comma-separated list: the last (`secret rotate` appends the new one). */
function newest(list: string): string {
  const secrets = list.split(',').filter((secret) => secret.length > 0);
  const secret = secrets.at(-1);
  if (secret === undefined) throw new CliError('the source has no secret');
  return secret;
}

/**
 * The source's `hook` checked by the reconciler's own reader (the kind's fields, the API base: https, http only on
 * loopback); a one-line error naming the option otherwise.
 */
export function checkedHook(forge: HookForge, hook: Record<string, unknown>): SourceHook {
  try {
    const [source] = readIngestConfig({
      ...stageDefaults('local'),
      FORGEBRIDGE_WEBHOOK_SOURCES: JSON.stringify([
        { name: 'connect', forge, secretParameter: '/connect', hook },
      ]),
      IS_OFFLINE: 'true',
    }).sources;
    return source?.hook as SourceHook;
  } catch (error) {
    const message = (error as Error).message;
    const field = /\.hook\.(\w+)/.exec(message)?.[1];
    const options: Record<string, string> = { owner: '--repo', repo: '--repo' };
    const option = field === undefined ? 'the hook' : (options[field] ?? `--${field}`);
    throw new CliError(`"${option}"${message.replace(/^.*?\.hook(\.\w+)?"/, '')}`);
  }
}
