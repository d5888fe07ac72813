import { describe, expect, it } from 'vitest';

describe('runtime', () => {
  it('runs on the Node 22 that package.json pins, as Lambda nodejs22.x does', () => {
    expect(process.versions.node.split('.')[0]).toBe('22');
  });
});
