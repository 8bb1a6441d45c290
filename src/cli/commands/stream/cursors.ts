import { validateOwner, type LaneRef } from '../../../domain/stream.js';
import { loadHead } from '../../../stream/lane-store.js';
import { setRetentionPolicy } from '../../../stream/cursor/policy.js';
import { validateGroup } from '../../../stream/cursor/rules.js';
import { listCursors, loadCursor, loadPolicy } from '../../../stream/cursor/store.js';
import { seekCursor } from '../../../stream/cursor/takeover.js';
import { UsageError } from '../../io.js';
import { withNewCursorSession } from './cursor-sessions.js';
import { defaultOwner, integer, type Values } from './options.js';
import type { Runtime } from './runtime.js';

/** `cutpoint stream cursors | seek | policy`: the operator's view and controls of the consumer cursors. */
export interface CursorRequest {
  stream: string;
  lane: LaneRef;
  values: Values;
}

export interface CursorHandler {
  options: Record<string, { type: 'string' | 'boolean' }>;
  check?: (values: Values) => void;
  run: (runtime: Runtime, request: CursorRequest) => Promise<unknown>;
}

export function groupOf(values: Values): string {
  if (typeof values.group !== 'string') throw new UsageError('--group NAME is required');
  return validateGroup(values.group);
}

function ownerOf(values: Values): string {
  return validateOwner(typeof values.owner === 'string' ? values.owner : defaultOwner());
}

/** Every group's position on the lane, its lag and whether the retention policy names it (never a session id). */
async function cursors(runtime: Runtime, lane: LaneRef): Promise<unknown> {
  const ports = await runtime.ports();
  const head = await loadHead(ports, lane);
  const policy = (await loadPolicy(ports, lane.stream))?.groups ?? [];
  const all = await listCursors(ports, lane);
  return {
    ...lane,
    committedEnd: head.committedEnd,
    trimOffset: head.trimOffset,
    retention: policy,
    cursors: all.map((c) => ({
      group: c.group,
      position: c.position,
      lag: head.committedEnd - c.position,
      owner: c.fence.owner,
      epoch: c.fence.epoch,
      retained: policy.includes(c.group),
      ...(c.position < head.trimOffset ? { trimmedPast: true } : {}),
      ...(c.committedAt ? { committedAt: c.committedAt } : {}),
    })),
  };
}

/** A seek is a cursor takeover that sets the position: the group's consumer is fenced. */
async function seek(runtime: Runtime, lane: LaneRef, values: Values): Promise<unknown> {
  const group = groupOf(values);
  const to = integer(values, 'to');
  const owner = ownerOf(values);
  const ports = await runtime.ports();
  // A missing lane: Stream.LaneMissing before any session is stored (or its directory made), as consume.
  await loadHead(ports, lane);
  const before = await loadCursor(ports, lane, group);
  const { result } = await withNewCursorSession(lane, group, runtime.kind, owner, (session) =>
    seekCursor({ ...lane, group, owner, session, to }, ports),
  );
  return { ...result, ...(before ? { previousPosition: before.position } : {}) };
}

async function policy(runtime: Runtime, stream: string, values: Values): Promise<unknown> {
  const raw = values.groups;
  if (typeof raw !== 'string')
    throw new UsageError('--groups A,B is required (--groups "" removes the policy\'s groups)');
  const groups = raw === '' ? [] : raw.split(',').map((g) => g.trim());
  return setRetentionPolicy({ stream, groups }, await runtime.ports());
}

export const CURSOR_ADMIN_HANDLERS: Record<string, CursorHandler> = {
  cursors: {
    options: { partition: { type: 'string' } },
    run: (t, r) => cursors(t, r.lane),
  },
  seek: {
    options: {
      partition: { type: 'string' },
      group: { type: 'string' },
      to: { type: 'string' },
      owner: { type: 'string' },
      yes: { type: 'boolean' },
    },
    check: (v) => {
      groupOf(v);
      integer(v, 'to');
      if (v.yes !== true)
        throw new UsageError(
          'stream seek moves a cursor (backwards: the group reads records again; forwards: it skips them) and fences its consumer; add --yes to do it',
        );
    },
    run: (t, r) => seek(t, r.lane, r.values),
  },
  policy: {
    options: { groups: { type: 'string' } },
    run: (t, r) => policy(t, r.stream, r.values),
  },
};
