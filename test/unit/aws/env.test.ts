import { describe, expect, it } from 'vitest';
import { numberEnv, optionalEnv, requireEnv, sdkTimeouts } from '../../../lib/aws/env.js';

describe('lib/aws/env', () => {
  it('requireEnv returns the value and names a missing or empty variable', () => {
    expect(requireEnv('A', { A: 'x' })).toBe('x');
    expect(() => requireEnv('A', {})).toThrow(new TypeError('environment variable "A" is required'));
    expect(() => requireEnv('A', { A: '' })).toThrow(TypeError);
  });

  it('optionalEnv treats empty as unset', () => {
    expect(optionalEnv('A', { A: '' })).toBeUndefined();
    expect(optionalEnv('A', { A: 'y' })).toBe('y');
  });

  it('numberEnv parses positive numbers and names a bad value', () => {
    expect(numberEnv('N', { N: '262144' })).toBe(262144);
    expect(numberEnv('N', {})).toBeUndefined();
    for (const bad of ['0', '-1', 'abc', 'Infinity']) {
      expect(() => numberEnv('N', { N: bad })).toThrow(
        new TypeError('environment variable "N" must be a positive number'),
      );
    }
  });

  it('sdkTimeouts gives SDK clients a 1 s connect and a request timeout that throws, 5 s by default', () => {
    expect(sdkTimeouts()).toEqual({
      requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
    });
    expect(sdkTimeouts(2_000).requestHandler.requestTimeout).toBe(2_000);
  });
});
