import { JOURNAL_STATES } from '../../domain/delivery/journal-states.js';
import { INCONSISTENT, QUALITY_ACTIONS, actionGuide, type ActionInput, type QualityAction } from '../../domain/quality/actions.js';
import { CAPSULE_STATES, CAPSULE_TRANSITIONS, isFinalCapsuleState, type CapsuleState } from '../../domain/quality/capsule.js';
import { EXCHANGE_SELECTOR, INVOCATION, MANIFEST_PATH, cutpoint, recoveryInput } from './commands.js';
import type { FlowStart, ForbiddenAction, PermittedAction, RunbookPage } from './model.js';

/**
 * The quality capsule's pages, generated from src/domain/quality/capsule.ts (states and
 * CAPSULE_TRANSITIONS) and actions.ts (actionGuide, the state-to-action guide of a
 * ClickHouse route): each page's table is actionGuide evaluated over every journal state
 * and every fact it reads, with the combinations no writer produces
 * (`quality.state_inconsistent`) left out. Plus one page for a held reader guard.
 */

const MEANING: Record<CapsuleState, string> = {
  PREPARED:
    "The route's original probes passed on the candidate and the immutable core is sealed (`prepared.json`). Depending on the journal, the EXCHANGE is still to be dispatched, its answer was lost, or it was published and governance on the published generation has not been observed yet.",
  TARGET_PENDING:
    'An observation of the published generation did not finish (its deadline, or an observation failure), with the reader proved terminated and the outcome persisted. Nothing failed; a later identical observation may finish it.',
  COMPLETE: 'The original probes passed on the exact published generation and the completion evidence is recorded. Governance is successful; the operation can be replayed within its replay window.',
  FAILED: 'A required probe failed on the published target. This is final: it is never retried into a pass. The published data stays; custody is kept until a human decides.',
};

const PURPOSE: Record<QualityAction, string> = {
  observe: 'runs the original probes on the published generation in a bounded reader under the `quality_reader` guard, and persists COMPLETE, FAILED or TARGET_PENDING with the guard release',
  reconcile: 'proves by table UUID whether the one EXCHANGE happened (fencing a possibly delayed one before it may conclude it did not) and journals it',
  resume: 'finishes evidence, checkpoint and cleanup (on a PREPARED or TARGET_PENDING capsule it observes first), and releases custody with the capsule retired',
  retire: 'drops the owned stage and candidate by their recorded identity, proves their absence and releases custody as RETIRED',
  replay: 'recomputes the seal, verifies `prepared.json` and `completion.json`, version continuity and the authority binding, and prints a receipt with the original results; it never writes',
};

function command(action: QualityAction): PermittedAction['command'] {
  if (action === 'observe') return cutpoint(`quality observe ${INVOCATION} --manifest ${EXCHANGE_SELECTOR} --yes`);
  if (action === 'replay') return cutpoint(`quality replay ${INVOCATION} --manifest ${EXCHANGE_SELECTOR} --format json`);
  return cutpoint(`delivery ${action} ${INVOCATION} --manifest ${EXCHANGE_SELECTOR} --yes`);
}

const FLOW_OF: Partial<Record<QualityAction, string>> = {
  observe: 'quality-observe',
  replay: 'quality-replay',
  reconcile: 'delivery-reconcile',
  resume: 'delivery-resume',
  retire: 'delivery-retire',
};

/** The input of a read-only quality flow (quality-replay): the operation and its manifest, nothing to confirm. */
function readOnlyInput(selector: string): Pick<FlowStart, 'setup' | 'input'> {
  return {
    setup: `jq -Rs --arg id "$ID" '{invocationId: $id, manifestText: ., selector: "${selector}"}' ${MANIFEST_PATH} > replay.json`,
    input: 'file://replay.json',
  };
}

interface GuideRow {
  journalState: string;
  code: string;
  actions: QualityAction[];
  cases: ActionInput[];
}

