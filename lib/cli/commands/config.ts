import { relative } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_SOURCE } from '../../aws/core/index.js';
// The stage's settings alone: the YAML parser and the functions' readers, never the AWS SDK.
import { readStageConfig, type StageConfig } from '../../aws/stage/index.js';
import { CliError } from '../errors.js';
import { paint, print, printJson } from '../output.js';

interface ConfigOptions {
  stage: string;
  dir?: string;
  json?: boolean;
}

/**
 * A stage's settings as `osls package --stage <name>` resolves them in this shell: config/<stage>.yml, the
 * environment over it, the defaults under both, checked by the functions' own readers. A wrong value is a usage
 * error naming it. The settings hold parameter names, never a secret.
 */
export function stageConfig(options: ConfigOptions, env: NodeJS.ProcessEnv = process.env): StageConfig {
  try {
    return readStageConfig({
      stage: options.stage,
      dir: options.dir ?? process.cwd(),
      env,
      // The local stack runs its functions offline: each secret comes from the environment.
      offline: options.stage === 'local',
    });
  } catch (error) {
    throw new CliError(`stage "${options.stage}": ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The lines `forgebridge config` prints: the file, every setting with where it came from, then the sources. */
export function configLines(config: StageConfig, dir: string): string[] {
  const file = config.file === undefined ? 'no file: defaults' : relative(dir, config.file) || config.file;
  const lines = [
    `${paint('bold', `stage ${config.stage}`)} (${file}; a FORGEBRIDGE_* variable set here overrides it)`,
  ];
  const width = Math.max(...Object.keys(config.settings).map((name) => name.length));
  for (const [name, value] of Object.entries(config.settings)) {
    const origin = config.origins[name as keyof typeof config.origins];
    const empty = name === 'FORGEBRIDGE_BUCKET' ? '(named by CloudFormation)' : '(library default)';
    const shown = value === '' ? paint('dim', empty) : value;
    const from = origin === 'default' ? '' : paint(origin === 'file' ? 'cyan' : 'yellow', `  ${origin}`);
    lines.push(`  ${name.padEnd(width)}  ${shown}${from}`);
  }
  lines.push('', paint('bold', 'webhook sources'));
  for (const source of config.sources) {
    const door = source.name === DEFAULT_SOURCE ? '/webhooks' : `/webhooks/${source.name}`;
    const secret = source.secretParameter === undefined ? 'the environment' : `SSM ${source.secretParameter}`;
    lines.push(`  ${source.name.padEnd(16)} ${door.padEnd(28)} secret from ${secret}`);
  }
  return lines;
}

/** Registers `forgebridge config`. */
export function registerConfig(program: Command): void {
  program
    .command('config')
    .description(
      "print a stage's deploy settings (config/<stage>.yml, the environment, the defaults), checked",
    )
    .option('--stage <name>', 'the stage, as `osls package --stage` names it', 'dev')
    .option('--dir <path>', 'the project directory holding config/ (default: the working directory)')
    .option('--json', 'print the settings, their origins and the sources as JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ forgebridge config --stage prod
  $ FORGEBRIDGE_LOG_LEVEL=INFO forgebridge config --stage prod --json`,
    )
    .action((options: ConfigOptions) => {
      const config = stageConfig(options);
      if (options.json) {
        printJson(config);
        return;
      }
      for (const line of configLines(config, options.dir ?? process.cwd())) print(line);
    });
}
