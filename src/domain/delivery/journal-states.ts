import { CutpointError } from '../errors.js';

/**
 * The delivery journal's states (docs/rules.md#delivery-journal-states,
 * docs/rules.md#state-to-action), the transitions between them as data, and what an
 * operator may do in each.
 * Recovery never infers a state from target rows or staging contents: the journal says
 * what happened, and only the transitions below may change it.
 */

export const JOURNAL_STATES = [
  'EMPTY_STAGING',
  'WRITING_UNKNOWN',
  'PARTIAL_PROVED',
  'VERIFIED_EOF',
  'REEXTRACT_REQUIRED',
  'PUBLICATION_UNKNOWN',
  'PUBLISHED',
  'SUCCEEDED',
  'RETIRED',
  'CUSTODY_RELEASED',
  'INCIDENT_RETAINED',
] as const;
export type JournalState = (typeof JOURNAL_STATES)[number];

/** Every invocation starts here (`[*] --> EMPTY_STAGING`). */
export const INITIAL_STATE: JournalState = 'EMPTY_STAGING';

export interface Transition {
  from: JournalState;
  to: JournalState;
  /** The event that moves the journal, as docs/rules.md#delivery-journal-states names it. */
  on: string;
  /**
   * `diagram`: an edge of the core state diagram; `text`: implied by the recovery rules;
   * `continue`: this project's own edge, continuing a proved partial writer (docs/delivery.md
   * "Delivery recovery: the five commands and the flows behind them"), offered only on the journal's proof that continuing is safe.
   */
  basis: 'diagram' | 'text' | 'continue';
}

/** The state diagram, edge for edge. */
const DIAGRAM: readonly Transition[] = [
  { from: 'EMPTY_STAGING', to: 'WRITING_UNKNOWN', on: 'writer started', basis: 'diagram' },
  { from: 'WRITING_UNKNOWN', to: 'PARTIAL_PROVED', on: 'bounded observation', basis: 'diagram' },
  { from: 'WRITING_UNKNOWN', to: 'VERIFIED_EOF', on: 'exact receipts and digest', basis: 'diagram' },
  { from: 'PARTIAL_PROVED', to: 'RETIRED', on: 'proved non-publication', basis: 'diagram' },
  { from: 'VERIFIED_EOF', to: 'PUBLICATION_UNKNOWN', on: 'publish acknowledgement lost', basis: 'diagram' },
  { from: 'VERIFIED_EOF', to: 'PUBLISHED', on: 'commit receipt observed', basis: 'diagram' },
  { from: 'PUBLICATION_UNKNOWN', to: 'PUBLISHED', on: 'receipt reconciliation', basis: 'diagram' },
  { from: 'PUBLISHED', to: 'SUCCEEDED', on: 'evidence and checkpoint', basis: 'diagram' },
  { from: 'SUCCEEDED', to: 'CUSTODY_RELEASED', on: 'cleanup proved', basis: 'diagram' },
  { from: 'WRITING_UNKNOWN', to: 'INCIDENT_RETAINED', on: 'proof remains ambiguous', basis: 'diagram' },
];

/**
 * Edges the recovery rules require but the core diagram does not draw
 * (docs/rules.md#state-to-action, docs/rules.md#recovery-actions):
 * - "Retire the exact empty owned stage when offered" (EMPTY_STAGING) and "Retire when
 *   offered" (REEXTRACT_REQUIRED): retirement drops the owned stages, proves their
 *   absence and releases custody.
 * - "Proved non-publication may authorize retirement or resume": reconcile of an unknown
 *   publication that proves the commit did not happen returns to VERIFIED_EOF when the
 *   receipts still verify the stage (resume), or to REEXTRACT_REQUIRED when they do not
 *   (retire, then a new complete invocation).
 * - Resume from VERIFIED_EOF re-verifies contiguous receipts before preparing; a stage
 *   that no longer matches them, or that fails a quality rule, can never be published,
 *   so it becomes REEXTRACT_REQUIRED.
 * - INCIDENT_RETAINED from every custody-holding state: a live action that finds
 *   contradicting evidence (an owned object whose recorded object ID or owner binding no
 *   longer matches, a receipt naming another invocation) keeps custody for manual
 *   recovery rather than guessing. Availability failures (connection, lock, timeout) are
 *   NOT such evidence: they exit 1 and leave the state unchanged, so the same command
 *   can be repeated.
 */
