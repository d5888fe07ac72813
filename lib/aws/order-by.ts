// What an ordered stream is partitioned by, and its text form in the settings: shared by the stream's writer
// (lib/aws/publish) and the stage's settings (lib/aws/stage), which loads no AWS SDK.
import { resourceKeyAt } from '../webhooks/index.js';

/**
 * What an ordered stream keeps in order: each resource's deliveries (a pull request's, an issue's, a pushed ref's;
 * docs/forges.md), each repository's, or for a sender without a resource rule (Standard Webhooks, generic) the key at
 * a path of the payload the user names (`{ path: '$.data.customer.id' }`).
 */
export type OrderBy = 'resource' | 'repository' | { readonly path: string };

/**
 * An {@link OrderBy} from its text form: `resource`, `repository`, or a JSONPath (`$.data.customer.id`). A
 * `TypeError` for anything else, a path `resourceKeyAt` refuses included.
 */
export function parseOrderBy(text: string): OrderBy {
  if (text === 'resource' || text === 'repository') return text;
  if (text.startsWith('$')) {
    resourceKeyAt(text);
    return { path: text };
  }
  throw new TypeError(`must be "resource", "repository" or a JSONPath starting with "$" (got "${text}")`);
}

/** The text form of an {@link OrderBy}, as {@link parseOrderBy} reads it. */
export function orderByText(orderBy: OrderBy): string {
  return typeof orderBy === 'object' ? orderBy.path : orderBy;
}
