import { CutpointError } from '../errors.js';
import { continuable, type ContinuableFact } from './continuation.js';

export { continuable, diagnosticReasonFor, type ContinuableFact } from './continuation.js';

/**
 * The delivery journal's states (seed 004, "State-to-action guide" and its state
 * diagram), the transitions between them as data, and what an operator may do in each.
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
  /** The event that moves the journal, as the seed names it. */
  on: string;
  /**
   * `diagram`: an edge of the seed's state diagram; `text`: implied by the seed's prose;
   * `continue`: this project's own edge, continuing a proved partial writer (README
   * "Delivery recovery"), offered only on the journal's proof that continuing is safe.
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
 * Edges the seed's prose requires but its diagram does not draw:
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
 * Continue (README "Delivery recovery"): a PARTIAL_PROVED whose journal proves every
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

export const RECOVERY_ACTIONS = ['inspect', 'reconcile', 'resume', 'retire'] as const;
export type RecoveryAction = (typeof RECOVERY_ACTIONS)[number];
/** Actions that take the lease and custody and may touch the target. */
export type LiveAction = Exclude<RecoveryAction, 'inspect'>;

/**
 * Journal facts beyond the state that decide whether an action is "offered".
 * - ownedStagesRecorded: every owned stage has its exact object ID and owner binding
 *   recorded. Retirement "locks and rechecks the exact recorded object ID and owner
 *   binding"; in PARTIAL_PROVED and REEXTRACT_REQUIRED (a writer ran against the stage)
 *   it cannot prove it drops only what it owns without that record, so retire is not
 *   offered there. EMPTY_STAGING always offers retire: a crash between CREATE and the
 *   journal write leaves the stage unrecorded but nothing was written into it, and retire
 *   observes it by its derived name and owner marker (the binding is recomputed from the
 *   seal), journals its object id, and drops exactly that — "no durable state without a
 *   safe action or an incident".
 */
export interface RecoveryFacts {
  ownedStagesRecorded: boolean;
  /**
   * PARTIAL_PROVED only: recorded with the transition into it when the observation proved
   * continuing safe — every observed chunk a journaled chunk holding exactly its receipt's
   * rows, the plan journaled, `unfinishedParts` parts short of EOF and `rowsProved` rows
   * journaled. Absent: PARTIAL_PROVED offers retire only (`delivery.partial_not_continuable`).
   */
  continuable?: ContinuableFact;
}

/**
 * The seed's state-to-action guide. `inspect` is read-only, always allowed and never
 * listed: `permitted_actions` lists live actions only, so an empty list means "no
 * permitted live action" (terminal, or an incident to escalate).
 */
export function permittedActions(state: JournalState, facts: RecoveryFacts): LiveAction[] {
  switch (state) {
    case 'EMPTY_STAGING': // Retire the exact empty owned stage when offered.
      return ['retire'];
    case 'PARTIAL_PROVED': // Retire exact owned stages, then start a new complete invocation; or continue when proved safe.
      if (!facts.ownedStagesRecorded) return [];
      return continuable(facts) ? ['retire', 'resume'] : ['retire'];
    case 'REEXTRACT_REQUIRED': // Retire when offered, then start a new complete invocation.
      return facts.ownedStagesRecorded ? ['retire'] : [];
    case 'WRITING_UNKNOWN': // Reconcile first. Never replay target mutation blindly.
    case 'PUBLICATION_UNKNOWN': // Reconcile the exact transaction receipt first.
      return ['reconcile'];
    case 'VERIFIED_EOF': // Resume preparation and publication from contiguous receipts.
    case 'PUBLISHED': // Resume idempotent evidence and checkpoint completion.
    case 'SUCCEEDED': // Resume until cleanup and custody release are durable.
      return ['resume'];
    case 'RETIRED':
    case 'CUSTODY_RELEASED': // No target replay is required.
    case 'INCIDENT_RETAINED': // Preserve everything; escalate.
      return [];
  }
}

