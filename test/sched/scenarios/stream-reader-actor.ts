import type { Ports } from '../../../src/ports/index.js';
import { readStream } from '../../../src/stream/read.js';
import { verifyRead } from '../../support/stream-history/actions.js';
import { decode, messageOf, nameOf, TRANSIENT } from '../../support/stream-history/model.js';
import { act, type StreamRun } from './stream-actors.js';

/** What a read may answer under faults instead of records: the caller reads again. */
const RETRY_READ = new Set(['Stream.ObjectReclaimed', 'Stream.ProviderUnavailable']);

/**
 * A reader pinning and reading [from, from + max) while trim and GC run, page after page
 * from each page's `next`: every page holds exactly the committed records from its start
 * (never a skip); a page is short below the committed end only when a fault hit the read
 * (a read stops at the first range it could not read: docs/stream-log.md "The stream log"), and the reader goes on from there
 * until it has its records or the committed end. Refused only as trimmed when a trim passed
 * `from`, or reclaimed or unavailable (read again). A stalled reader holds its first pin
 * until GC has run (stalledFirstGet).
 */
export function readerActor(run: StreamRun, from: number, maxRecords: number, stalled = false): void {
  const label = `reader:${from}+${maxRecords}${stalled ? ':stalled' : ''}`;
  const ports = stalled ? stalledFirstGet(run) : run.h.actors.reader.ports;
  act(run, label, async () => {
    let at = from;
    let wanted = maxRecords;
    for (let round = 0; round < 8 && wanted > 0; round++) {
      const before = { ...run.h.head };
      const faults = run.s.injected;
      const op = run.ops.invoke(label, 'read', { from: at, maxRecords: wanted });
      try {
        const result = await readStream({ ...run.lane, from: at, maxRecords: wanted }, ports).catch(
          (error: unknown) => {
            op.fail({ error: nameOf(error) });
            throw error;
          },
        );
        op.ok({ records: result.records.map((r) => decode(r.data)), committedEnd: result.committedEnd });
        const n = result.records.length;
        run.s.note(
          `${label} from ${at} → ${n} records, next ${result.next}, end ${result.committedEnd}, trim ${result.trimOffset}`,
        );
        run.h.check(
          result.trimOffset >= before.trimOffset,
          `${label}: trim offset ${result.trimOffset}, behind ${before.trimOffset} seen before the read`,
        );
        const short = run.s.injected > faults && n > 0 && n < Math.min(wanted, result.committedEnd - at);
        verifyRead(run.h, { from: at, maxRecords: short ? n : wanted }, result, before.committedEnd);
        run.h.head.committedEnd = Math.max(run.h.head.committedEnd, result.committedEnd);
        run.h.head.trimOffset = Math.max(run.h.head.trimOffset, result.trimOffset);
        if (result.next === result.committedEnd) return;
        [at, wanted] = [result.next, wanted - n];
      } catch (error) {
        run.s.note(`${label} from ${at} threw ${messageOf(error)}`);
        const name = nameOf(error);
        if (name === 'HistoryError') throw error;
        if (name === 'Stream.OffsetTrimmed') {
          run.h.check(
            run.trimTo !== undefined && at < run.trimTo,
            `${label} refused as trimmed at ${at}, but no trim passed it: ${messageOf(error)}`,
          );
          return;
        }
        // Reclaimed (a copy marked before the pin), or the store failing past the read's bounded retries: read again.
        run.h.check(RETRY_READ.has(name) || TRANSIENT.has(name), `${label} threw ${messageOf(error)}`);
      }
    }
  });
}

/** How long a stalled GET waits at most, in its own parks: far past any GC run of a schedule. */
const MAX_STALL_PARKS = 400;

/**
 * The reader's ports, its first object GET stalled (a slow store): a read pins a range's
 * copies before it GETs them and releases them after, so the stall holds the pin while
 * everyone else moves — parked at `reader.stalled` until the schedule's GC run has ended
 * (its drain has judged every marked object), well within the lease's 60 s.
 */
function stalledFirstGet(run: StreamRun): Ports {
  const { ports } = run.h.actors.reader;
  const { objects } = ports;
  let stalled = false;
  const get: Ports['objects']['get'] = async (...args) => {
    for (let parks = 0; !stalled && !run.gcEnded && parks < MAX_STALL_PARKS; parks++)
      await run.s.read('reader.stalled', async () => undefined);
    stalled = true;
    return objects.get(...args);
  };
  return { ...ports, objects: Object.assign(Object.create(objects) as Ports['objects'], { get }) };
}
