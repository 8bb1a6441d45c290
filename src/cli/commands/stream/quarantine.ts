import type { LaneRef } from '../../../domain/stream.js';
import { loadHead } from '../../../stream/lane-store.js';
import { listQuarantine, releaseQuarantine } from '../../../stream/read/quarantine-release.js';
import { UsageError } from '../../io.js';
import type { Runtime } from './runtime.js';

type Values = Record<string, string | boolean | undefined>;

export const quarantineHelp = `cutpoint stream quarantine <stream> --partition P [--release KEY]
  lists the lane's quarantined copies (key, reason, at, copy and range); with --release
  re-verifies KEY by exact identity (the commit or compaction evidence's key, SHA-256, size; the
  bytes' hash and record count) and deletes its quarantine item so readers use it again;
  refused while still bad (stream.quarantine_still_bad) or not the evidence's copy
  (stream.quarantine_identity_mismatch); never touches bytes`;

function checkQuarantine(values: Values): void {
  if (values.release !== undefined && (typeof values.release !== 'string' || values.release.length === 0)) {
    throw new UsageError('--release needs the quarantined object KEY');
  }
}

async function quarantine(runtime: Runtime, lane: LaneRef, values: Values): Promise<unknown> {
  const ports = await runtime.ports();
  await loadHead(ports, lane);
  if (typeof values.release === 'string') return releaseQuarantine({ ...lane, objectKey: values.release }, ports);
  return listQuarantine(lane, ports);
}

export const QUARANTINE_HANDLERS = {
  quarantine: {
    options: { partition: { type: 'string' }, release: { type: 'string' } },
    check: checkQuarantine,
    run: (t: Runtime, r: { lane: LaneRef; values: Values }) => quarantine(t, r.lane, r.values),
  },
} as const;
