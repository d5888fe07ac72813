import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { MiddlewareObj } from '@middy/core';
import type { LoggerLike } from '../types.js';

/**
 * The Lambda context on every line of a Powertools `Logger` (and `xray_trace_id`, which the `Logger` reads from
 * `_X_AMZN_TRACE_ID` under active tracing), with the keys one invocation appended cleared at its end; nothing
 * for another {@link LoggerLike}.
 */
export function loggerContext(logger: LoggerLike): MiddlewareObj | undefined {
  return logger instanceof Logger ? injectLambdaContext(logger, { resetKeys: true }) : undefined;
}

/**
 * Once `idOf` finds the invocation's delivery id, every further line of a Powertools `Logger` carries it as
 * `delivery` (a temporary key: {@link loggerContext} clears it when the invocation ends).
 */
export function deliveryLogKey<Event>(
  logger: LoggerLike,
  idOf: (event: Event) => unknown,
): MiddlewareObj<Event> | undefined {
  if (!(logger instanceof Logger)) return undefined;
  return {
    before: (request) => {
      const id = idOf(request.event);
      if (typeof id === 'string' && id !== '') logger.appendKeys({ delivery: id });
    },
  };
}
