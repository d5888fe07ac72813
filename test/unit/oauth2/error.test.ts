import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { configure, OAuth2BaseError, OAuth2Error, Response, resetConfig } from '../../../lib/oauth2/index.js';

afterEach(() => resetConfig());

function response(status: number, body: string, type = 'application/json'): Response {
  return new Response({ status, headers: { 'content-type': type }, body });
}

describe('OAuth2Error', () => {
  it('reads code and description from a standard error body, message "code: description" then the body', () => {
    const body = '{"error":"invalid_grant","error_description":"code expired"}';
    const error = new OAuth2Error(response(400, body));
    expect(error).toBeInstanceOf(OAuth2BaseError);
    expect(error.name).toBe('OAuth2Error');
    expect(error.code).toBe('invalid_grant');
    expect(error.description).toBe('code expired');
    expect(error.message).toBe(`invalid_grant: code expired\n${body}`);
    expect(error.response.status).toBe(400);
  });

  it('uses only the body when it is not a standard error, after the status of a 5xx', () => {
    const error = new OAuth2Error(response(502, '<html>bad gateway</html>', 'text/html'));
    expect(error.code).toBeUndefined();
    expect(error.description).toBeUndefined();
    expect(error.message).toBe('server error 502\n<html>bad gateway</html>');
  });

  it('writes "code: " with an empty description when only error is given', () => {
    expect(new OAuth2Error(response(400, '{"error":"invalid_scope"}')).message).toBe(
      'invalid_scope: \n{"error":"invalid_scope"}',
    );
  });

  it('redacts secrets and tokens from the body in the message, JSON and form alike', () => {
    const json = new OAuth2Error(
      response(400, '{"error":"x","access_token":"tok-123456","nested":{"client_secret":"sec-999999"}}'),
    );
    expect(json.message).toBe(
      'x: \n{"error":"x","access_token":"[FILTERED]","nested":{"client_secret":"[FILTERED]"}}',
    );
    const form = new OAuth2Error(
      response(400, 'error=x&refresh_token=rt-987654&state=ok', 'application/x-www-form-urlencoded'),
    );
    expect(form.message).toBe('x: \nerror=x&refresh_token=[FILTERED]&state=ok');
    const text = new OAuth2Error(response(500, 'failed for password: hunter22 today', 'text/plain'));
    expect(text.message).toBe('server error 500\nfailed for password: [FILTERED] today');
  });

  it('uses the configured filtered label and extra filtered keys', () => {
    configure((c) => {
      c.filteredLabel = '***';
      c.filteredDebugKeys.push('api_key');
    });
    const error = new OAuth2Error(response(400, '{"api_key":"k-1","token":"t-1"}'));
    expect(error.message).toBe('{"api_key":"***","token":"***"}');
  });

  it('shows no token in toJSON or inspect', () => {
    const error = new OAuth2Error(response(401, '{"error":"invalid_token","access_token":"leaky-token"}'));
    expect(JSON.stringify(error)).not.toContain('leaky-token');
    expect(inspect(error)).not.toContain('leaky-token');
    expect(error.toJSON()).toMatchObject({ name: 'OAuth2Error', code: 'invalid_token', status: 401 });
  });
});