const STATE_CODES: Record<JournalState, string> = {
  EMPTY_STAGING: 'delivery.empty_staging',
  WRITING_UNKNOWN: 'delivery.writing_unknown',
  PARTIAL_PROVED: 'delivery.partial_proved',
  VERIFIED_EOF: 'delivery.verified_eof',
  REEXTRACT_REQUIRED: 'delivery.reextract_required',
  PUBLICATION_UNKNOWN: 'delivery.publication_unknown',
  PUBLISHED: 'delivery.published',
  SUCCEEDED: 'delivery.succeeded',
  RETIRED: 'delivery.retired',
  CUSTODY_RELEASED: 'delivery.custody_released',
  INCIDENT_RETAINED: 'delivery.incident_retained',
};

/**
 * The stable `diagnostic_code` inspect prints for a state. With facts, a retire-only
 * state whose owned stages are not recorded reports `delivery.owned_stage_unrecorded`:
 * that is the code an operator escalates with, since no live action is offered.
 */
export function diagnosticCodeFor(state: JournalState, facts?: RecoveryFacts): string {
  if (facts && !facts.ownedStagesRecorded && (state === 'PARTIAL_PROVED' || state === 'REEXTRACT_REQUIRED')) {
    return 'delivery.owned_stage_unrecorded';
  }
  if (facts && state === 'PARTIAL_PROVED' && !continuable(facts)) return 'delivery.partial_not_continuable';
  return STATE_CODES[state];
}

export class ActionNotPermittedError extends CutpointError {
  constructor(
    readonly action: RecoveryAction,
    readonly state: JournalState,
    readonly permitted: readonly LiveAction[],
  ) {
    super(
      'Delivery.ActionNotPermitted',
      'delivery.recovery_action_not_permitted',
      `${action} is not permitted in state ${state}; permitted_actions: [${permitted.join(', ')}]`,
    );
  }
}

/**
 * The state a live action ends in where running it again is the same action repeated, not
 * a refusal: `retire` on RETIRED. Retire's last effect is a look after the RETIRED write
 * (a fenced CreateStaging may have re-created the stage just before it); a retire that
 * crashed between the two is completed by running it again, as the operator re-runs a
 * command that died and the delivery-retire flow retries a crashed Task. The repeat takes
 * no custody and moves no state: it only looks again (recovery/retire.ts). Not listed in
 * `permitted_actions`: nothing is left to do on a completed retire.
 */
const REPEATABLE_ON: Partial<Record<LiveAction, JournalState>> = { retire: 'RETIRED' };

/** Whether `action` in `state` repeats the action that completed there (REPEATABLE_ON). */
export function repeatsCompleted(state: JournalState, action: RecoveryAction): boolean {
  return action !== 'inspect' && REPEATABLE_ON[action] === state;
}

/**
 * Refuses a live action the state-to-action guide does not list. `inspect` always passes,
 * and so does the repeat of a completed action (REPEATABLE_ON).
 */
export function assertActionPermitted(state: JournalState, facts: RecoveryFacts, action: RecoveryAction): void {
  if (action === 'inspect' || repeatsCompleted(state, action)) return;
  const permitted = permittedActions(state, facts);
  if (!permitted.includes(action)) throw new ActionNotPermittedError(action, state, permitted);
}

export class ConfirmationRequiredError extends CutpointError {
  constructor(readonly action: LiveAction) {
    super(
      'Delivery.ConfirmationRequired',
      'delivery.recovery_confirmation_required',
      `${action} changes target custody; repeat it with --yes to confirm`,
    );
  }
}

/**
 * Live actions need explicit confirmation. Checked first, before the manifest is loaded
 * or the journal opened, so a missing --yes has no side effect and costs nothing.
 */
export function assertConfirmed(action: LiveAction, yes: boolean | undefined): void {
  if (yes !== true) throw new ConfirmationRequiredError(action);
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
