import { canonicalJson, sha256Hex } from '../digest.js';
import type { ContinuableFact } from '../delivery/action-guide.js';
import { holdsCustody, type JournalState } from '../delivery/journal-states.js';
import {
  actionGuide,
  type AuthorityBreak,
  type CapsuleView,
  type EvidenceView,
  type QualityAction,
} from './actions.js';
import type { CapsuleV2 } from './capsule.js';
import { governanceOf, targetCommitOf, type CapsuleRead, type Governance, type TargetCommit } from './outcome.js';
import { replayWindowOf } from './replay-window.js';
import { hex64 } from './shape.js';
import type { RunbookLink } from '../runbook-link.js';

/**
 * The read-only projections of quality governance (docs/rules.md#quality-commands): `inspect`
 * (`cutpoint.quality-governance.v1`) and `inspect-all` (`…-index.v1`). Keys are sorted at
 * every depth; both axes (`target_commit`, `governance`) are always present; a value the
 * store cannot prove is printed as `unknown` or `null`, never left out. Digests are
 * `sha256:` + 16 hex; UUIDs appear only as digests; the reader token, evidence keys and
 * row values never appear.
 */

export const INSPECT_KIND = 'cutpoint.quality-governance.v1';
export const INDEX_KIND = 'cutpoint.quality-governance-index.v1';
export const PROJECTION_SCHEMA_VERSION = 1;

/** `sha256:` + the first 16 hex characters of a full SHA-256 hex digest. */
export function shortDigest(hex: string): string {
  return `sha256:${hex64(hex, 'digest').slice(0, 16)}`;
}

/** A generation (table UUID) as it may be printed: its digest, never the UUID. */
export function generationDigest(uuid: string): string {
  return shortDigest(sha256Hex(uuid.toLowerCase()));
}

/** Projections are plain JSON with keys sorted at every depth (what canonicalJson prints). */
function sorted<T>(value: T): T {
  return JSON.parse(canonicalJson(value)) as T;
}

export interface InspectInput {
  invocationId: string;
  route: string;
  targetId: string;
  window: { start: string; end: string };
  /** The journal as read, or `unreadable` (then every journal-derived field is unknown and nothing is offered). */
  journal:
    | {
        state: JournalState;
        hasPublicationFact: boolean;
        dispatchCount: number;
        ownedStagesRecorded: boolean;
        continuable?: ContinuableFact;
      }
    | 'unreadable';
  capsule: CapsuleRead;
  evidence: EvidenceView;
  /** The clock port's now (replay window status). */
  now: string;
  /** The sealed replay_window_days, when the caller read the admission plan; the stored end is used otherwise. */
  replayWindowDays?: number;
  replacedWithoutBoundary?: boolean;
  /** The continuity check's finding when it fails (src/quality/capsule-continuity.ts). */
  authority?: AuthorityBreak;
  /** The run printing this projection, when it is a run (inspect is not: `unknown`). */
  currentRunId?: string;
}

export interface InspectProjection {
  capsule_state: string | null;
  capsule_version: 1 | 2 | null;
  diagnostic_code: string;
  digests: {
    admission: string | null;
    generation: string | null;
    immutable_core: string | null;
    inventory: string | null;
    policy: string | null;
  };
  dispatch_count: number | 'unknown';
  holds_custody: boolean | 'unknown';
  invocation_id: string;
  journal_state: JournalState | 'unknown';
  kind: typeof INSPECT_KIND;
  permitted_actions: QualityAction[];
  reader_guard: { held: false } | { held: true; since: string; holder_run_id: string };
  replay_details: {
    current_run_id: string;
    governance: Governance;
    last_observation: {
      error_class: string | null;
      outcome: string;
      remote_termination: string;
      run_id: string;
    } | null;
    original_load_id: string;
    original_run_id: string;
    target_commit: TargetCommit;
  };
  replay_window: { closed: boolean; ends_at: string | null; reason: string | null };
  route: string;
  /** The runbook page and the one command (src/quality/runbook.ts adds it). */
  runbook?: RunbookLink;
  schema_version: typeof PROJECTION_SCHEMA_VERSION;
  target_id: string;
  window: { end: string; start: string };
}

function capsuleViewOf(capsule: CapsuleRead): CapsuleView {
  if (capsule === 'absent') return { kind: 'absent' };
  if (capsule === 'unreadable' || capsule === 'malformed') return { kind: capsule };
  return capsule.schema === 1 ? { kind: 'v1', state: capsule.state } : { kind: 'v2', state: capsule.state };
}

function windowOf(input: InspectInput, v2: CapsuleV2 | undefined): InspectProjection['replay_window'] {
  if (v2 === undefined) return { closed: false, ends_at: null, reason: null };
  if (input.replayWindowDays !== undefined) {
    const w = replayWindowOf({
      capsule: v2,
      days: input.replayWindowDays,
      now: input.now,
      replacedWithoutBoundary: input.replacedWithoutBoundary,
    });
    if (w) return { closed: w.closed, ends_at: w.endsAt, reason: w.closed ? w.reason : null };
  }
  const endsAt = v2.replay.windowEndsAt ?? null;
  if (v2.replay.closedAt !== undefined) return { closed: true, ends_at: endsAt, reason: v2.replay.reason ?? null };
  if (input.replacedWithoutBoundary === true && v2.state === 'COMPLETE')
    return { closed: true, ends_at: endsAt, reason: 'boundary_missing' };
  if (endsAt !== null && Date.parse(input.now) >= Date.parse(endsAt))
    return { closed: true, ends_at: endsAt, reason: 'expired' };
  return { closed: false, ends_at: endsAt, reason: null };
}