/** actionGuide over every journal state and fact, for one capsule state; consistent combinations only. */
export function guideRows(capsule: CapsuleState): GuideRow[] {
  const rows = new Map<string, GuideRow>();
  for (const journalState of JOURNAL_STATES)
    for (const dispatchCount of [0, 1])
      for (const evidence of ['valid', 'pending'] as const)
        for (const replayWindow of ['none', 'open', 'closed'] as const)
          for (const retired of [false, true]) {
            const input: ActionInput = { journalState, dispatchCount, capsule: { kind: 'v2', state: capsule }, guardHeld: false, evidence, replayWindow, retired, ownedStagesRecorded: true };
            const guide = actionGuide(input);
            if (guide.diagnosticCode === INCONSISTENT) continue;
            const key = `${journalState}|${guide.diagnosticCode}|${guide.permittedActions.join(',')}`;
            const row = rows.get(key) ?? { journalState, code: guide.diagnosticCode, actions: guide.permittedActions, cases: [] };
            row.cases.push(input);
            rows.set(key, row);
          }
  return [...rows.values()];
}

const DIMENSIONS: Array<{ key: 'dispatchCount' | 'evidence' | 'replayWindow' | 'retired'; all: unknown[]; label: (v: never) => string }> = [
  { key: 'dispatchCount', all: [0, 1], label: (v: number) => (v === 1 ? 'dispatched once' : 'never dispatched') },
  { key: 'evidence', all: ['valid', 'pending'], label: (v: string) => (v === 'pending' ? 'completion evidence pending' : 'evidence valid') },
  { key: 'replayWindow', all: ['none', 'open', 'closed'], label: (v: string) => (v === 'none' ? 'replay window not started' : `replay window ${v}`) },
  { key: 'retired', all: [false, true], label: (v: boolean) => (v ? 'capsule retired' : 'capsule not retired') },
];

/** What sets a row apart: each fact whose values there are a strict subset of its possible ones. */
function conditions(row: GuideRow): string {
  const parts = DIMENSIONS.flatMap(({ key, all, label }) => {
    const seen = all.filter((v) => row.cases.some((c) => c[key] === v));
    return seen.length < all.length ? [seen.map((v) => label(v as never)).join(' or ')] : [];
  });
  return parts.join(', ') || 'always';
}

function guideTable(rows: GuideRow[]): string {
  const lines = rows.map((r) => `| [${r.journalState}](../delivery/${r.journalState}.md) | ${conditions(r)} | \`${r.code}\` | ${r.actions.join(', ') || '—'} |`);
  return ['What `cutpoint quality inspect` offers, by the journal state of the same operation (actionGuide):', '', '| journal state | when | diagnostic code | permitted |', '|---|---|---|---|', ...lines].join('\n');
}

function permitted(rows: GuideRow[]): PermittedAction[] {
  const actions = QUALITY_ACTIONS.filter((a) => rows.some((r) => r.actions.includes(a)));
  return actions.map((action) => {
    const flow = FLOW_OF[action];
    return {
      name: action,
      when: `in journal state ${[...new Set(rows.filter((r) => r.actions.includes(action)).map((r) => r.journalState))].join(' or ')} (table above)`,
      does: `It ${PURPOSE[action]}.`,
      command: command(action),
      ...(flow ? { start: { flow, ...(action === 'replay' ? readOnlyInput(EXCHANGE_SELECTOR) : recoveryInput(EXCHANGE_SELECTOR)), executionName: `${action}-$ID-$(date +%s)` } } : {}),
    };
  });
}

const NEVER: ForbiddenAction[] = [
  { name: 'a second EXCHANGE (redispatch)', why: 'Only the call that journaled the dispatch intent sends the EXCHANGE; a second one would swap the generations back. No command or option does it.' },
  { name: 'skipping or forcing quality', why: 'There is no force, skip-quality or clear-guard command: missing, malformed or unreadable evidence is never a pass; preserve and escalate.' },
];

function forbidden(rows: GuideRow[], capsule: CapsuleState): ForbiddenAction[] {
  const offered = new Set(rows.flatMap((r) => r.actions));
  const refused = QUALITY_ACTIONS.filter((a) => !offered.has(a)).map((action) => ({
    name: action,
    why: `Never offered on a ${capsule} capsule: it ${PURPOSE[action]}. Refused with \`quality.action_not_permitted\` before anything is written.`,
  }));
  const final = isFinalCapsuleState(capsule) ? [{ name: 'observing again', why: `${capsule} is final (no transition leaves it): a later observation can never change it.` }] : [];
  return [...refused, ...final, ...NEVER];
}

