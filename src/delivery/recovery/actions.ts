import type { LiveAction } from '../../domain/delivery/action-guide.js';
import { reconcile } from './reconcile.js';
import type { RecoveryDeps, RecoveryInput, RecoveryResult } from './recovery-session.js';
import { resume } from './resume.js';
import { retire } from './retire.js';

/** The live recovery actions by name (docs/rules.md#recovery-actions): what the CLI and the recovery flows run. */
export const LIVE_ACTION_RUNNERS: Record<
  LiveAction,
  (input: RecoveryInput, deps: RecoveryDeps) => Promise<RecoveryResult>
> = { reconcile, resume, retire };
