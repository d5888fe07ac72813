import { defineConfig } from 'vitest/config';

export default defineConfig({
  // vitest keeps its cache under node_modules/.vite; nothing is written to $HOME.
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          setupFiles: ['test/setup/log-guard.ts'],
          environment: 'node',
          // Unit files first, then the integration files, each group with its own worker count.
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          setupFiles: ['test/setup/log-guard.ts'],
          environment: 'node',
          // Integration files start real servers (DynamoDB Local, oidc-provider, serverless-offline):
          // give them room and keep at most two running at once on a 2-core machine.
          testTimeout: 60_000,
          hookTimeout: 120_000,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