const IMPLIED: readonly Transition[] = [
  { from: 'EMPTY_STAGING', to: 'RETIRED', on: 'empty owned stage retired', basis: 'text' },
  { from: 'REEXTRACT_REQUIRED', to: 'RETIRED', on: 'owned stages retired', basis: 'text' },
  { from: 'PUBLICATION_UNKNOWN', to: 'VERIFIED_EOF', on: 'proved non-publication, receipts intact', basis: 'text' },
  {
    from: 'PUBLICATION_UNKNOWN',
    to: 'REEXTRACT_REQUIRED',
    on: 'proved non-publication, stage not reusable',
    basis: 'text',
  },
  { from: 'VERIFIED_EOF', to: 'REEXTRACT_REQUIRED', on: 'stage no longer verifies or fails quality', basis: 'text' },
  ...(
    [
      'EMPTY_STAGING',
      'PARTIAL_PROVED',
      'VERIFIED_EOF',
      'REEXTRACT_REQUIRED',
      'PUBLICATION_UNKNOWN',
      'PUBLISHED',
      'SUCCEEDED',
    ] as const
  ).map((from): Transition => ({ from, to: 'INCIDENT_RETAINED', on: 'contradicting evidence', basis: 'text' })),
];

/**
 * Continue (docs/delivery.md "Delivery recovery: the five commands and the flows behind them"): a PARTIAL_PROVED whose journal proves every
 * observed chunk is a journaled chunk holding exactly its receipt's rows, with parts short
 * of EOF (the `continuable` fact), goes back to WRITING_UNKNOWN under a new recovery
 * session: the writer restarts on the unfinished parts only, each after its last
 * journaled chunk, and VerifyEof proves the whole window as on the first run.
 */
const CONTINUE: readonly Transition[] = [
  {
    from: 'PARTIAL_PROVED',
    to: 'WRITING_UNKNOWN',
    on: 'continue: the writer restarts on the unfinished parts',
    basis: 'continue',
  },
];

export const TRANSITIONS: readonly Transition[] = [...DIAGRAM, ...IMPLIED, ...CONTINUE];

const EDGES = new Set(TRANSITIONS.map((t) => `${t.from}>${t.to}`));

export function isJournalState(value: unknown): value is JournalState {
  return typeof value === 'string' && (JOURNAL_STATES as readonly string[]).includes(value);
}

export function canTransition(from: JournalState, to: JournalState): boolean {
  return EDGES.has(`${from}>${to}`);
}

export class IllegalTransitionError extends CutpointError {
  constructor(
    readonly from: JournalState,
    readonly to: JournalState,
  ) {
    super('Delivery.IllegalTransition', 'delivery.illegal_transition', `journal cannot move from ${from} to ${to}`);
  }
}

/** Guards every journal write: a state change not in TRANSITIONS is a bug, never applied. */
export function assertTransition(from: JournalState, to: JournalState): void {
  if (!canTransition(from, to)) throw new IllegalTransitionError(from, to);
}

/** The states `from` may move to, in declaration order. */
export function successorsOf(from: JournalState): JournalState[] {
  return JOURNAL_STATES.filter((to) => canTransition(from, to));
}

/**
 * Terminal: nothing is left to do and custody is released. INCIDENT_RETAINED is not
 * terminal: it has no outgoing transition here but holds custody until a human resolves
 * it outside this state machine.
 */
export function isTerminal(state: JournalState): boolean {
  return state === 'RETIRED' || state === 'CUSTODY_RELEASED';
}

/**
 * Custody (the target lock, the owned stages and the work files) is held by every
 * non-terminal state, INCIDENT_RETAINED included. This is what inspect-all counts as
 * `retained_custody_count`, and a rollback or uninstall requires it to be 0.
 */
export function holdsCustody(state: JournalState): boolean {
  return !isTerminal(state);
}

/**
 * The journal cannot be interpreted: missing, unreadable, ambiguous, or inconsistent
 * (an unknown state, a seal whose digest does not match its contents). Exits 1 with
 * empty stdout; nothing is mutated.
 */
export class JournalUnavailableError extends CutpointError {
  constructor(
    code: 'delivery.recovery_journal_unavailable' | 'delivery.recovery_journal_inconsistent',
    message: string,
    /** True when the store answered and holds no journal for the invocation (not a read failure). */
    readonly missing = false,
  ) {
    super('Delivery.JournalUnavailable', code, message);
  }
}

/** A state read back from the journal; anything else is an inconsistent journal, not a guess. */
export function parseJournalState(value: unknown): JournalState {
  if (!isJournalState(value)) {
    throw new JournalUnavailableError('delivery.recovery_journal_inconsistent', 'journal record has an unknown state');
  }
  return value;
}
