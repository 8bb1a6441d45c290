import { randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CutpointError } from '../domain/errors.js';
import type { LaneRef } from '../domain/stream.js';
import { defaultStateDir } from '../local/state-dir.js';
import type { Fence } from '../domain/fence.js';

/**
 * The CLI's owner sessions, one file per lane: `.cutpoint/sessions/<stream>-<partition>.json`
 * for the local runtime and `.cutpoint/sessions/aws/<stream>-<partition>.json` for the
 * deployed system (a stream name has no `/`, so the two never collide). The session id is
 * a fencing secret: files are 0600 in a 0700 directory, and no command prints it.
 *
 * A takeover stores its session id as `pending` before it starts anything, so a re-run of
 * an interrupted takeover reuses the same id (the same execution name on AWS, the same
 * idempotent CAS locally) instead of minting a second session.
 */
export type RuntimeKind = 'local' | 'aws';

interface StoredLane extends LaneRef {
  active?: Fence & { takenAt: string };
  pending?: { owner: string; session: string; startedAt: string };
}

/** Next to the local runtime's state directory: `.cutpoint/sessions` by default. */
export function sessionsDir(runtime: RuntimeKind): string {
  const root = join(dirname(defaultStateDir()), 'sessions');
  return runtime === 'aws' ? join(root, 'aws') : root;
}

export function sessionFile(lane: LaneRef, runtime: RuntimeKind): string {
  return join(sessionsDir(runtime), `${lane.stream}-${lane.partition}.json`);
}

/** The session `append` uses, or a `stream.no_session` refusal naming the takeover to run. */
export async function activeSession(lane: LaneRef, runtime: RuntimeKind): Promise<Fence> {
  const stored = await load(lane, runtime);
  if (!stored?.active) {
    const aws = runtime === 'aws' ? ' --aws' : '';
    throw new CutpointError(
      'Stream.NoSession',
      'stream.no_session',
      `no owner session for lane ${lane.stream}/${lane.partition} in ${sessionsDir(runtime)}; run: cutpoint stream takeover ${lane.stream} --partition ${lane.partition}${aws}`,
    );
  }
  const { owner, session, epoch } = stored.active;
  return { owner, session, epoch };
}

/**
 * The session id for a takeover by `owner`: the pending one of an interrupted takeover by
 * the same owner, otherwise a new one — written to disk before it is returned.
 */
export async function beginTakeover(lane: LaneRef, runtime: RuntimeKind, owner: string): Promise<string> {
  const stored = (await load(lane, runtime)) ?? { stream: lane.stream, partition: lane.partition };
  if (stored.pending?.owner === owner) return stored.pending.session;
  const session = randomUUID();
  await save({ ...stored, pending: { owner, session, startedAt: new Date().toISOString() } }, runtime);
  return session;
}

/** The takeover applied: its fence becomes the lane's active session. */
export async function completeTakeover(lane: LaneRef, runtime: RuntimeKind, fence: Fence): Promise<void> {
  const { pending: _done, ...stored } = (await load(lane, runtime)) ?? {
    stream: lane.stream,
    partition: lane.partition,
  };
  await save(
    {
      ...stored,
      active: { owner: fence.owner, session: fence.session, epoch: fence.epoch, takenAt: new Date().toISOString() },
    },
    runtime,
  );
}

/**
 * The takeover with this session id ended FAILED for good (refused, nothing applied):
 * forget it, so the next takeover mints a new id (and, on AWS, a new execution name
 * instead of finding the failed one). A refused takeover leaves no local state: the file
 * goes when no active session remains in it, and the sessions directory when it is empty.
 */
export async function abandonTakeover(lane: LaneRef, runtime: RuntimeKind, session: string): Promise<void> {
  const stored = await load(lane, runtime);
  if (stored?.pending?.session !== session) return;
  const { pending: _failed, ...rest } = stored;
  if (rest.active) return save(rest, runtime);
  await rm(sessionFile(lane, runtime), { force: true });
  // Only when empty: the runtime's directory, then (for aws/) the sessions directory above it.
  for (const dir of runtime === 'aws' ? [sessionsDir('aws'), sessionsDir('local')] : [sessionsDir('local')]) {
    if (
      !(await rmdir(dir).then(
        () => true,
        () => false,
      ))
    )
      break;
  }
}

async function load(lane: LaneRef, runtime: RuntimeKind): Promise<StoredLane | undefined> {
  const file = sessionFile(lane, runtime);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let parsed: StoredLane;
  try {
    parsed = JSON.parse(text) as StoredLane;
  } catch {
    throw new CutpointError(
      'Stream.SessionStoreCorrupt',
      'stream.session_store_corrupt',
      `${file} is not valid JSON; remove it and take the lane over again`,
    );
  }
  if (parsed.stream !== lane.stream || parsed.partition !== lane.partition) {
    throw new CutpointError(
      'Stream.SessionStoreCorrupt',
      'stream.session_store_corrupt',
      `${file} belongs to another lane; remove it and take the lane over again`,
    );
  }
  return parsed;
}

/** Atomic replace (write a private temp file, rename), so a crash never leaves half a file. */
async function save(stored: StoredLane, runtime: RuntimeKind): Promise<void> {
  const dir = sessionsDir(runtime);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = sessionFile(stored, runtime);
  const temp = `${file}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
  await writeFile(temp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  await chmod(temp, 0o600); // the mode above is masked by the umask
  await rename(temp, file);
}
