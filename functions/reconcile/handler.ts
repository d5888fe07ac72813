import { createReconcileHandler } from '../../lib/aws/index.js';

export const handler = createReconcileHandler();
