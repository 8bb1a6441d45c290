import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { loadCustody } from '../../src/delivery/custody.js';
import { readInvocation } from '../../src/delivery/journal/records.js';
import { holdsCustody } from '../../src/domain/delivery/journal-states.js';
import type { CapsuleV2 } from '../../src/domain/quality/capsule.js';
import { readCompletionDocument } from '../../src/domain/quality/evidence.js';
import { qualityKeys, readCapsule } from '../../src/quality/capsule-store.js';
import type { History, Op, TableModel } from './quality-history.js';

/**
 * The invariants of seed 000 §6 (I1–I10) and the history's own, checked on the durable
 * state after every step of a governance history (and again once everything is driven to
 * its end). The reads go through fault-free ports: an armed fault never fires in a check.
 */

const READ_ONLY_ACTORS = /^(observe|replay|zombie|reconcile)$/;

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
  h.check(known.includes(uuid), `pub.${table.name} holds ${uuid}: neither its first generation nor a candidate of its operations (I3)`);
  if (table.uuids.at(-1) !== uuid) {
    h.check(!table.uuids.includes(uuid), `pub.${table.name} swapped back to ${uuid} (seen ${table.uuids.join(' → ')}) (I3)`);
    table.uuids.push(uuid);
  }
  // Never two operations holding custody of one target.
  let holders = 0;
  for (const op of table.ops) {
    const record = await readInvocation(ports, { targetId: op.targetId, invocationId: op.invocationId });
    if (holdsCustody(record.state)) holders++;
    await checkOp(h, op, record.facts.dispatch?.count ?? 0);
  }
  h.check(holders <= 1, `${holders} operations on pub.${table.name} hold custody`);
  const custody = await loadCustody(ports, table.targetId);
  if (custody?.state === 'HELD') h.check(table.ops.some((o) => o.invocationId === custody.invocationId), `pub.${table.name}'s custody is held by an unknown invocation`);
  // I10: the route checkpoint advances at most once per operation, and only after COMPLETE.
  const checkpoint = await loadCheckpoint(ports, table.targetId, 'daily');
  const version = checkpoint?.version ?? 0;
  if (version !== table.checkpointVersion) {
    h.check(version === table.checkpointVersion + 1, `the checkpoint of pub.${table.name} moved ${table.checkpointVersion} → ${version} in one step (I10)`);
    const op = table.ops.find((o) => o.invocationId === checkpoint!.invocationId);
    h.check(op, `the checkpoint of pub.${table.name} names an unknown invocation`);
    op.checkpointAdvances++;
    h.check(op.checkpointAdvances === 1, `${op.name} advanced the checkpoint ${op.checkpointAdvances} times (I10)`);
    const capsule = await readCapsule(ports, op);
    h.check(capsule?.schema === 2 && capsule.state === 'COMPLETE', `${op.name} advanced the checkpoint with its capsule ${capsule?.state ?? 'absent'} (I10)`);
    table.checkpointVersion = version;
  }
}

