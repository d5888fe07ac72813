// The part of kinesalite 3 (which ships no types) the local stack uses: its factory returns a Node HTTP server.
// Written from its README and index.js; widen it here when the stack needs more.
declare module 'kinesalite' {
  import type { Server } from 'node:http';

  export interface KinesaliteOptions {
    /** A LevelDB folder; in memory without it. */
    path?: string;
    ssl?: boolean;
    /** How long a stream stays CREATING, DELETING or UPDATING, in ms. */
    createStreamMs?: number;
    deleteStreamMs?: number;
    updateStreamMs?: number;
    /** The account's shard limit. */
    shardLimit?: number;
  }

  export default function kinesalite(options?: KinesaliteOptions): Server;
}