function incoming(capsule: CapsuleState): string[] {
  return CAPSULE_TRANSITIONS.filter((t) => t.to === capsule).map((t) => (t.from === null ? `created on "${t.on}" (PrepareCapsule, in the same transaction as its journal record)` : `from [${t.from}](${t.from}.md) on "${t.on}"`));
}

const INSPECT = cutpoint(`quality inspect ${INVOCATION} --format json`);

function capsulePage(capsule: CapsuleState): RunbookPage {
  const rows = guideRows(capsule);
  const actions = [...new Set(rows.flatMap((r) => r.actions))];
  return {
    subsystem: 'quality',
    state: capsule,
    summary: actions.length ? `${actions.join(', ')} (by journal state)` : 'nothing: preserve and escalate',
    meaning: MEANING[capsule],
    holds: 'while the journal state holds custody, yes (`retained_custody_count`); a capsule not COMPLETE also counts in `retained_governance_count`',
    incoming: incoming(capsule),
    inspect: INSPECT,
    permitted: permitted(rows),
    forbidden: forbidden(rows, capsule),
    diagnostics: [...new Set(rows.map((r) => r.code))].map((code) => ({ code, when: `in ${rows.filter((r) => r.code === code).map((r) => r.journalState).join(', ')}` })),
    extra: [guideTable(rows)],
    sources: ['src/domain/quality/capsule.ts', 'src/domain/quality/actions.ts'],
  };
}

const QUIESCENCE = [
  'The quiescence procedure (the only way out):',
  '',
  "1. Stop the route's schedules and EventBridge rules, and confirm no execution of `publish-clickhouse` or a recovery flow is RUNNING for this operation.",
  "2. Confirm the holder's Lambda invocation has ended: its `since` time plus the observe function's timeout is in the past, and the execution history shows the Task ended.",
  "3. The reader's SELECT may still run on the server (remote termination is UNVERIFIED; cutpoint assumes no KILL permission): wait for `system.processes` to show no query of the reader's user, or have the ClickHouse operator confirm it.",
  '4. Only then a maintainer applies a reviewed recovery procedure for this one operation. Do not clear the field by hand while any worker might still be active.',
].join('\n');

function guardPage(): RunbookPage {
  const guide = actionGuide({ journalState: 'PUBLISHED', dispatchCount: 1, capsule: { kind: 'v2', state: 'PREPARED' }, guardHeld: true, evidence: 'valid', replayWindow: 'none', retired: false, ownedStagesRecorded: true });
  return {
    subsystem: 'quality',
    state: 'READER_GUARD_HELD',
    summary: 'nothing: the quiescence procedure',
    meaning:
      "The capsule's `quality_reader` guard is held (`reader_guard.held: true`): an observation could not prove its reader terminated and its outcome persisted (INCOMPLETE), or the observing Lambda died (timeout, OOM, crash). The guard has no lease, no expiry and no force-clear, on purpose.",
    holds: 'yes: retries and successor operations stay blocked',
    incoming: ['an observation (ObserveTarget, `quality observe`, the quality-observe flow, resume) ended INCOMPLETE (`Quality.Incomplete`), or its Lambda died holding the guard'],
    inspect: INSPECT,
    permitted: [],
    forbidden: [
      ...QUALITY_ACTIONS.map((action) => ({
        name: action,
        why: `A held guard offers nothing (actionGuide: \`${guide.diagnosticCode}\`, permitted [${guide.permittedActions.join(', ')}]); refused with ${
          action === 'observe'
            ? '`quality.reader_guard_held` (`Quality.ReaderGuardHeld`; the quality-observe flow reports the held guard to the incident topic, since the holder may be its own earlier attempt)'
            : '`quality.action_not_permitted`'
        }.`,
      })),
      { name: 'clearing the guard by hand', why: 'A reader that may still run could write after a successor took over: only its exact owner releases it, after the reader was reaped and the outcome persisted.' },
    ],
    diagnostics: [{ code: guide.diagnosticCode, when: 'whatever the journal and capsule state' }],
    extra: [QUIESCENCE],
    sources: ['src/domain/quality/actions.ts'],
  };
}

export function qualityPages(): RunbookPage[] {
  return [...CAPSULE_STATES.map(capsulePage), guardPage()];
}
