import type { CliError } from './errors.js';
import { startSpinner } from './output.js';

/** Network error codes as one reason each, for the one-line "could not reach" errors. */
export const NETWORK_REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** The answer to a delivery POSTed by the CLI, with its body read and its round trip timed. */
export interface PostAnswer {
  response: Response;
  text: string;
  durationMs: number;
}

/**
 * POSTs `body` to `url` behind a spinner, without following redirects, within `timeout` ms; a fetch failure
 * is thrown as the error `unreachable` makes of it.
 */
export async function postDelivery(
  url: string,
  headers: Record<string, string>,
  body: Uint8Array,
  timeout: number,
  unreachable: (error: unknown) => CliError,
): Promise<PostAnswer> {
  const started = performance.now();
  const spinner = startSpinner(`POST ${url}`);
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeout),
    });
    text = await response.text();
  } catch (error) {
    throw unreachable(error);
  } finally {
    spinner.stop();
  }
  return { response, text, durationMs: Math.round(performance.now() - started) };
}
