import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { validateOwner, type LaneRef } from '../../../domain/stream.js';
import { sameFence } from '../../../domain/fence.js';
import type { Fence } from '../../../domain/fence.js';
import type { Ports } from '../../../ports/index.js';
import { commitCursor } from '../../../stream/cursor/commit.js';
import { CursorBelowTrimError } from '../../../stream/cursor/errors.js';
import { loadCursor } from '../../../stream/cursor/store.js';
import { takeoverCursor } from '../../../stream/cursor/takeover.js';
import { loadHead } from '../../../stream/lane-store.js';
import { readStream, MAX_READ_RECORDS } from '../../../stream/read.js';
import { progress, STREAMED, UsageError } from '../../io.js';
import { storedCursorSession, withNewCursorSession } from './cursor-sessions.js';
import { CURSOR_ADMIN_HANDLERS, groupOf, type CursorHandler } from './cursors.js';
import { defaultOwner, integer, integerIn, type Values } from './options.js';
import type { Runtime } from './runtime.js';

export const cursorHelp = `cutpoint stream consume <stream> --partition P --group G [--max N] [--batch N] [--follow] [--text] [--owner NAME]
  reads from the group's committed cursor and prints one JSON line per record
  ({offset, data} — data base64, --text adds UTF-8) on stdout, committing the cursor
  after each batch is written (stream.cursor.commit): a crash between the print and the
  commit delivers that batch again on the next consume (at-least-once, never a skip).
  It resumes this machine's cursor session for the group, or takes the cursor over
  (stream.cursor.takeover: a new epoch that fences any other consumer of the group,
  whose later commits are refused with stream.cursor_fenced). --max stops after N
  records, --batch sets records per commit (default 100), --follow waits for new
  records (Ctrl-C stops after the current batch). A failure mid-run exits 1 with the
  records already printed on stdout (their batch committed or to be delivered again).
cutpoint stream cursors <stream> --partition P
  every group's position, lag, owner and epoch on the lane (never a session id)
cutpoint stream seek <stream> --partition P --group G --to OFFSET --yes
  moves the group's cursor anywhere in [trim offset, committed end] (back: replay;
  forward: skip) by taking it over (stream.cursor.seek); a commit never moves it back
cutpoint stream policy <stream> --groups A,B
  the stream's retention policy: a trim may not pass the cursor of any group it names
  (stream.cursor.policy; --groups "" names none)
consume, cursors, seek and policy run in-process (with --aws on CUTPOINT_TABLE_NAME and
CUTPOINT_BUCKET_NAME)`;

const DEFAULT_BATCH = 100;
const FOLLOW_POLL_MS = 1000;
const PROGRESS_EVERY_MS = 5000;

interface ConsumeOptions {
  group: string;
  max: number;
  batch: number;
  follow: boolean;
  text: boolean;
}

function optionsOf(values: Values): ConsumeOptions {
  const group = groupOf(values);
  const max = values.max === undefined ? Infinity : integer(values, 'max');
  // --max 0 would take the cursor over (a new epoch fencing the group's consumer) to read nothing.
  if (max < 1) throw new UsageError('--max must be at least 1 (leave it out to read to the end)');
  const batch = values.batch === undefined ? DEFAULT_BATCH : integerIn(values, 'batch', 1, MAX_READ_RECORDS);
  return { group, max, batch, follow: values.follow === true, text: values.text === true };
}

/**
 * The group's session: this machine's stored one while it is still the cursor's owner (and
 * `owner` is the one it was taken by), otherwise a takeover (a new epoch, stored before it is used, never printed).
 */
async function cursorSession(
  runtime: Runtime,
  ports: Ports,
  lane: LaneRef,
  group: string,
  owner: string,
): Promise<Fence> {
  const stored = await storedCursorSession(lane, group, runtime.kind);
  const cursor = await loadCursor(ports, lane, group);
  if (stored && stored.owner === owner && cursor && sameFence(cursor.fence, stored)) {
    progress(
      `resuming cursor ${group} of ${lane.stream}/${lane.partition} at ${cursor.position} (epoch ${stored.epoch})`,
    );
    return stored;
  }
  const { result, fence } = await withNewCursorSession(lane, group, runtime.kind, owner, (session) =>
    takeoverCursor({ ...lane, group, owner, session }, ports),
  );
  progress(
    `took over cursor ${group} of ${lane.stream}/${lane.partition} at ${result.position} (epoch ${result.epoch})`,
  );
  return fence;
}

async function writeOut(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

async function consume(runtime: Runtime, lane: LaneRef, values: Values): Promise<typeof STREAMED> {
  const options = optionsOf(values);
  const { group } = options;
  const owner = validateOwner(typeof values.owner === 'string' ? values.owner : defaultOwner());
  const ports = await runtime.ports();
  await loadHead(ports, lane); // a missing lane: Stream.LaneMissing, before any session is stored
  const fence = await cursorSession(runtime, ports, lane, group, owner);
  let position = (await loadCursor(ports, lane, group))!.position;
  let stopping = false;
  const stop = () => {
    stopping = true;
    progress('stopping after the current batch');
  };
  process.once('SIGINT', stop);
  let consumed = 0;
  let reported = Date.now();
  try {
    while (!stopping && consumed < options.max) {
      const head = await loadHead(ports, lane);
      if (position < head.trimOffset) throw new CursorBelowTrimError(lane, group, position, head.trimOffset);
      const page = await readStream(
        { ...lane, from: position, maxRecords: Math.min(options.batch, options.max - consumed) },
        ports,
      );
      if (page.records.length === 0) {
        if (!options.follow) break;
        await sleep(FOLLOW_POLL_MS);
        continue;
      }
      const lines = page.records.map((r) =>
        JSON.stringify(options.text ? { ...r, text: Buffer.from(r.data, 'base64').toString('utf8') } : r),
      );
      await writeOut(`${lines.join('\n')}\n`);
      // Only after the batch is out: a crash before this commit delivers it again.
      await commitCursor({ ...lane, group, session: fence, position: page.next }, ports);
      position = page.next;
      consumed += page.records.length;
      if (Date.now() - reported >= PROGRESS_EVERY_MS) {
        reported = Date.now();
        progress(`consumed ${consumed} records; cursor ${group} at ${position} of ${page.committedEnd}`);
      }
    }
  } finally {
    process.removeListener('SIGINT', stop);
  }
  progress(
    `consumed ${consumed} records; cursor ${group} of ${lane.stream}/${lane.partition} committed at ${position}`,
  );
  return STREAMED;
}

export const CURSOR_HANDLERS: Record<string, CursorHandler> = {
  consume: {
    options: {
      partition: { type: 'string' },
      group: { type: 'string' },
      max: { type: 'string' },
      batch: { type: 'string' },
      follow: { type: 'boolean' },
      text: { type: 'boolean' },
      owner: { type: 'string' },
    },
    check: (v) => void optionsOf(v),
    run: (t, r) => consume(t, r.lane, r.values),
  },
  ...CURSOR_ADMIN_HANDLERS,
};
