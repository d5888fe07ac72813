// The plugins serverless.yml loads. serverless-esbuild bundles each function for a package or a deploy. The local
// stack builds every function itself, in one esbuild run with shared chunks (local-stack/offline.ts: about a
// third of the time of six separate bundles), and names that build in FORGEBRIDGE_OFFLINE_BUILD: serverless-esbuild
// is then left out, and serverless-offline loads the handlers from there (`custom.serverless-offline.location`).
'use strict';

module.exports = () => [
  ...(process.env.FORGEBRIDGE_OFFLINE_BUILD ? [] : ['serverless-esbuild']),
  'serverless-iam-roles-per-function',
  'serverless-offline',
  'serverless-offline-aws-eventbridge',
];