export function inspectProjection(input: InspectInput): InspectProjection {
  const { capsule, journal } = input;
  const v2 = typeof capsule === 'object' && capsule.schema === 2 ? capsule : undefined;
  const parsed = typeof capsule === 'object' ? capsule : undefined;
  const guardHeld = v2?.reader !== undefined;
  const replayWindow = windowOf(input, v2);
  const guide =
    journal === 'unreadable'
      ? {
          permittedActions: [] as QualityAction[],
          diagnosticCode: guardHeld ? 'quality.reader_guard_held' : 'delivery.recovery_journal_unavailable',
        }
      : actionGuide({
          journalState: journal.state,
          dispatchCount: journal.dispatchCount,
          capsule: capsuleViewOf(capsule),
          guardHeld,
          evidence: input.evidence,
          replayWindow: v2?.retiredAt === undefined ? 'none' : replayWindow.closed ? 'closed' : 'open',
          retired: v2?.retiredAt !== undefined,
          ownedStagesRecorded: journal.ownedStagesRecorded,
          ...(journal.continuable ? { continuable: journal.continuable } : {}),
          ...(input.authority ? { authority: input.authority } : {}),
        });
  const last = v2?.lastObservation;
  return sorted<InspectProjection>({
    capsule_state: parsed?.state ?? null,
    capsule_version: parsed?.schema ?? null,
    diagnostic_code: guide.diagnosticCode,
    digests: {
      admission: parsed ? shortDigest(parsed.digests.admission) : null,
      generation: v2 ? generationDigest(v2.generation.candidateUuid) : null,
      immutable_core: parsed ? shortDigest(parsed.coreDigest) : null,
      inventory: parsed ? shortDigest(parsed.digests.inventory) : null,
      policy: parsed ? shortDigest(parsed.digests.policy) : null,
    },
    dispatch_count: journal === 'unreadable' ? 'unknown' : journal.dispatchCount,
    holds_custody: journal === 'unreadable' ? 'unknown' : holdsCustody(journal.state),
    invocation_id: input.invocationId,
    journal_state: journal === 'unreadable' ? 'unknown' : journal.state,
    kind: INSPECT_KIND,
    permitted_actions: guide.permittedActions,
    reader_guard: v2?.reader
      ? { held: true, since: v2.reader.acquiredAt, holder_run_id: v2.reader.runId }
      : { held: false },
    replay_details: {
      current_run_id: input.currentRunId ?? 'unknown',
      governance: governanceOf(capsule),
      last_observation: last
        ? {
            error_class: last.errorClass ?? null,
            outcome: last.outcome,
            remote_termination: last.remoteTermination,
            run_id: last.runId,
          }
        : null,
      original_load_id: v2?.runs.originalLoadId ?? 'unknown',
      original_run_id: v2?.runs.originalRunId ?? 'unknown',
      target_commit: targetCommitOf(journal === 'unreadable' ? 'unreadable' : journal),
    },
    replay_window: replayWindow,
    route: input.route,
    schema_version: PROJECTION_SCHEMA_VERSION,
    target_id: input.targetId,
    window: { end: input.window.end, start: input.window.start },
  });
}

export interface IndexItem {
  capsule_state: string | null;
  diagnostic_code: string;
  governance: Governance;
  invocation_id: string;
  journal_state: JournalState | 'unknown';
  permitted_actions: QualityAction[];
  reader_guard_held: boolean;
  route: string;
  /** The runbook page and the one command (src/quality/runbook.ts adds it). */
  runbook?: RunbookLink;
  target_commit: TargetCommit;
  target_id: string;
}

export interface IndexProjection {
  items: IndexItem[];
  kind: typeof INDEX_KIND;
  retained_custody_count: number;
  retained_governance_count: number;
  schema_version: typeof PROJECTION_SCHEMA_VERSION;
}

/**
 * Governance is retained while a v2 capsule is not COMPLETE, a guard is held, or the
 * capsule cannot be read (unknown is never counted as resolved). v1 and absent capsules
 * hold no v2 governance.
 */
function retainsGovernance(p: InspectProjection): boolean {
  if (p.reader_guard.held) return true;
  if (p.replay_details.governance === 'unknown') return true;
  return p.capsule_version === 2 && p.capsule_state !== 'COMPLETE';
}

/** `inspect-all`: one item per operation (sorted by target, then invocation) and the two retention counts. */
export function indexProjection(projections: readonly InspectProjection[]): IndexProjection {
  const items = projections
    .map((p): IndexItem => ({
      capsule_state: p.capsule_state,
      diagnostic_code: p.diagnostic_code,
      governance: p.replay_details.governance,
      invocation_id: p.invocation_id,
      journal_state: p.journal_state,
      permitted_actions: p.permitted_actions,
      reader_guard_held: p.reader_guard.held,
      route: p.route,
      target_commit: p.replay_details.target_commit,
      target_id: p.target_id,
    }))
    .sort((a, b) =>
      a.target_id === b.target_id ? cmp(a.invocation_id, b.invocation_id) : cmp(a.target_id, b.target_id),
    );
  return sorted<IndexProjection>({
    items,
    kind: INDEX_KIND,
    retained_custody_count: projections.filter((p) => p.holds_custody !== false).length,
    retained_governance_count: projections.filter(retainsGovernance).length,
    schema_version: PROJECTION_SCHEMA_VERSION,
  });
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
