import type { ClickHouseClient } from '@clickhouse/client';
import { expect } from 'vitest';
import type { ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';
import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { journalOf } from '../../src/delivery/journal/keys.js';
import { loadInvocation, type InvocationRecord } from '../../src/delivery/journal/records.js';
import type { GuardedSource } from '../../src/delivery/source-guard.js';
import { candidateUuidOf, exchangeNamesOf } from '../../src/domain/publication/candidate.js';
import type { CapsuleV2 } from '../../src/domain/quality/capsule.js';
import {
  readCompletionDocument,
  readPreparedDocument,
  type CompletionDocument,
} from '../../src/domain/quality/evidence.js';
import type { Ports } from '../../src/ports/index.js';
import { qualityKeys, readCapsule } from '../../src/quality/capsule-store.js';
import { incompleteTransitionIdOf } from '../../src/quality/observe-guard.js';

/**
 * ONE checker of the invariants I1–I10 (docs/rules.md#governance-invariants) for one ClickHouse
 * exchange operation and its route, reading only real state: the journal and custody/checkpoint
 * items and the capsule (DynamoDB Local), the evidence objects (S3 emulator), the target's
 * system.tables (UUIDs P and C), an EXCHANGE statement recorder on the ClickHouse handle the
 * adapters use (`recordStatements`), the recovery source guard (src/delivery/source-guard.ts:
 * every call is recorded), and the checkpoint.
 *
 *   const rec = recordStatements(world.ch);            // build the adapters over rec.handle
 *   ... run the operation, faults, recovery ...
 *   const now = await checkGovernanceInvariants(view, op, {
 *     exchangeCount: rec.exchangeCount(op),             // I2
 *     before: [snapshotTakenEarlier],                   // I3 never-back, I5 monotonic
 *     source: recoverySource,                            // I8 (attempts must be empty)
 *     readOnlyStatements: rec.statements.slice(mark),    // I8: what observe/replay sent
 *     guard: 'held',                                     // I6: what the last action reported
 *   });
 *
 * It asserts with vitest's expect (a violation fails the test naming the invariant) and
 * returns the snapshot it read, to pass as `before` to a later check. Exported names are
 * stable (another test file merges and reuses them): add, do not rename.
 */

/** What the checker reads through: the authority/object ports and the ClickHouse handle (any statement recorder's inner handle). */
export interface GovernanceView {
  ports: Ports;
  ch: ClickHouseHandle;
}

/** One operation: its journal ref, route name and the target table (database.table). */
export interface GovernanceOp {
  targetId: string;
  invocationId: string;
  route: string;
  database: string;
  table: string;
}

/** What the checker read at one instant; pass earlier ones as `before`. */
export interface GovernanceSnapshot {
  journal: InvocationRecord;
  capsule: CapsuleV2 | undefined;
  /** UUID under the target name (undefined: no table there). */
  targetUuid: string | undefined;
  completion: CompletionDocument | undefined;
}

export interface GovernanceCheck {
  /** I2: EXCHANGE statements naming this operation's candidate that reached ClickHouse (`recordStatements(...).exchangeCount(op)`). */
  exchangeCount: number;
  /** Earlier snapshots of the same operation, oldest first (I3 never swapped back, I5). */
  before?: readonly GovernanceSnapshot[];
  /** P when the journal has no dispatch fact yet (the caller read it before the run). */
  predecessorUuid?: string;
  /** I8: the recovery/observe source guard; no call may have been made through it. */
  source?: Pick<GuardedSource, 'attempts'>;
  /** I8: statements sent while only observe/replay/reconcile ran: no INSERT or EXCHANGE. */
  readOnlyStatements?: readonly string[];
  /** I6: what the last action said about the reader guard (Quality.Incomplete ⇒ held). */
  guard?: 'held' | 'released';
  /** I3/I10: another operation on the same target slot published (before or after this one): the target UUID and the route checkpoint are that operation's to check. */
  successorPublished?: boolean;
}

/** The statements a ClickHouse handle sent (client.query, client.command, client.exec, streamLines), in order; the real handle stays open. */
export interface StatementRecorder {
  handle: ClickHouseHandle;
  readonly statements: string[];
  /** I2: EXCHANGE statements naming the operation's candidate. */
  exchangeCount(op: Pick<GovernanceOp, 'invocationId' | 'database' | 'table'>): number;
}

const RECORDED = new Set(['query', 'command', 'exec']);

export function recordStatements(inner: ClickHouseHandle): StatementRecorder {
  const statements: string[] = [];
  const client = new Proxy(inner.client, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      const fn = (value as (...args: unknown[]) => unknown).bind(target);
      if (typeof property !== 'string' || !RECORDED.has(property)) return fn;
      return (params: { query: string }) => {
        statements.push(params.query);
        return fn(params);
      };
    },
  }) as ClickHouseClient;
  return {
    handle: {
      client,
      streamLines: (statement, signal) => {
        statements.push(statement.query);
        return inner.streamLines(statement, signal);
      },
      close: async () => {},
    },
    statements,
    exchangeCount: (op) => exchangeStatementsOf(statements, op).length,
  };
}

