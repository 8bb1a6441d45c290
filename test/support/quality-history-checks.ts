import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { loadCustody } from '../../src/delivery/custody.js';
import { readInvocation } from '../../src/delivery/journal/records.js';
import { holdsCustody } from '../../src/domain/delivery/journal-states.js';
import { qualityKeys, readCapsule } from '../../src/quality/capsule-store.js';
import { checkGovernanceInvariants, exchangeStatementsOf } from './governance-invariants.js';
import type { History, Op, TableModel } from './quality-history.js';

/**
 * The invariants of docs/rules.md#governance-invariants (I1–I10: the one checker, governance-invariants.ts, per
 * operation) and the history's own across operations of one target (the generation under
 * the name never swapped back, never two custody holders, the checkpoint once per
 * operation, a guard left held never released, a successor's boundary), checked on the
 * durable state after every step (and again once everything is driven to its end). The
 * reads go through fault-free ports: an armed fault never fires in a check.
 */

/** Actors that may send no INSERT, EXCHANGE, source read (I8) — nor any DDL (the checker's list). */
const READ_ONLY_ACTORS = /^(observe|replay|zombie|flow:observe-target)$/;

export async function checkHistory(h: History): Promise<void> {
  for (const table of h.tables) await checkTable(h, table);
  checkStatements(h);
  for (const s of h.successors) await checkSuccessor(h, s);
}

async function checkTable(h: History, table: TableModel): Promise<void> {
  const ports = h.hw.checkPorts;
  // I3: the generation under the name is P or one of the operations' candidates, never one replaced before.
  const uuid = (await h.hw.world.uuidOf(table.name)) ?? 'absent';
  const known = [table.initialUuid, ...table.ops.map((o) => o.candidateUuid)];
  h.check(
    known.includes(uuid),
    `pub.${table.name} holds ${uuid}: neither its first generation nor a candidate of its operations (I3)`,
  );
  if (table.uuids.at(-1) !== uuid) {
    h.check(
      !table.uuids.includes(uuid),
      `pub.${table.name} swapped back to ${uuid} (seen ${table.uuids.join(' → ')}) (I3)`,
    );
    table.uuids.push(uuid);
  }
  // Never two operations holding custody of one target.
  const records = await Promise.all(
    table.ops.map((op) => readInvocation(ports, { targetId: op.targetId, invocationId: op.invocationId })),
  );
  const holders = records.filter((r) => holdsCustody(r.state)).length;
  const readOnly = h.hw.sent.filter((s) => READ_ONLY_ACTORS.test(s.actor)).map((s) => s.sql);
  const all = h.hw.sent.map((s) => s.sql);
  for (const [i, op] of table.ops.entries()) {
    const successorPublished = records.some((r, j) => j !== i && r.facts.dispatch !== undefined);
    const gop = {
      targetId: op.targetId,
      invocationId: op.invocationId,
      route: 'daily',
      database: 'pub',
      table: table.name,
    };
    const snapshot = await checkGovernanceInvariants({ ports, ch: h.hw.world.ch }, gop, {
      exchangeCount: exchangeStatementsOf(all, gop).length,
      before: op.snapshots,
      predecessorUuid: op.predecessorUuid,
      readOnlyStatements: readOnly,
      successorPublished,
    });
    op.snapshots.push(snapshot);
    await checkOp(h, op);
  }
  h.check(holders <= 1, `${holders} operations on pub.${table.name} hold custody`);
  const custody = await loadCustody(ports, table.targetId);
  if (custody?.state === 'HELD')
    h.check(
      table.ops.some((o) => o.invocationId === custody.invocationId),
      `pub.${table.name}'s custody is held by an unknown invocation`,
    );
  // I10: the route checkpoint advances at most once per operation, and only after COMPLETE.
  const checkpoint = await loadCheckpoint(ports, table.targetId, 'daily');
  const version = checkpoint?.version ?? 0;
  if (version !== table.checkpointVersion) {
    h.check(
      version === table.checkpointVersion + 1,
      `the checkpoint of pub.${table.name} moved ${table.checkpointVersion} → ${version} in one step (I10)`,
    );
    const op = table.ops.find((o) => o.invocationId === checkpoint!.invocationId);
    h.check(op, `the checkpoint of pub.${table.name} names an unknown invocation`);
    op.checkpointAdvances++;
    h.check(op.checkpointAdvances === 1, `${op.name} advanced the checkpoint ${op.checkpointAdvances} times (I10)`);
    const capsule = await readCapsule(ports, op);
    h.check(
      capsule?.schema === 2 && capsule.state === 'COMPLETE',
      `${op.name} advanced the checkpoint with its capsule ${capsule?.state ?? 'absent'} (I10)`,
    );
    table.checkpointVersion = version;
  }
}

/** The zombie's stale view (the capsule as first seen PREPARED), and I6 across steps: a guard left held is never released. */
async function checkOp(h: History, op: Op): Promise<void> {
  const item = await h.hw.checkPorts.authority.get(qualityKeys.capsule(op.targetId, op.invocationId));
  if (!item) return;
  const capsule = await readCapsule(h.hw.checkPorts, op);
  if (capsule?.schema !== 2) return;
  if (op.staleCapsule === undefined && capsule.state === 'PREPARED') op.staleCapsule = item;
  for (const token of op.guards)
    h.check(
      capsule.reader?.token === token,
      `${op.name}'s reader guard ${token.slice(0, 8)}… was released or replaced (now ${capsule.reader?.token.slice(0, 8) ?? 'absent'}) (I6)`,
    );
  if (capsule.reader) op.guards.add(capsule.reader.token);
}

/** I8 across operations: no source read by the read-only actors (the checker sees their statements, not which table they read). */
function checkStatements(h: History): void {
  const offending = h.hw.sent.find((s) => READ_ONLY_ACTORS.test(s.actor) && s.sql.includes('src.events'));
  h.check(offending === undefined, `${offending?.actor} read the source: ${offending?.sql.slice(0, 80)} (I8)`);
}

/** I7: a successor began only after its predecessor's cleanup and retirement, with a boundary naming it. */
async function checkSuccessor(h: History, s: { op: Op; prev: Op; epoch: number }): Promise<void> {
  if (s.op.checkedBoundary) return;
  const ports = h.hw.checkPorts;
  const prev = await readInvocation(ports, { targetId: s.prev.targetId, invocationId: s.prev.invocationId });
  h.check(
    prev.state === 'CUSTODY_RELEASED' || prev.state === 'RETIRED',
    `${s.op.name} began while ${s.prev.name} is ${prev.state} (I7)`,
  );
  const capsule = await readCapsule(ports, s.prev);
  if (prev.state === 'CUSTODY_RELEASED' && capsule?.schema === 2) {
    h.check(
      capsule.state === 'COMPLETE' && capsule.retiredAt !== undefined,
      `${s.op.name} began after ${s.prev.name} with its capsule ${capsule.state}, retired ${String(capsule.retiredAt)} (I7)`,
    );
    h.check(
      capsule.replay.closedBy === s.op.invocationId,
      `${s.prev.name}'s replay window not closed by ${s.op.name} (I7)`,
    );
    const boundary = await ports.authority.get(qualityKeys.boundary(s.op.targetId, s.epoch));
    h.check(
      boundary?.closedOperation === s.prev.invocationId && boundary.successor === s.op.invocationId,
      `no boundary#${s.epoch} naming ${s.prev.name} (I7): ${JSON.stringify(boundary)}`,
    );
  }
  s.op.checkedBoundary = true;
}
