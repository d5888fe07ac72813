import { CliError } from './errors.js';

/** An option that must be a positive integer (`--timeout 5000`): the number, or a one-line error naming it. */
export function positiveInteger(value: string, option: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number <= 0) {
    throw new CliError(`"${option}" must be a positive integer`);
  }
  return number;
}

/** A receiver's answer body as JSON, or `undefined` when it is empty or not JSON. */
export function parseJson(text: string): unknown {
  try {
    return text.length === 0 ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