/** The EXCHANGE statements among `statements` that name the operation's candidate. */
export function exchangeStatementsOf(
  statements: readonly string[],
  op: Pick<GovernanceOp, 'invocationId' | 'database' | 'table'>,
): string[] {
  const { candidate } = exchangeNamesOf(op.invocationId, { database: op.database, table: op.table });
  return statements.filter((s) => /^\s*EXCHANGE\s+TABLES\b/i.test(s) && s.includes(candidate));
}

const MUTATING = /^\s*(INSERT|EXCHANGE|ALTER|DROP|CREATE|RENAME|TRUNCATE|DELETE|OPTIMIZE)\b/i;

/** Reads the operation's state now (journal, capsule, target UUID, completion document when recorded). */
export async function governanceSnapshot(view: GovernanceView, op: GovernanceOp): Promise<GovernanceSnapshot> {
  const journal = await loadInvocation(view.ports, op.invocationId);
  const stored = await readCapsule(view.ports, op);
  if (stored && stored.schema !== 2) throw new Error('governance invariants: a v1 capsule on an exchange operation');
  const capsule = stored;
  let completion: CompletionDocument | undefined;
  const evidence = capsule?.completion?.evidence;
  if (capsule && evidence) {
    const object = await view.ports.objects.get(evidence.key);
    // I9 (read here, asserted below): recorded completion evidence must exist and verify.
    expect(object, 'I9: the recorded completion.json is missing').toBeDefined();
    completion = readCompletionDocument(
      Buffer.from(object!.bytes).toString('utf8'),
      evidence.sha256,
      capsule.coreDigest,
    );
  }
  return { journal, capsule, targetUuid: await uuidUnder(view.ch, op.database, op.table), completion };
}

