/**
 * `forgebridge dlq list|replay`: the subscriber rules' dead-letter queue (the local stack's, on fauxqs, or a
 * stage's, from its stack's `SubscriberDeadLetterQueueUrl` output). `replay --subscriber NAME` sends each of that
 * subscriber's messages to it once (its function invoked with the event) and deletes a message only once it took it.
 */
import { type Command, Option } from 'commander';
import { progressLine } from '../bulk-replay.js';
import { type DeadLetter, letGo, replayDeadLetters } from '../dlq.js';
import { CliError, ExitCodes } from '../errors.js';
import { paint, print, printJson, startSpinner } from '../output.js';
import { positiveInteger } from '../parse.js';
import {
  DLQ_URL_OUTPUT,
  type DlqOptions,
  DlqQueues,
  failure,
  ORDERED_FAILURES_OUTPUT,
  queueName,
  readLetters,
  resolveDlq,
} from './dlq-target.js';
import { confirm, lambdaClient, subscriberNames } from './replay-bulk.js';

export { DLQ_URL_OUTPUT, type DlqOptions, DlqQueues, ORDERED_FAILURES_OUTPUT } from './dlq-target.js';

/** Registers `dlq list` and `dlq replay`. */
export function registerDlq(program: Command): void {
  const dlq = program
    .command('dlq')
    .description(
      "the subscriber rules' dead-letter queue: list it, or replay it to the subscriber that failed",
    );
  const common = (command: Command) =>
    command
      .option('--stage <name>', "a deployed stage's queue (default: the local stack's)")
      .option('--region <region>', "AWS region of the stage (default: AWS_REGION / the profile's)")
      .option('--stack <name>', 'CloudFormation stack of the stage (default: "forgebridge-<stage>")')
      .addOption(
        new Option(
          '--queue <queue>',
          "the rules' dead-letter queue, or the ordered subscribers' failure queue (their records read back)",
        )
          .choices(DlqQueues)
          .default('rules'),
      )
      .option(
        '--queue-url <url>',
        `the queue (default: the stack's "${DLQ_URL_OUTPUT}" / "${ORDERED_FAILURES_OUTPUT}" output, or the local stack's)`,
      )
      .addOption(
        new Option('--limit <n>', 'most messages read')
          .default(1_000)
          .argParser((value) => positiveInteger(value, '--limit')),
      )
      .option('--json', 'print JSON');

  common(
    dlq
      .command('list')
      .description('every message: its subscriber, delivery id, event and error')
      .option('--subscriber <name>', 'only the messages of this subscriber (its function key or name)'),
  )
    .addHelpText(
      'after',
      `
Each message is read and let go again at once: listing takes nothing out of the queue. "--queue ordered" lists
the ordered subscribers' failure queue, each pointer's records read back from the stream.

Examples:
  $ forgebridge dlq list
  $ forgebridge dlq list --subscriber onPush --json
  $ forgebridge dlq list --stage prod`,
    )
    .action(async (options: DlqOptions) => {
      process.exitCode = await runList(options);
    });

  common(
    dlq
      .command('replay')
      .description("send each of one subscriber's messages to it once; delete each once it took it")
      .requiredOption('--subscriber <name>', 'the subscriber (its function key or name)')
      .option('--dry-run', 'print the count and a sample, send nothing')
      .option('--yes', 'send without asking (needed off a terminal)')
      .addOption(
        new Option('--rate <n>', 'most messages sent per second')
          .default(10)
          .argParser((value) => positiveInteger(value, '--rate')),
      ),
  )
    .addHelpText(
      'after',
      `
The subscriber's function is invoked with each message's event (the local stack's through serverless-offline,
a stage's through AWS Lambda), "--rate" a second; a message is deleted only once the function took its event.
A message it fails on stays: run the command again. The messages of other subscribers are not touched.
"--queue ordered": an ordered subscriber's failures, each handed to it as the batch its stream mapping gave up on
(a "batchItemFailures" answer is a failure).

Examples:
  $ forgebridge dlq replay --subscriber onPush --dry-run
  $ forgebridge dlq replay --subscriber onIssuesOpened --stage prod --yes
  $ forgebridge dlq replay --queue ordered --subscriber onPullRequestOrdered --dry-run

Exit codes: 0 every message taken (or none), 1 some not, 2 bad input, 3 the queue not reachable.`,
    )
    .action(async (options: DlqOptions) => {
      process.exitCode = await runReplay(options);
    });
}

