import { decodeBatch } from '../../domain/record-batch.js';
import { laneKeys, type LaneRef } from '../../domain/stream.js';
import { loadRecord } from '../../generation/load.js';
import { readVerified } from '../../objects/exact-object.js';
import type { Ports } from '../../ports/index.js';
import type { CompactionRecord } from './model.js';

/** `bytes`: the object is read and verified whole; `identity`: its HEAD shows the record's size and SHA-256. */
export type CompactionCheck = 'bytes' | 'identity';

/**
 * GC's SUPERSEDED rule (issue #11): the copies of committed range [start, end) are
 * superseded when a COMMITTED compaction holds the whole range (`compactionCovering`) and
 * its object verifies now — the generation record COMMITTED with exactly the object and
 * checksum `compaction#` names, the bytes matching the full SHA-256 and decoding to the
 * record count, and the copy not quarantined. Anything uncertain (a failed read, a missing
 * record) is false: uncertain is live. `identity` (GC's re-check just before each DELETE
 * of a superseded copy, docs/stream-log.md "The stream log", GC) stops short of reading the bytes: the
 * record, the quarantine and the object's HEAD (present, the record's size and SHA-256),
 * so a compaction deleted, replaced or quarantined after the copy was sealed keeps it.
 */
export async function verifiesNow(
  ports: Ports,
  lane: LaneRef,
  c: CompactionRecord,
  check: CompactionCheck = 'bytes',
): Promise<boolean> {
  try {
    const [record, quarantined] = await Promise.all([
      loadRecord(ports, c.root, c.generation),
      ports.authority.get(laneKeys.quarantine(lane, c.objectKey)),
    ]);
    if (record?.state !== 'COMMITTED' || record.objectKey !== c.objectKey || record.sha256 !== c.sha256 || quarantined)
      return false;
    if (check === 'identity') {
      const head = await ports.objects.head(c.objectKey);
      return head?.size === c.size && head.metadata.sha256 === c.sha256;
    }
    const object = await readVerified(ports.objects, c.objectKey, c.sha256);
    return decodeBatch(object.bytes).length === c.recordCount;
  } catch {
    return false;
  }
}
