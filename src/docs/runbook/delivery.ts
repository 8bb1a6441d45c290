import { INITIAL_STATE, JOURNAL_STATES, TRANSITIONS, holdsCustody, isTerminal, type JournalState } from '../../domain/delivery/journal-states.js';
import { RECOVERY_ACTIONS, diagnosticCodeFor, permittedActions, type LiveAction } from '../../domain/delivery/action-guide.js';
import { INVOCATION, SQL_SELECTOR, cutpoint, recoveryInput } from './commands.js';
import type { ForbiddenAction, PermittedAction, RunbookPage } from './model.js';

/**
 * The delivery journal's pages, generated from src/domain/delivery/journal-states.ts: the
 * states, their incoming TRANSITIONS, permittedActions (with and without recorded owned
 * stages), the diagnostic codes and custody. The prose below says what each state and
 * action means; which action is permitted where is never written here, only read.
 */

const MEANING: Record<JournalState, string> = {
  EMPTY_STAGING:
    'Begin took custody of the target and sealed the window and the recovery authority; the owned stage may exist (created, or a crash between its CREATE and the journal write) but nothing was written into it.',
  WRITING_UNKNOWN:
    'A writer started loading chunks into the stage and stopped before its receipts proved end of file: what the stage holds is not known from the journal alone.',
  PARTIAL_PROVED:
    'A bounded observation proved the stage holds only part of the window: as it stands it can never be published. When the observation also proved every journaled chunk intact with parts short of end of file (the `continuable` fact), resume continues just those parts after their last journaled chunk; otherwise the stage is to be retired and the window delivered by a new invocation.',
  VERIFIED_EOF:
    'Every part reached end of file with contiguous receipts and a verified digest: the stage holds exactly the window and may be published.',
  REEXTRACT_REQUIRED:
    'The stage can no longer be published (it stopped verifying against its receipts, failed a quality rule, or a reconcile proved a publication did not happen and the receipts no longer hold): retire it and deliver the window again.',
  PUBLICATION_UNKNOWN:
    "The publication transaction was sent and its acknowledgement was lost: it may have committed. Only the target's exact receipt row can say.",
  PUBLISHED:
    "The target's receipt proves the window was published exactly once. Evidence, checkpoint and cleanup remain.",
  SUCCEEDED: 'Evidence and the route checkpoint are durable; cleanup (dropping the stage, proving its absence) and the custody release remain.',
  RETIRED:
    'The owned stage was dropped and its absence proved, without a publication; custody is released. The window was not delivered by this invocation. A retire that died after this state was written is run again as it was: on RETIRED it takes no custody and only drops a stage a fenced creator left under the derived name.',
  CUSTODY_RELEASED: 'Delivered: published once, evidence and checkpoint durable, the stage gone, custody released. Nothing is left to do.',
  INCIDENT_RETAINED:
    'A live action found contradicting evidence (an owned object whose recorded id or owner binding no longer matches, a receipt naming another invocation, a publication found under retire). Custody is kept and nothing is guessed: a human decides.',
};

const PURPOSE: Record<LiveAction, string> = {
  reconcile: 'observes the target read-only for the exact receipt (or the owned stage, chunk by chunk) and journals only what that proves; it never writes to the target',
  resume: 'finishes from proved receipts or a proved publication: prepare and publish (the receipt is probed first, so a committed publication is never published twice), evidence, checkpoint, cleanup, custody release; from PARTIAL_PROVED it first continues the unfinished parts, each after its last journaled chunk (the one recovery that reads the source, and only those parts\' remaining ranges), then VerifyEof proves the whole window',
  retire: "drops exactly the recorded owned stage (in EMPTY_STAGING: the one found under its derived name with this invocation's owner marker), under the publication lock and after looking for the receipt again, proves its absence and releases custody as RETIRED",
};

const FLOW_OF: Record<LiveAction, string> = { reconcile: 'delivery-reconcile', resume: 'delivery-resume', retire: 'delivery-retire' };
const LIVE = RECOVERY_ACTIONS.filter((a): a is LiveAction => a !== 'inspect');

const recorded = { ownedStagesRecorded: true };
const unrecorded = { ownedStagesRecorded: false };
/** Every fact that widens the guide: owned stages recorded and, in PARTIAL_PROVED, the continuation proved. */
const proved = { ownedStagesRecorded: true, continuable: { unfinishedParts: 1, rowsProved: 0 } };

/** The states whose guide offers an action (owned stages recorded, continuation proved): read from permittedActions. */
export const statesOffering = (action: LiveAction): JournalState[] => JOURNAL_STATES.filter((s) => permittedActions(s, proved).includes(action));

