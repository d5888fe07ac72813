/**
 * The example commenter, on `pull_request.opened`: it thanks the author with a comment on the new pull request, one
 * content-creating forge API call per delivery. Every call goes through the forge API governor (docs/rate-limits.md):
 * a burst of opened pull requests becomes comments paced under the forge's limits across every instance, not 403s.
 * It logs `comment written` and reports its outcome (and how long its call waited) into the delivery log.
 */
import { createForgeApi, createSubscriberHandler } from '../lib/aws/index.js';

const api = createForgeApi();

export const handler = createSubscriberHandler({
  register: (events, { logger }) =>
    events.on('pull_request.opened', async ({ id, payload }) => {
      const { number } = payload.pull_request as { number: number };
      let response: Awaited<ReturnType<typeof api.post>>;
      try {
        response = await api.post(`/repos/${payload.repository.full_name}/issues/${number}/comments`, {
          headers: { 'content-type': 'application/json' },
          body: { body: `Thanks for pull request #${number}! A maintainer will look at it soon.` },
        });
      } catch (error) {
        // Its code and the forge's status only: the error's message may quote the answer.
        const status = (error as { response?: { status?: unknown } }).response?.status;
        logger.error('comment failed', { delivery: id, status, code: (error as { code?: unknown }).code });
        throw error;
      }
      const comment = (response.parsed as { id?: unknown } | undefined)?.id;
      logger.info('comment written', { delivery: id, status: response.status, comment });
    }),
});