const SAMPLE = 5;

function letterLine(letter: DeadLetter): string {
  const when = letter.sentAt === undefined ? '-' : new Date(letter.sentAt).toISOString();
  const why = [letter.errorCode, letter.errorMessage]
    .filter(Boolean)
    .join(': ')
    .replace(/\s+/g, ' ')
    .slice(0, 160);
  return `  ${when}  ${letter.deliveryId ?? paint('dim', '(no delivery id)')}  ${paint('cyan', letter.detailType ?? '?')}  ${letter.subscriber ?? paint('dim', '(no target)')}${why === '' ? '' : `  ${paint('dim', why)}`}${letter.problem === undefined ? '' : `  ${paint('red', letter.problem)}`}`;
}

function letterJson(letter: DeadLetter): Record<string, unknown> {
  const { receiptHandle: _handle, event: _event, ...rest } = letter;
  return Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined));
}

function bySubscriber(letters: readonly DeadLetter[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const letter of letters) {
    const name = letter.subscriber ?? '(no target)';
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

/** The messages of `names` (a function key or name, as {@link subscriberNames} spells it). */
function ofSubscriber(letters: readonly DeadLetter[], names: readonly string[]): DeadLetter[] {
  return letters.filter((letter) => letter.subscriber !== undefined && names.includes(letter.subscriber));
}

function stageOf(options: DlqOptions): string {
  return options.stage ?? 'local';
}

async function runList(options: DlqOptions): Promise<number> {
  const names =
    options.subscriber === undefined ? undefined : subscriberNames(options.subscriber, stageOf(options));
  const target = await resolveDlq(options);
  try {
    const spinner = startSpinner(`reading ${queueName(options)} (${target.label})`);
    let letters: DeadLetter[];
    try {
      letters = await readLetters(target, 60, options.limit);
      await letGo(target.sqs, target.queueUrl, letters);
    } catch (error) {
      throw failure(error, target, queueName(options));
    } finally {
      spinner.stop();
    }
    const shown = names === undefined ? letters : ofSubscriber(letters, names);
    if (options.json === true) {
      printJson({ queueUrl: target.queueUrl, count: shown.length, messages: shown.map(letterJson) });
      return ExitCodes.ok;
    }
    const counts = [...bySubscriber(letters)].map(([name, count]) => `${name} ${count}`).join(', ');
    print(
      `${paint('bold', String(shown.length))} message${shown.length === 1 ? '' : 's'} in ${queueName(options)}${options.subscriber === undefined ? '' : ` for ${options.subscriber}`}  ${paint('dim', `${target.label}${letters.length === 0 ? '' : `; by subscriber: ${counts}`}${letters.length >= options.limit ? `; the first ${options.limit} read (--limit)` : ''}`)}`,
    );
    for (const letter of shown) print(letterLine(letter));
    return ExitCodes.ok;
  } finally {
    target.sqs.destroy();
  }
}

/**
 * Replays the subscriber's messages (those `only` keeps, when given: `replay --since … --outcome dead-lettered`
 * narrows them to a window, a source and an event); the rest are let go untouched.
 */
export async function runReplay(
  options: DlqOptions,
  only?: (letter: DeadLetter) => boolean,
): Promise<number> {
  const names = subscriberNames(options.subscriber as string, stageOf(options));
  const target = await resolveDlq(options);
  // Held for the whole run (SQS allows 12 hours): a run cut short lets them be seen again after that.
  const holdSeconds = Math.min(43_200, Math.max(900, Math.ceil(options.limit / options.rate) * 2 + 120));
  let held: DeadLetter[] = [];
  try {
    const spinner = startSpinner(`reading ${queueName(options)} (${target.label})`);
    let letters: DeadLetter[];
    try {
      letters = await readLetters(target, holdSeconds, options.limit);
    } catch (error) {
      throw failure(error, target, queueName(options));
    } finally {
      spinner.stop();
    }
    const mine = ofSubscriber(letters, names).filter((letter) => only === undefined || only(letter));
    held = mine.filter((letter) => letter.event !== undefined);
    // Every other message is let go at once: another subscriber's, or one that is not an event.
    const others = letters.filter((letter) => !held.includes(letter));
    try {
      await letGo(target.sqs, target.queueUrl, others);
    } catch (error) {
      throw failure(error, target, queueName(options));
    }
    const subscriber = held[0]?.subscriber ?? names.at(-1) ?? (options.subscriber as string);
    const unreadable = mine.length - held.length;
    const summary = { subscriber, queueUrl: target.queueUrl, selected: held.length, unreadable };
    if (options.json !== true) {
      const counts = [...bySubscriber(letters)].map(([name, count]) => `${name} ${count}`).join(', ');
      print(
        `${paint('bold', String(held.length))} message${held.length === 1 ? '' : 's'} for ${subscriber} in ${queueName(options)}  ${paint('dim', `${target.label}${letters.length === 0 ? '' : `; by subscriber: ${counts}`}`)}`,
      );
      for (const letter of held.slice(0, SAMPLE)) print(letterLine(letter));
      if (held.length > SAMPLE) print(paint('dim', `  and ${held.length - SAMPLE} more`));
      if (unreadable > 0)
        print(paint('yellow', `  ${unreadable} of its messages are not events: left in the queue`));
    }
    if (options.dryRun === true || held.length === 0) {
      if (options.json === true) {
        printJson({
          ...summary,
          dryRun: options.dryRun === true,
          sample: held.slice(0, SAMPLE).map(letterJson),
        });
      }
      await letGo(target.sqs, target.queueUrl, held);
      held = [];
      return ExitCodes.ok;
    }
    await confirm(options, held.length, subscriber);
    const lambda = lambdaClient(target);
    const interactive = process.stderr.isTTY === true && options.json !== true;
    const started = Date.now();
    try {
      const run = await replayDeadLetters({
        sqs: target.sqs,
        queueUrl: target.queueUrl,
        lambda,
        functionName: subscriber,
        letters: held,
        ratePerSecond: options.rate,
        onProgress: (done, failed) => {
          if (interactive) {
            process.stderr.write(
              `\r${progressLine(done, held.length, failed, Date.now() - started)}\u001b[K`,
            );
          }
        },
      });
      held = [];
      if (interactive) process.stderr.write('\n');
      if (options.json === true) printJson({ ...summary, ...run });
      else {
        print(
          `${paint(['bold', run.failed === 0 ? 'green' : 'red'], run.failed === 0 ? 'replayed' : 'replayed with failures')}  ${run.sent} to ${subscriber}, ${run.deleted} message${run.deleted === 1 ? '' : 's'} deleted  ${paint('dim', `${(run.durationMs / 1000).toFixed(1)} s${run.failed === 0 ? '' : `, ${run.failed} failed (left in the queue)`}`)}`,
        );
        for (const failed of run.failures) print(`  ${paint('red', failed.deliveryId)}  ${failed.error}`);
        if (run.failed > 0) print(paint('dim', '  run the same command again to send what is still failing'));
      }
      return run.failed === 0 && run.failures.length === 0 ? ExitCodes.ok : ExitCodes.failed;
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw failure(error, target, `function "${subscriber}"`);
    } finally {
      lambda.destroy();
    }
  } finally {
    // What is still held when the run stopped on an error is let go, so nothing waits out its hold.
    if (held.length > 0) await letGo(target.sqs, target.queueUrl, held).catch(() => undefined);
    target.sqs.destroy();
  }
}
