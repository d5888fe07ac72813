/**
 * Terminal output of the CLI: colours through Node's `util.styleText` (which leaves them out when the stream
 * is not a TTY, or NO_COLOR is set), JSON for scripts, and a spinner on stderr while a request runs.
 */
import { styleText } from 'node:util';

type Format = Parameters<typeof styleText>[0];

/** Colours `text` for `stream`; plain when the stream has no colours (a pipe, a file, NO_COLOR). */
export function paint(format: Format, text: string, stream: NodeJS.WriteStream = process.stdout): string {
  // Node 20's styleText ignores `stream` and always colours: a pipe or a file (unless FORCE_COLOR asks) and a
  // terminal that takes no colours (NO_COLOR) get the plain text on every Node.
  if (!stream.isTTY && process.env.FORCE_COLOR === undefined) return text;
  if (stream.isTTY && typeof stream.hasColors === 'function' && !stream.hasColors()) return text;
  return styleText(format, text, { stream });
}

/** Writes one line to stdout. */
export function print(text = ''): void {
  process.stdout.write(`${text}\n`);
}

/** Writes a value as indented JSON to stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A running spinner; `stop()` clears its line. */
export interface Spinner {
  stop(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * Shows `text` with a spinner on stderr while work runs, only when stderr is a TTY (so pipes, files and
 * tests see nothing of it).
 */
export function startSpinner(text: string, stream: NodeJS.WriteStream = process.stderr): Spinner {
  if (!stream.isTTY) return { stop: () => undefined };
  let frame = 0;
  const draw = () => {
    stream.write(`\r${paint('cyan', FRAMES[frame % FRAMES.length] as string, stream)} ${text}`);
    frame += 1;
  };
  draw();
  const timer = setInterval(draw, 80);
  return {
    stop() {
      clearInterval(timer);
      stream.write('\r\x1b[K');
    },
  };
}

/** The first line of a message, with control characters replaced, so that an error is always one line. */
export function oneLine(message: string): string {
  return (
    message
      .split(/\r?\n/)
      .map((part) => part.trim())
      .filter((part) => part.length > 0)
      .join(' ')
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
      .replace(/[\u0000-\u001f\u007f]/g, '?')
  );
}

/** A byte count for people: `512 B`, `5.2 KB`, `2.0 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
