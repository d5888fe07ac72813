/**
 * The example subscriber, on `issues.opened`: it calls the forge API about the new issue with the token the
 * scheduled refresh keeps in DynamoDB (an OAuth client's token or a GitHub App installation token) and logs
 * `forge api called`. With `FORGEBRIDGE_DELIVERIES_TABLE` set it reports its outcome into the delivery log.
 */
import { createForgeApi, createSubscriberHandler } from '../../lib/aws/index.js';

const api = createForgeApi();

export const handler = createSubscriberHandler({
  register: (events, { logger }) =>
    events.on('issues.opened', async ({ id, payload }) => {
      const issue = payload.issue as { number: number };
      const response = await api.get(`/repos/${payload.repository.full_name}/issues/${issue.number}`);
      const title = (response.parsed as { title?: unknown } | undefined)?.title;
      logger.info('forge api called', { delivery: id, status: response.status, title });
    }),
});
