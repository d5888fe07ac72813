// A serverless plugin of the local stack's own (infra/plugins.cjs loads it with FORGEBRIDGE_OFFLINE_BUILD): when
// the stack's watched build of the functions touches its `.rebuilt` file (local-stack/function-build.ts), it tells
// serverless-offline that the functions changed, as serverless-esbuild's watch mode did. serverless-offline then
// drops the functions it holds, and the next invocation of each loads the new build.
'use strict';

const { watch } = require('node:fs');
const { resolve } = require('node:path');

const STAMP = '.rebuilt';

class OfflineReload {
  constructor(serverless) {
    this.serverless = serverless;
    this.watcher = undefined;
    this.hooks = {
      'before:offline:start:init': () => this.start(),
      'before:offline:start:end': () => this.stop(),
    };
  }

  /** The build folder: serverless-offline's `location`, relative to the service. */
  folder() {
    const location = this.serverless.service.custom?.['serverless-offline']?.location;
    if (typeof location !== 'string' || location === '') return undefined;
    return resolve(this.serverless.serviceDir ?? process.cwd(), location);
  }

  start() {
    const folder = this.folder();
    if (folder === undefined) return;
    // The build folder exists before osls starts (the stack creates it); a missing one means no watched build.
    try {
      this.watcher = watch(folder, (_event, name) => {
        if (name !== STAMP) return;
        this.serverless.pluginManager.spawn('offline:functionsUpdated').catch(() => {});
      });
      this.watcher.on('error', () => this.stop());
    } catch {
      this.watcher = undefined;
    }
  }

  stop() {
    this.watcher?.close();
    this.watcher = undefined;
  }
}

module.exports = OfflineReload;
