// A lib/aws logger that keeps each line, for the integration suites that assert on what was logged.
import type { LoggerLike } from '../../lib/aws/index.js';

/** A logger that keeps each line: its level, message and first field object. */
export function recordingLogger() {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (message: string, ...extra: unknown[]) =>
      void lines.push({ level, message, fields: (extra[0] ?? {}) as Record<string, unknown> });
  const logger: LoggerLike = { info: at('info'), warn: at('warn'), error: at('error') };
  return { logger, lines };
}
