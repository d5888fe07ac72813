// The plugins serverless.yml loads. serverless-esbuild bundles each function for a package or a deploy. The local
// stack builds every function itself, in one esbuild run with shared chunks (local-stack/function-build.ts: about
// a third of the time of six separate bundles), and names that build in FORGEBRIDGE_OFFLINE_BUILD: serverless-esbuild
// is then left out, serverless-offline loads the handlers from there (`custom.serverless-offline.location`), and
// local-stack/offline-reload.cjs has it load them anew after each rebuild of a watched build (`npm start`).
'use strict';

module.exports = () => {
  const local = Boolean(process.env.FORGEBRIDGE_OFFLINE_BUILD);
  return [
    ...(local ? [] : ['serverless-esbuild']),
    'serverless-iam-roles-per-function',
    // After the plugin above, on the same hook: osls's default role, which no function uses then, is left out.
    './infra/drop-default-role.cjs',
    'serverless-offline',
    'serverless-offline-aws-eventbridge',
    ...(local ? ['./local-stack/offline-reload.cjs'] : []),
  ];
};
