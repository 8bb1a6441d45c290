import type { FlowResult } from '../../../src/local/flow-runner.js';
import { RecoveryRetainedError, type RecoveryResult } from '../../../src/delivery/recovery/recovery-session.js';
import { TRANSIENT_ERRORS } from '../../../src/engine/rerun.js';
import type { OutcomeValue } from '../../support/delivery-history/exactly-once.js';
import type { Pending } from '../../support/sched/op-history.js';

/**
 * How the delivery scenario's client operations complete in its history (op-history.ts),
 * as their clients were told (test/support/delivery-history/exactly-once.ts checks it):
 * - a flow execution: `ok` when it SUCCEEDED (with the journal state its output names, if
 *   any); `info` when it FAILED — a failed deliver-window may have published before it
 *   failed, and only recovery tells;
 * - a live action: `ok` with the state it left the journal in, a retained outcome
 *   included (custody kept, the state journaled: an answer); `fail` for a refusal raised
 *   before the action moved the journal; `info` for everything else (a crash, a lost
 *   answer, a failed effect, a session fenced or overtaken in the middle of the action).
 */

/**
 * Refusals that leave the journal's state and the target as they were. The action guide
 * and the sealed authority are checked on the record as loaded and again on the record the
 * custody takeover journaled: that takeover raises the custody epoch but moves no state,
 * touches no target row. A takeover that finds the journal closed, or the target held by
 * another invocation, refuses in its plan and writes nothing.
 */
const REFUSALS: readonly string[] = [
  'Delivery.ActionNotPermitted',
  'Delivery.AuthorityMismatch',
  'Delivery.CustodyNotRetained',
  'Delivery.CustodyHeld',
];

export function executionEnded(op: Pending, result: FlowResult): void {
  if (result.status === 'FAILED') {
    op.info({ status: result.status, ...(result.error ? { error: result.error } : {}) } satisfies OutcomeValue);
    return;
  }
  const state = (result.output as { state?: OutcomeValue['state'] } | undefined)?.state;
  op.ok({ status: result.status, ...(state ? { state } : {}) } satisfies OutcomeValue);
}

export function actionAnswered(op: Pending, result: RecoveryResult): void {
  op.ok({ state: result.state } satisfies OutcomeValue);
}

/** An action that threw: its completion, and whether the command is run again (a transient error). */
export function actionThrew(op: Pending, error: unknown): { transient: boolean } {
  const name = (error as Error).name;
  if (error instanceof RecoveryRetainedError) {
    op.ok({ state: error.state, error: name, retained: error.code } satisfies OutcomeValue);
    return { transient: false };
  }
  if (REFUSALS.includes(name)) op.fail({ error: name } satisfies OutcomeValue);
  else op.info({ error: name } satisfies OutcomeValue);
  return { transient: (TRANSIENT_ERRORS as readonly string[]).includes(name) };
}