async function checkOp(h: History, op: Op, dispatchCount: number): Promise<void> {
  const ports = h.hw.checkPorts;
  // I1: the dispatch count is 0 or 1.
  h.check(dispatchCount === 0 || dispatchCount === 1, `${op.name} dispatch count ${dispatchCount} (I1)`);
  const item = await ports.authority.get(qualityKeys.capsule(op.targetId, op.invocationId));
  if (!item) return;
  const capsule = (await readCapsule(ports, op)) as CapsuleV2;
  if (op.staleCapsule === undefined && capsule.state === 'PREPARED') op.staleCapsule = item;
  // I5: COMPLETE and FAILED are final; TARGET_PENDING never returns to PREPARED.
  const last = op.capsuleStates.at(-1);
  if (last !== capsule.state) {
    h.check(last !== 'COMPLETE' && last !== 'FAILED', `${op.name}'s capsule left ${last} for ${capsule.state} (I5)`);
    h.check(!(capsule.state === 'PREPARED' && op.capsuleStates.includes('TARGET_PENDING')), `${op.name}'s capsule returned from TARGET_PENDING to PREPARED (I5)`);
    op.capsuleStates.push(capsule.state);
  }
  // I6: a guard still held when a step ended belongs to a run that is over: nothing may remove it.
  for (const token of op.guards) h.check(capsule.reader?.token === token, `${op.name}'s reader guard ${token.slice(0, 8)}… was released or replaced (now ${capsule.reader?.token.slice(0, 8) ?? 'absent'}) (I6)`);
  if (capsule.reader) op.guards.add(capsule.reader.token);
  // I4: COMPLETE with its evidence recorded ⇒ completion.json for C, version = the COMPLETE write's, every probe passed.
  const evidence = capsule.completion?.evidence;
  if (capsule.state === 'COMPLETE' && evidence) {
    const stored = await ports.objects.get(evidence.key);
    h.check(stored, `${op.name} is COMPLETE with its completion.json missing (I4/I9)`);
    const doc = readCompletionDocument(Buffer.from(stored.bytes).toString('utf8'), evidence.sha256, capsule.coreDigest);
    h.check(doc.version === capsule.completion!.version && doc.candidateUuid === op.candidateUuid, `${op.name}: completion.json version ${doc.version} / ${doc.candidateUuid}, capsule completion version ${capsule.completion!.version} (I4)`);
    h.check(doc.results.length > 0 && doc.results.every((r) => r.result === 'PASSED'), `${op.name} COMPLETE with a probe not passed (I4)`);
  }
  h.check(capsule.state !== 'COMPLETE' || capsule.completion !== undefined, `${op.name} COMPLETE without a completion record (I4)`);
}

/** I2 (at most one EXCHANGE per operation) and I8 (no INSERT, EXCHANGE or source read by observe, replay or reconcile). */
function checkStatements(h: History): void {
  for (const op of h.ops()) {
    const exchanges = h.hw.sent.filter((s) => /^\s*EXCHANGE\b/i.test(s.sql) && s.sql.includes(op.candidateName));
    h.check(exchanges.length <= 1, `${exchanges.length} EXCHANGE statements for ${op.name} (by ${exchanges.map((s) => s.actor).join(', ')}) (I2)`);
  }
  const offending = h.hw.sent.find((s) => READ_ONLY_ACTORS.test(s.actor) && (/^\s*(INSERT|EXCHANGE)\b/i.test(s.sql) || s.sql.includes('src.events')));
  h.check(offending === undefined, `${offending?.actor} sent ${offending?.sql.slice(0, 80)} (I8)`);
}

/** I7: a successor began only after its predecessor's cleanup and retirement, with a boundary naming it. */
async function checkSuccessor(h: History, s: { op: Op; prev: Op; epoch: number }): Promise<void> {
  if (s.op.checkedBoundary) return;
  const ports = h.hw.checkPorts;
  const prev = await readInvocation(ports, { targetId: s.prev.targetId, invocationId: s.prev.invocationId });
  h.check(prev.state === 'CUSTODY_RELEASED' || prev.state === 'RETIRED', `${s.op.name} began while ${s.prev.name} is ${prev.state} (I7)`);
  const capsule = await readCapsule(ports, s.prev);
  if (prev.state === 'CUSTODY_RELEASED' && capsule?.schema === 2) {
    h.check(capsule.state === 'COMPLETE' && capsule.retiredAt !== undefined, `${s.op.name} began after ${s.prev.name} with its capsule ${capsule.state}, retired ${String(capsule.retiredAt)} (I7)`);
    h.check(capsule.replay.closedBy === s.op.invocationId, `${s.prev.name}'s replay window not closed by ${s.op.name} (I7)`);
    const boundary = await ports.authority.get(qualityKeys.boundary(s.op.targetId, s.epoch));
    h.check(boundary?.closedOperation === s.prev.invocationId && boundary.successor === s.op.invocationId, `no boundary#${s.epoch} naming ${s.prev.name} (I7): ${JSON.stringify(boundary)}`);
  }
  s.op.checkedBoundary = true;
}
