import type { QuarantineReason } from '../../stream/read/quarantine.js';
import { cutpoint } from './commands.js';
import type { RunbookPage } from './model.js';

/**
 * A quarantined copy of a committed range (src/stream/read/quarantine.ts): a durable
 * `quarantine#<key>` item on the lane, released only by `cutpoint stream quarantine
 * --release KEY` after the exact bytes are back. The compiler checks the reasons below
 * cover QuarantineReason.
 */

const REASONS = {
  missing: 'the object is gone (a mistaken delete, a lifecycle rule)',
  checksum_mismatch: "its bytes do not hash to the SHA-256 the commit or compaction evidence recorded",
  malformed: 'its bytes do not decode as a record batch',
  record_count_mismatch: 'it decodes to another number of records than its range holds',
} satisfies Record<QuarantineReason, string>;

export function quarantinePage(): RunbookPage {
  return {
    subsystem: 'stream',
    state: 'QUARANTINED',
    summary: 'restore the exact bytes, then release',
    meaning:
      'A read found a copy of a committed range (generation 0, the WAL object or a compacted generation) that does not match its recorded identity, and quarantined it: readers skip it and serve the range from another healthy copy, checksum-verified. The committed records are not lost while one copy is healthy.',
    holds: 'no: the lane goes on; the range is unreadable (`stream.range_unreadable`) only when no healthy copy is left',
    incoming: Object.entries(REASONS).map(([reason, why]) => `a read judged the copy \`${reason}\`: ${why}`),
    inspect: cutpoint('stream quarantine orders --partition 0'),
    permitted: [
      {
        name: 'release',
        when: 'after the exact bytes are back under the key (for example its noncurrent S3 version restored: the bucket keeps them 30 days)',
        does: "It re-verifies the key by exact identity (the evidence's key, SHA-256 and size; the bytes' hash and record count) and deletes the quarantine item so readers use the copy again. It never touches bytes.",
        command: cutpoint('stream quarantine orders --partition 0 --release "$KEY"'),
      },
    ],
    forbidden: [
      { name: 'releasing a copy that is still bad', why: 'Refused with `stream.quarantine_still_bad`: a release is a proof, never an override.' },
      { name: 'putting other bytes under the key', why: "The release checks the bytes against the evidence's SHA-256, size and record count: anything else stays quarantined (`stream.quarantine_still_bad`). Only the exact original bytes (a restored S3 version) can be released." },
      { name: 'deleting the quarantine item by hand', why: 'Readers would serve the bad copy again; only a verified release removes it.' },
    ],
    diagnostics: [
      { code: 'stream.quarantine_still_bad', when: 'the release found the copy still bad' },
      { code: 'stream.quarantine_identity_mismatch', when: "KEY is not the evidence's copy of the range" },
      { code: 'stream.quarantine_changed', when: 'the item changed during the release: run it again' },
      { code: 'stream.range_unreadable', when: 'a read of a range with no healthy copy left: restore one, then release it' },
    ],
    sources: ['src/stream/read/quarantine.ts', 'src/stream/read/quarantine-release.ts'],
  };
}
