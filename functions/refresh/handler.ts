/**
 * Scheduled token refresh (every 5 minutes): each entry of `FORGEBRIDGE_OAUTH_CLIENTS`, an OAuth client
 * (client credentials) or a GitHub App installation (app JWT, installation token), gets its token renewed in
 * DynamoDB when it is within the refresh window of expiry. A failed entry fails the invocation, so the Errors
 * metric and its alarms fire (lib/aws' `createRefreshHandler`).
 */
import { createRefreshHandler } from '../../lib/aws/index.js';

/** The Lambda entry point. */
export const handler = createRefreshHandler();
