import type { RunbookLink } from '../../domain/runbook-link.js';
import { deliveryPages } from './delivery.js';
import { generationPages } from './generation.js';
import type { RunbookPage, Subsystem } from './model.js';
import { qualityPages } from './quality.js';
import { quarantinePage } from './stream-quarantine.js';
import { streamPages } from './stream.js';

/**
 * The runbook as a lookup: which page a durable state has and the one command it names.
 * Derived from the same tables the pages are generated from (render.ts writes them to
 * RUNBOOK_DIR/<subsystem>/<STATE>.md), so an inspect output, a notice or an alarm can
 * never name a page or a command the runbook does not print. Pure; no I/O.
 */

/** Where the pages live, relative to the repository root. */
export const RUNBOOK_DIR = 'docs/runbook';

/** The setting that turns the repository paths into links (a published copy of docs/runbook, no trailing slash needed). */
export const RUNBOOK_BASE_URL_ENV = 'CUTPOINT_RUNBOOK_BASE_URL';

/** Every page, in index order. */
export function runbookPages(): RunbookPage[] {
  return [...deliveryPages(), ...qualityPages(), ...streamPages(), quarantinePage(), ...generationPages()];
}

let byKey: Map<string, RunbookPage> | undefined;

/** The page of one durable state; throws for a state no table generates a page for (a defect: the caller named a state that is not durable). */
export function runbookPage(subsystem: Subsystem, state: string): RunbookPage {
  byKey ??= new Map(runbookPages().map((p) => [`${p.subsystem}/${p.state}`, p]));
  const page = byKey.get(`${subsystem}/${state}`);
  if (!page) throw new Error(`no runbook page for ${subsystem} state ${state} (src/docs/runbook/)`);
  return page;
}

/**
 * The runbook's base: the setting's URL (trailing slashes dropped) or the repository path.
 * The one place the setting is read: from the process's environment (a CLI run; a deployed
 * function, whose environment the stage's `runbookBaseUrl` sets), or from the value infra
 * passes for the alarm texts. Unset, pages are named by their repository paths.
 */
export function runbookBase(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const url = env[RUNBOOK_BASE_URL_ENV]?.trim().replace(/\/+$/, '');
  return url ? url : RUNBOOK_DIR;
}

/** `docs/runbook/delivery/PUBLISHED.md`, or the same path under `base`. */
export function runbookPageOf(subsystem: Subsystem, state: string, base: string = runbookBase()): string {
  return `${base}/${runbookPage(subsystem, state).subsystem}/${state}.md`;
}

/**
 * The one command for a state. For an item (an inspect output, a notice), `permitted` is
 * what its guide offers: the page's command of its first action, or — nothing offered —
 * the page's inspect command (preserve, read, escalate). Without `permitted` (an alarm,
 * which knows the state but not the item): the page's first permitted action's command,
 * else its inspect command.
 */
export function runbookCommandOf(subsystem: Subsystem, state: string, permitted?: readonly string[]): string {
  const page = runbookPage(subsystem, state);
  const chosen =
    permitted === undefined ? page.permitted[0] : page.permitted.find((a) => a.name === permitted[0]);
  return chosen?.command ?? page.inspect;
}

/** Page and command together, as every output prints them (`runbook`). */
export function runbookLinkOf(
  subsystem: Subsystem,
  state: string,
  options: { permitted?: readonly string[]; base?: string } = {},
): RunbookLink {
  return {
    command: runbookCommandOf(subsystem, state, options.permitted),
    page: runbookPageOf(subsystem, state, options.base),
  };
}

/** The index's escalation section: where an end no state page covers goes. */
export function escalationPageOf(base: string = runbookBase()): string {
  return `${base}/README.md#escalation`;
}
