import type middy from '@middy/core';
import type { DispatchResult } from '../../src/recovery/dispatch.js';
import type { Observer } from '../lib/telemetry.js';

/**
 * The recovery dispatcher's observer (functions/lib/telemetry.ts `Observer`): one log line
 * per status event — what it did (flow, outcome, the recovery's action) or how it failed
 * (name, code, redacted message) — never the event, whose input is the failed execution's.
 * Its metrics are its own (ExecutionOutcome, RecoveryStarted: src/recovery/dispatch.ts), not
 * a step's.
 */
export const observeDispatch: Observer = ({ logger }) => ({
  before: () => {
    logger.appendKeys({ step: 'RecoveryDispatch' });
  },
  after: (request: middy.Request) => {
    const result = request.response as DispatchResult;
    logger.info('recovery dispatched', {
      flow: result.flow,
      outcome: result.outcome,
      recovery: result.recovery.action,
      ...('reason' in result.recovery ? { reason: result.recovery.reason } : { recoveryFlow: result.recovery.flow }),
    });
  },
  onError: (request: middy.Request) => {
    const error = request.error;
    logger.error('recovery dispatch failed', {
      errorName: error?.name,
      code: (error as { code?: unknown } | null)?.code,
      errorMessage: error?.message,
    });
  },
});
