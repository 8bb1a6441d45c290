import { randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CutpointError } from '../../../domain/errors.js';
import type { LaneRef } from '../../../domain/stream.js';
import type { Fence } from '../../../domain/fence.js';
import { sessionsDir, type RuntimeKind } from '../../session-store.js';

/**
 * The CLI's cursor owner sessions, kept like the writer's (src/cli/session-store.ts): one
 * file per lane and group, `<sessions>/cursors/<stream>/<partition>/<group>.json` (nested,
 * so no two lanes or groups can share a file name), 0600 in 0700 directories. The session
 * id is a fencing secret and is never printed. A takeover stores its id as `pending`
 * before the CAS, so a re-run of an interrupted takeover reuses it (idempotent) instead of
 * minting a second epoch.
 */
interface StoredCursor extends LaneRef {
  group: string;
  active?: Fence & { takenAt: string };
  pending?: { owner: string; session: string; startedAt: string };
}

function fileOf(lane: LaneRef, group: string, runtime: RuntimeKind): string {
  return join(sessionsDir(runtime), 'cursors', lane.stream, String(lane.partition), `${group}.json`);
}

export async function storedCursorSession(
  lane: LaneRef,
  group: string,
  runtime: RuntimeKind,
): Promise<Fence | undefined> {
  const active = (await load(lane, group, runtime))?.active;
  return active && { owner: active.owner, session: active.session, epoch: active.epoch };
}

/** The session id for a cursor takeover by `owner`: an interrupted one's, else a new one (on disk first). */
export async function beginCursorTakeover(
  lane: LaneRef,
  group: string,
  runtime: RuntimeKind,
  owner: string,
): Promise<string> {
  const stored = (await load(lane, group, runtime)) ?? { ...lane, group };
  if (stored.pending?.owner === owner) return stored.pending.session;
  const session = randomUUID();
  await save({ ...stored, pending: { owner, session, startedAt: new Date().toISOString() } }, runtime);
  return session;
}

export async function completeCursorTakeover(
  lane: LaneRef,
  group: string,
  runtime: RuntimeKind,
  fence: Fence,
): Promise<void> {
  const { pending: _done, ...stored } = (await load(lane, group, runtime)) ?? { ...lane, group };
  await save(
    {
      ...stored,
      active: { owner: fence.owner, session: fence.session, epoch: fence.epoch, takenAt: new Date().toISOString() },
    },
    runtime,
  );
}

/** A refused takeover (nothing applied): forget its id; the file goes when nothing else is in it. */
export async function abandonCursorTakeover(
  lane: LaneRef,
  group: string,
  runtime: RuntimeKind,
  session: string,
): Promise<void> {
  const stored = await load(lane, group, runtime);
  if (stored?.pending?.session !== session) return;
  const { pending: _failed, ...rest } = stored;
  if (rest.active) return save(rest, runtime);
  await rm(fileOf(lane, group, runtime), { force: true });
}

async function load(lane: LaneRef, group: string, runtime: RuntimeKind): Promise<StoredCursor | undefined> {
  const file = fileOf(lane, group, runtime);
  let parsed: StoredCursor;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8')) as StoredCursor;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CutpointError(
      'Stream.SessionStoreCorrupt',
      'stream.session_store_corrupt',
      `${file} is not valid JSON; remove it and run the consume again (it takes the cursor over)`,
    );
  }
  if (parsed.stream !== lane.stream || parsed.partition !== lane.partition || parsed.group !== group) {
    throw new CutpointError(
      'Stream.SessionStoreCorrupt',
      'stream.session_store_corrupt',
      `${file} belongs to another cursor; remove it and run the consume again`,
    );
  }
  return parsed;
}

/** Atomic replace: a private temp file, then rename. */
async function save(stored: StoredCursor, runtime: RuntimeKind): Promise<void> {
  const file = fileOf(stored, stored.group, runtime);
  await mkdir(join(file, '..'), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
  await writeFile(temp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, file);
}

/** Errors after which the CAS may have applied: the pending id stays for the re-run. */
const MAY_HAVE_APPLIED = new Set(['Cutpoint.OutcomeUnknown', 'Cutpoint.WorkerCrashed', 'Cutpoint.EffectFailed']);

/**
 * Runs a cursor takeover (or seek) under the stored pending session id and keeps the fence
 * it installed as the group's active session. A refusal (nothing applied) forgets the id.
 */
export async function withNewCursorSession<R extends { owner: string; epoch: number }>(
  lane: LaneRef,
  group: string,
  runtime: RuntimeKind,
  owner: string,
  run: (session: string) => Promise<R>,
): Promise<{ result: R; fence: Fence }> {
  const session = await beginCursorTakeover(lane, group, runtime, owner);
  let result: R;
  try {
    result = await run(session);
  } catch (error) {
    if (!(error instanceof Error) || !MAY_HAVE_APPLIED.has(error.name))
      await abandonCursorTakeover(lane, group, runtime, session);
    throw error;
  }
  const fence = { owner: result.owner, session, epoch: result.epoch };
  await completeCursorTakeover(lane, group, runtime, fence);
  return { result, fence };
}