/** Asserts I1–I10 for the operation now; returns the snapshot read. */
export async function checkGovernanceInvariants(
  view: GovernanceView,
  op: GovernanceOp,
  check: GovernanceCheck,
): Promise<GovernanceSnapshot> {
  const now = await governanceSnapshot(view, op);
  const { journal, capsule } = now;
  const facts = journal.facts;
  const C = candidateUuidOf(op.invocationId);
  const P = facts.dispatch?.predecessorUuid ?? check.predecessorUuid;
  const entries = await journalOf(view.ports.authority, op.invocationId).read();
  const tag = `[${journal.state}/${capsule?.state ?? 'no capsule'}]`;

  // I1: dispatch count ∈ {0,1}; only the dispatch intent ever wrote it.
  const dispatchWrites = entries.filter(
    (e) => (e.data.op as { patch?: { dispatch?: unknown } } | undefined)?.patch?.dispatch !== undefined,
  );
  expect(dispatchWrites.length, `I1 ${tag}: journal writes carrying a dispatch fact`).toBeLessThanOrEqual(1);
  for (const e of dispatchWrites)
    expect(
      e.transitionId.startsWith(`dispatch.${op.invocationId}:`),
      `I1: ${e.transitionId} wrote the dispatch count`,
    ).toBe(true);
  expect([undefined, 1], `I1 ${tag}`).toContain(facts.dispatch?.count);

  // I2: at most one EXCHANGE reached ClickHouse; none without a dispatch intent.
  expect(check.exchangeCount, `I2 ${tag}: EXCHANGE statements`).toBeLessThanOrEqual(facts.dispatch ? 1 : 0);

  // I3: the target holds P or C; once published, C (never swapped back).
  if (!check.successorPublished) {
    const allowed = [C, ...(P ? [P] : [])];
    expect(allowed, `I3 ${tag}: target UUID ${now.targetUuid}`).toContain(now.targetUuid);
    const published = facts.publication !== undefined || (check.before ?? []).some((b) => b.targetUuid === C);
    if (published) expect(now.targetUuid, `I3 ${tag}: published, then not C`).toBe(C);
    if (!facts.dispatch) expect(now.targetUuid, `I3 ${tag}: never dispatched, yet C`).not.toBe(C);
    if (['REEXTRACT_REQUIRED', 'RETIRED'].includes(journal.state) && P) expect(now.targetUuid, `I3 ${tag}`).toBe(P);
  }
  if (facts.publication) expect(facts.publication.stagingObjectId, `I3 ${tag}: the publication fact names C`).toBe(C);

  // I4: COMPLETE ⇒ evaluated on C, all passed, completion.json.version = the COMPLETE write's version.
  if (capsule) {
    expect(capsule.generation.candidateUuid, 'I4: the capsule names C').toBe(C);
    const prepared = await view.ports.objects.get(capsule.prepared.key);
    expect(prepared, 'I9: prepared.json is missing').toBeDefined();
    readPreparedDocument(Buffer.from(prepared!.bytes).toString('utf8'), capsule.prepared.sha256, capsule.coreDigest);
  }
  if (capsule?.state === 'COMPLETE') {
    expect(facts.publication, `I4 ${tag}: COMPLETE without a commit fact`).toBeDefined();
    expect(capsule.completion, 'I4: COMPLETE without completion').toBeDefined();
    expect(capsule.completion!.version).toBeLessThanOrEqual(capsule.version);
    expect(capsule.lastObservation?.outcome, 'I4: the last observation of a COMPLETE capsule').toBe('COMPLETE');
    if (now.completion) {
      expect(now.completion.version, 'I4: completion.json version').toBe(capsule.completion!.version);
      expect(now.completion.candidateUuid, 'I4: completion.json generation').toBe(C);
      expect(
        now.completion.results.every((r) => r.result === 'PASSED'),
        'I4: every probe passed',
      ).toBe(true);
    }
  }

  // I5: COMPLETE and FAILED never change; TARGET_PENDING never returns to PREPARED; no capsule deleted.
  const chain = [...(check.before ?? []), now];
  for (let i = 1; i < chain.length; i++) {
    const [a, b] = [chain[i - 1]!.capsule, chain[i]!.capsule];
    if (!a) continue;
    expect(b, 'I5: the capsule disappeared').toBeDefined();
    expect(b!.version, 'I5: capsule version went back').toBeGreaterThanOrEqual(a.version);
    if (a.state === 'COMPLETE' || a.state === 'FAILED') expect(b!.state, `I5: ${a.state} changed`).toBe(a.state);
    if (a.state === 'TARGET_PENDING') expect(b!.state, 'I5: TARGET_PENDING → PREPARED').not.toBe('PREPARED');
    if (a.completion) expect(b!.completion?.version, 'I5: completion version rewritten').toBe(a.completion.version);
  }

  // I6: an INCOMPLETE observation's guard is still there; a held guard only in PUBLISHED; what the action said.
  const incomplete = entries.filter((e) => e.transitionId.startsWith('quality-observation-incomplete.'));
  for (const e of incomplete) {
    const token = capsule?.reader?.token;
    expect(
      token && e.transitionId === incompleteTransitionIdOf(op.invocationId, token),
      `I6 ${tag}: INCOMPLETE (${e.transitionId}) but the guard is ${token ? 'another' : 'gone'}`,
    ).toBe(true);
  }
  if (capsule?.reader) expect(journal.state, 'I6: a reader guard outside PUBLISHED').toBe('PUBLISHED');
  if (check.guard === 'held') expect(capsule?.reader, `I6 ${tag}: guard expected held`).toBeDefined();
  if (check.guard === 'released') expect(capsule?.reader, `I6 ${tag}: guard expected released`).toBeUndefined();

  // I7: every boundary on the slot closed a released, retired COMPLETE operation whose window names the successor.
  const boundaries = await view.ports.authority.query(`target#${op.targetId}`, 'boundary#');
  for (const b of boundaries) {
    const closed = { targetId: op.targetId, invocationId: String(b.closedOperation) };
    expect(
      (await loadInvocation(view.ports, closed.invocationId)).state,
      'I7: boundary of an unreleased operation',
    ).toBe('CUSTODY_RELEASED');
    const c = await readCapsule(view.ports, closed);
    expect(c, 'I7: boundary of an operation with no capsule').toMatchObject({
      state: 'COMPLETE',
      retiredAt: expect.any(String),
      replay: { closedBy: b.successor, reason: 'successor' },
    });
    expect(b.sk).toBe(qualityKeys.boundary(op.targetId, Number(String(b.sk).slice('boundary#'.length))).sk);
  }

  // I8: the source never opened; observe/replay sent no INSERT or EXCHANGE.
  if (check.source) expect(check.source.attempts, 'I8: the source was called during recovery').toEqual([]);
  for (const s of check.readOnlyStatements ?? [])
    expect(MUTATING.test(s), `I8: observe/replay sent ${s.slice(0, 80)}`).toBe(false);

  // I9 + I10: delivery evidence and the checkpoint only after COMPLETE with its evidence; the checkpoint advanced at most once.
  if (facts.evidence || facts.checkpoint) {
    expect(capsule?.state, `I9/I10 ${tag}: evidence or checkpoint without COMPLETE`).toBe('COMPLETE');
    expect(now.completion, 'I9: evidence or checkpoint without verified completion evidence').toBeDefined();
  }
  const advances = entries.filter((e) => e.type === 'checkpoint');
  expect(advances.length, 'I10: checkpoint advances journaled').toBeLessThanOrEqual(1);
  const checkpoint = await loadCheckpoint(view.ports, op.targetId, op.route);
  if (checkpoint?.invocationId === op.invocationId)
    expect(facts.checkpoint, 'I10: checkpoint names us, journal lacks it').toBeDefined();
  if (!check.successorPublished) {
    expect(checkpoint?.version ?? 0, 'I10: the checkpoint moved more than once').toBeLessThanOrEqual(1);
    if (facts.checkpoint?.moved) expect(checkpoint?.invocationId).toBe(op.invocationId);
    if (!facts.checkpoint) expect(checkpoint, `I10 ${tag}: checkpoint moved without this operation`).toBeUndefined();
  }
  return now;
}

async function uuidUnder(ch: ClickHouseHandle, database: string, name: string): Promise<string | undefined> {
  const result = await ch.client.query({
    query: 'SELECT toString(uuid) AS uuid FROM system.tables WHERE database = {db:String} AND name = {name:String}',
    query_params: { db: database, name },
    format: 'JSONEachRow',
  });
  return (await result.json<{ uuid: string }>())[0]?.uuid;
}
