import { describe, expect, it } from 'vitest';
import { findLeak } from '../helpers/secrets.js';

describe('log guard: findLeak()', () => {
  it('finds a registered secret', () => {
    expect(findLeak('client authenticated with s3cr3t-value', ['s3cr3t-value'])).toBe('a registered secret');
  });

  it('finds a JWT', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVl';
    expect(findLeak(`token ${jwt}`, [])).toBe('a JWT');
  });

  it('finds Bearer and Basic credentials unless filtered', () => {
    expect(findLeak('authorization: Bearer abcdef123456', [])).toBe('a Bearer credential');
    expect(findLeak('authorization: Basic Y2xpZW50OnNlY3JldA==', [])).toBe('a Basic credential');
    expect(findLeak('authorization: Bearer [FILTERED]', [])).toBeUndefined();
  });

  it('finds token fields in form, JSON and query text unless filtered', () => {
    expect(findLeak('grant_type=refresh_token&refresh_token=rt-123456', [])).toBe(
      'an unredacted token field',
    );
    expect(findLeak('{"access_token":"at-abcdef"}', [])).toBe('an unredacted token field');
    expect(findLeak('{"access_token":"[FILTERED]","refresh_token":null}', [])).toBeUndefined();
    expect(findLeak('client_secret=[FILTERED]&client_id=app', [])).toBeUndefined();
  });

  it('passes ordinary log lines', () => {
    expect(findLeak('delivery f1e2 published (issues.opened, 7042 bytes)', ['s3cr3t-value'])).toBeUndefined();
  });
});
