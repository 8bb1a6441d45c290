import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { decodeBatch } from '../../src/domain/record-batch.js';
import {
  laneKeys,
  type AppendOutcome,
  type CommitRecord,
  type LaneHead,
  type LaneRef,
  type SpentMarker,
  type CollectedAttempt,
} from '../../src/domain/stream.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import { readVerified } from '../../src/objects/exact-object.js';
import type { AuthorityItem } from '../../src/ports/authority.js';
import type { Fence } from '../../src/domain/fence.js';
import { sha256Hex } from '../../src/domain/digest.js';
import { gcKeys, lanePrefixes } from '../../src/stream/gc/model.js';
import type { Ports } from '../../src/ports/index.js';
import { createStream } from '../../src/stream/create-stream.js';
import { readStream } from '../../src/stream/read.js';
import { takeOverWithNewSession } from '../../src/stream/takeover.js';

export interface Acknowledged {
  attemptId: string;
  records: string[];
}

/** A fresh lane with an owner session. */
export async function newLane(ports: Ports, label: string): Promise<{ lane: LaneRef; session: Fence }> {
  const stream = `s-${label}-${randomUUID().slice(0, 6)}`
    .toLowerCase()
    .replace(/[^a-z0-9._-]/g, '-')
    .slice(0, 60);
  await createStream({ stream, partitions: 1 }, ports);
  const lane = { stream, partition: 0 };
  const fence = await takeOverWithNewSession(lane, 'test-writer', ports);
  return { lane, session: fence };
}

export function batchOf(attemptId: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${attemptId}/record-${i}`);
}

export async function appendFlow(
  ports: Ports,
  lane: LaneRef,
  fence: Fence,
  attemptId: string,
  records: string[],
): Promise<FlowResult> {
  const input = { ...lane, attemptId, session: fence, records: records.map((r) => Buffer.from(r).toString('base64')) };
  return runFlow('stream-append', input, { ports, retryIntervalMs: 0 });
}

export async function resolveFlow(ports: Ports, lane: LaneRef, attemptId: string): Promise<FlowResult> {
  return runFlow('stream-resolve-append', { ...lane, attemptId }, { ports, retryIntervalMs: 0 });
}

export const statusOf = (r: FlowResult) => (r.output as AppendOutcome | undefined)?.status;

/**
 * The lane invariant after recovery: committed ranges are contiguous from 0 to the head's
 * committed end with no gaps or duplicates; every range's WAL object reads back verified
 * and holds exactly end - start records; no attempt is committed twice; every
 * acknowledged batch is there exactly once, in order, with its exact bytes; a spent attempt
 * never committed and its bytes entered orphan grace; an attempt whose WAL object GC
 * collected has a `collected#` record naming exactly its commit (its acknowledged records
 * stand for the bytes); the lane is not left suspended.
 */
export async function expectLaneInvariant(ports: Ports, lane: LaneRef, acknowledged: Acknowledged[]): Promise<void> {
  const collected = new Map(
    ((await ports.authority.query(laneKeys.pk(lane), 'collected#')) as unknown as CollectedAttempt[]).map((c) => [
      c.attemptId,
      c,
    ]),
  );
  const head = (await ports.authority.get(laneKeys.head(lane))) as unknown as LaneHead;
  const commits = (await ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
  let expectedStart = 0;
  const byAttempt = new Map<string, string[]>();
  for (const commit of commits) {
    expect(commit.start, `gap or overlap before ${commit.attemptId}`).toBe(expectedStart);
    expect(byAttempt.has(commit.attemptId), `attempt ${commit.attemptId} committed twice`).toBe(false);
    // A WAL object GC collected (trimmed or superseded): the acknowledged records stand for it.
    const gone = collected.get(commit.attemptId);
    if (gone)
      expect(gone, `collected ${commit.attemptId}`).toMatchObject({
        walKey: commit.walKey,
        walSha256: commit.walSha256,
        start: commit.start,
        end: commit.end,
      });
    const records = gone
      ? (acknowledged.find((a) => a.attemptId === commit.attemptId)?.records ?? [])
      : decodeBatch((await readVerified(ports.objects, commit.walKey, commit.walSha256)).bytes).map((r) =>
          Buffer.from(r).toString(),
        );
    expect(records, `${commit.attemptId} [${commit.start}, ${commit.end})`).toHaveLength(commit.end - commit.start);
    byAttempt.set(commit.attemptId, records);
    expectedStart = commit.end;
  }
  expect(head.committedEnd).toBe(expectedStart);
  expect(head.suspendedBy).toBeUndefined();
  for (const ack of acknowledged)
    expect(byAttempt.get(ack.attemptId), `acknowledged ${ack.attemptId}`).toEqual(ack.records);
  // Readers see exactly that: every committed record once, in order, through the read path.
  const expected = commits.flatMap((c) => byAttempt.get(c.attemptId) ?? []);
  const seen: string[] = [];
  for (let from = head.trimOffset; from < head.committedEnd;) {
    const page = await readStream({ ...lane, from, maxRecords: 1000 }, ports);
    expect(page.records.map((r) => r.offset)).toEqual(page.records.map((_, i) => from + i));
    seen.push(...page.records.map((r) => Buffer.from(r.data, 'base64').toString()));
    expect(page.next, 'a read made no progress').toBeGreaterThan(from);
    from = page.next;
  }
  expect(seen).toEqual(expected.slice(head.trimOffset));
  // A spent attempt never committed, and its bytes entered orphan grace.
  const markers = (await ports.authority.query(laneKeys.pk(lane), 'spent#')) as unknown as SpentMarker[];
  for (const marker of markers) {
    expect(byAttempt.has(marker.attemptId), `spent ${marker.attemptId} has a commit record`).toBe(false);
    expect(collected.has(marker.attemptId), `spent ${marker.attemptId} has a collected record`).toBe(false);
    expect(marker.orphanSince, `spent ${marker.attemptId} without orphan grace`).toBeTruthy();
  }
}

/** Every authority item of the lane (its own and GC's) and every object under its prefixes with its bytes' SHA-256: what a refusal must leave as it was. */
export async function laneSnapshot(
  ports: Ports,
  lane: LaneRef,
): Promise<{ items: AuthorityItem[]; objects: string[][] }> {
  const own = [
    'head',
    'fence#',
    'spent#',
    'collected#',
    'commit#',
    'index#',
    'quarantine#',
    'cursor#',
    'gen0#',
    'compact#',
  ];
  const items = [
    ...(await Promise.all(own.map((p) => ports.authority.query(laneKeys.pk(lane), p)))).flat(),
    ...(await Promise.all(['root#', 'lease#'].map((p) => ports.authority.query(gcKeys.pk(lane), p)))).flat(),
  ];
  const keys = (await Promise.all(lanePrefixes(lane).map((p) => ports.objects.list(p)))).flat().sort();
  const objects = await Promise.all(keys.map(async (key) => [key, sha256Hex((await ports.objects.get(key))!.bytes)]));
  return { items, objects };
}
