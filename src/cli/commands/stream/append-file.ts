import type { LaneRef } from '../../../domain/stream.js';
import type { Fence } from '../../../domain/fence.js';
import type { Ports } from '../../../ports/index.js';
import { GroupProducer, type GroupReport } from '../../../stream/producer/group-producer.js';
import { validateKnobs } from '../../../stream/producer/knobs.js';
import { progress } from '../../io.js';
import { FileAppendLedger, type FileAppendSummary } from './file-append-ledger.js';
import { JsonlFile } from './jsonl-file.js';

/**
 * Groups one `--from` command may commit: each is a fenced head CAS, so a file that needs
 * more (a 30 MB file at `--max-records 5`) is refused after reading no further than that
 * bound, instead of running for hours (docs/stream-log.md, `stream append --from`).
 */
export const MAX_FILE_GROUPS = 1000;

export interface AppendFileOptions {
  /** Group attempt ids are `<attempt>-g<n>`. */
  attempt: string;
  maxRecords?: number;
  maxBytes?: number;
  aws: boolean;
  /** Progress lines at most this often (default 1 s). */
  progressEveryMs?: number;
}

/**
 * `cutpoint stream append --from FILE.jsonl`: the file (checked whole first, streamed, never
 * loaded) through the group-commit producer, one record per line. Groups are cut by size
 * only (records, bytes) and numbered from 0 under `--attempt`, so the same file with the
 * same knobs maps to the same attempts: a re-run reports committed groups as committed
 * and appends nothing twice. The first group that does not commit stops the file; the
 * refusal names exactly which lines committed (at which offsets) and which did not.
 */
export async function appendFile(
  ports: Ports,
  lane: LaneRef,
  fence: Fence,
  path: string,
  options: AppendFileOptions,
): Promise<FileAppendSummary> {
  const file = new JsonlFile(path);
  const knobs = validateKnobs({
    ...(options.maxRecords !== undefined && { maxRecords: options.maxRecords }),
    ...(options.maxBytes !== undefined && { maxBytes: options.maxBytes }),
  });
  const total = await file.scan({ groups: MAX_FILE_GROUPS, records: knobs.maxRecords, bytes: knobs.maxBytes });
  const ledger = new FileAppendLedger(lane, path, options.attempt, total);
  const every = options.progressEveryMs ?? 1000;
  let lastProgress = performance.now();
  const onGroup = (group: GroupReport) => {
    ledger.record(group);
    if (performance.now() - lastProgress >= every) {
      lastProgress = performance.now();
      progress(ledger.progressLine());
    }
  };
  const producer = new GroupProducer(lane, fence, ports, {
    attemptPrefix: options.attempt,
    // Groups are cut by size alone (a file is never waiting for a concurrent appender).
    lingerMs: 60_000,
    ...(options.maxRecords !== undefined && { maxRecords: options.maxRecords }),
    ...(options.maxBytes !== undefined && { maxBytes: options.maxBytes }),
    onGroup,
  });
  let failure: unknown;
  try {
    for await (const record of file.lines()) {
      await producer.writable();
      if (producer.halted) break;
      // Outcomes (and a group's error) arrive through onGroup, in group order.
      void producer.append([record]).catch(() => undefined);
    }
  } catch (error) {
    failure ??= error; // the file changed or became unreadable after the check
  }
  await producer.close();
  progress(ledger.progressLine());
  if (failure !== undefined || ledger.stopped) throw ledger.failure(failure, options.aws);
  return ledger.summary();
}

export { type FileAppendSummary };
