import { DELIVERY_STEPS } from './deliver-in-process.js';
import type { PublicationMode } from './publication-mode.js';
import { reconcileReceipt } from './recovery/reconcile.js';
import { cleanupStage } from './steps/cleanup.js';
import { adoptReceipt } from './steps/publish.js';

/**
 * The SQL transaction mode (`replace_window`, `merge`; publication-mode.ts): deliver-window's
 * steps, publishing in ONE target transaction that also writes the receipt row, so the
 * receipt is what proves a publication — adopted in VERIFIED_EOF (publish.ts
 * `adoptReceipt`), looked for by reconcile (`reconcileReceipt`) and by retire before it
 * drops the stage. No governance gate, nothing added to begin, no resume condition.
 */
export const TRANSACTION_MODE: PublicationMode = {
  steps: DELIVERY_STEPS,
  beginLegs: () => undefined,
  adoptPublication: adoptReceipt,
  governance: () => Promise.resolve(undefined),
  cleanup: cleanupStage,
  reconcilePublication: reconcileReceipt,
  retirePublication: async ({ record, deps }) =>
    (await deps.target.probeReceipt(record.invocationId)) ? 'PUBLISHED' : 'ABSENT_PROVED',
};