function permitted(state: JournalState): PermittedAction[] {
  const always = permittedActions(state, unrecorded);
  const withRecord = permittedActions(state, recorded);
  const when = (action: LiveAction) =>
    always.includes(action)
      ? {}
      : withRecord.includes(action)
        ? { when: 'only when the journal records every owned stage by its exact object id and owner binding' }
        : { when: "only when reconcile journaled the continuation proof with this state (every journaled chunk intact, parts short of end of file: `diagnostic_code` is this state's own, not `delivery.partial_not_continuable`)" };
  return permittedActions(state, proved).map((action) => ({
    name: action,
    ...when(action),
    does: `It ${PURPOSE[action]}.`,
    command: cutpoint(`delivery ${action} ${INVOCATION} --manifest ${SQL_SELECTOR} --yes`),
    start: { flow: FLOW_OF[action], ...recoveryInput(SQL_SELECTOR), executionName: `${action}-$ID-$(date +%s)` },
  }));
}

function forbidden(state: JournalState): ForbiddenAction[] {
  const allowed = new Set(permittedActions(state, proved));
  const refused = 'refused with `delivery.recovery_action_not_permitted` (`Delivery.ActionNotPermitted`) before anything is touched';
  const rows: ForbiddenAction[] = LIVE.filter((a) => !allowed.has(a)).map((action) => {
    if (isTerminal(state)) return { name: action, why: `The invocation is finished and custody is released: nothing is left to ${action}. ${cap(refused)}.` };
    if (state === 'INCIDENT_RETAINED') return { name: action, why: `Contradicting evidence is on record; acting on it would be a guess. ${cap(refused)}.` };
    return { name: action, why: `${cap(action)} ${PURPOSE[action]}; it is offered only in ${statesOffering(action).join(', ')}. Here it is ${refused}.` };
  });
  if (holdsCustody(state)) {
    rows.push({ name: 'a new deliver-window run on this target', why: "Begin refuses a target another invocation holds (`Delivery.CustodyHeld`, nothing written): finish or retire this invocation first." });
  }
  rows.push({
    name: 'editing or deleting journal items by hand',
    why: 'Every read checks the journal against its own invariants: a moved head, a dropped fact or a deleted record is `delivery.recovery_journal_inconsistent`, and every command then refuses to act.',
  });
  return rows;
}

const BASIS: Record<(typeof TRANSITIONS)[number]['basis'], string> = {
  diagram: 'the core state diagram',
  text: 'required by the recovery rules',
  continue: 'continue: resume of a PARTIAL_PROVED whose continuation the journal proved',
};

function incoming(state: JournalState): string[] {
  const lines = TRANSITIONS.filter((t) => t.to === state).map(
    (t) => `from [${t.from}](${t.from}.md) on "${t.on}" (${BASIS[t.basis]})`,
  );
  return state === INITIAL_STATE ? ['every invocation starts here: Begin, the first step of deliver-window and publish-clickhouse', ...lines] : lines;
}

function diagnostics(state: JournalState) {
  const code = diagnosticCodeFor(state);
  const withoutRecord = diagnosticCodeFor(state, unrecorded);
  const unproved = diagnosticCodeFor(state, recorded);
  return [
    { code, when: 'what `inspect` prints as `diagnostic_code` in this state' },
    ...(unproved !== code ? [{ code: unproved, when: 'instead, when no continuation is proved (`diagnostic_reason` says why): only retire is offered' }] : []),
    ...(withoutRecord !== code ? [{ code: withoutRecord, when: 'instead, when an owned stage is not recorded by its exact object id: no live action is offered; escalate' }] : []),
  ];
}

export function deliveryPages(): RunbookPage[] {
  return JOURNAL_STATES.map((state) => {
    const offered = permittedActions(state, proved);
    return {
      subsystem: 'delivery',
      state,
      summary: offered.length ? `${offered.join(', ')}` : isTerminal(state) ? 'nothing (finished)' : 'nothing: preserve and escalate',
      meaning: MEANING[state],
      holds: holdsCustody(state)
        ? 'yes: the target stays locked to this invocation (counted in `retained_custody_count`) until an action moves it on'
        : 'no: custody is released',
      incoming: incoming(state),
      inspect: cutpoint(`delivery inspect ${INVOCATION} --format json`),
      permitted: permitted(state),
      forbidden: forbidden(state),
      diagnostics: diagnostics(state),
      sources: ['src/domain/delivery/journal-states.ts'],
    };
  });
}

const cap = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);
