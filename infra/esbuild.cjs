// How each function is bundled, in one place. serverless.yml's `custom.esbuild` is what the default export
// returns (serverless-esbuild's options: one bundle per function, as deployed). `esbuildOptions` are the same
// choices as esbuild's own options: the cold-start bench bundles with them, and the local stack builds every
// function with them in a single esbuild run (local-stack/offline.ts).
'use strict';

/** esbuild's options for a function bundle, as deployed. */
function esbuildOptions() {
  return {
    bundle: true,
    // Minified: a smaller bundle starts faster.
    minify: true,
    sourcemap: false,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    mainFields: ['module', 'main'],
    // Bundle everything, the AWS SDK included: nothing is left for the runtime to provide.
    external: [],
    // Some bundled CommonJS packages call `require` for Node's own modules.
    banner: { js: "import{createRequire}from'node:module';const require=createRequire(import.meta.url);" },
    outExtension: { '.js': '.mjs' },
  };
}

module.exports = () => {
  const { external, outExtension, ...options } = esbuildOptions();
  return {
    ...options,
    outputFileExtension: outExtension['.js'],
    exclude: external,
    concurrency: 4,
    // Each run of osls (a test's package, say) can build in its own folder under .esbuild/, so that one run's
    // clean-up never deletes the bundles another is using.
    outputWorkFolder: process.env.FORGEBRIDGE_ESBUILD_WORK_FOLDER || '.esbuild/default',
  };
};
module.exports.esbuildOptions = esbuildOptions;
