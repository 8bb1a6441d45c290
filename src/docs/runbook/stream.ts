import type { AppendStatus } from '../../domain/stream.js';
import { cutpoint } from './commands.js';
import type { RunbookPage } from './model.js';

/**
 * The stream log's durable append interpretations (src/domain/stream.ts AppendStatus,
 * docs/rules.md#append-outcomes): each attempt id ends in exactly one of them, and
 * MAY_HAVE_COMMITTED suspends the lane (head.suspendedBy) until that same attempt is resolved.
 * The stream has no action table in code beyond the refusals each use case raises; this table
 * maps every status (the compiler checks it covers AppendStatus) to the commands and codes the
 * CLI and the flows use.
 */

const LANE = 'orders --partition 0';
const ATTEMPT = '"$ATTEMPT"';
const RESOLVE_INPUT = '{"stream":"orders","partition":0,"attemptId":"'; // + attempt + '"}'

const PAGES = {
  MAY_HAVE_COMMITTED: {
    summary: 'resolve this same attempt',
    meaning:
      "The attempt's WAL object is durable and bound to its offset, and the head CAS that would commit it has an unknown outcome (a lost response, a crash after the write). It may have committed. The lane is suspended by this attempt (`stream describe` shows `suspendedBy`): no append is accepted until it is resolved.",
    holds: 'yes: the lane refuses appends (`stream.lane_suspended`) until the attempt is resolved; a takeover does not lift it',
    incoming: [
      'an append (stream-append, `cutpoint stream append`) whose head CAS answered UNKNOWN: the attempt suspended the lane for itself before its CAS (SuspendLane does it for a LaneWriter), so the lane stays suspended with the attempt id even when the execution ends before SuspendLane',
      'a LaneWriter (a producer embedding cutpoint) whose process died before SuspendLane: its writer slot still holds the lane (`stream describe` shows `writer`), and every other append is refused naming it until the writer is resolved',
    ],
    permitted: [
      {
        name: 'resolve',
        does: "It reloads the head and the exact commit record of the original attempt id: committed (KNOWN_COMMITTED, index and generation 0 repaired) or proven not (a spent marker is written, KNOWN_NOT_COMMITTED); then it lifts the suspension. A time-marked attempt past the lane's attempt window is never spent: resolve reports the commit record or spent marker that still stands, or lifts the suspension it holds once the window and 15 minutes have passed (KNOWN_NOT_COMMITTED), or refuses.",
        command: cutpoint(`stream resolve ${LANE} --attempt ${ATTEMPT}`),
        start: { flow: 'stream-resolve-append', input: `${RESOLVE_INPUT}'"$ATTEMPT"'"}`, executionName: 'resolve-orders-0-"$ATTEMPT"' },
      },
      {
        name: 'resolve the writer',
        does: "When `stream describe` shows a `writer` instead (`WRITER`: its id): it marks the writer's slot (no head CAS of the writer can apply after that), proves each attempt of the writer committed or spends it, prints each outcome (append the records of the KNOWN_NOT_COMMITTED ones again) and releases the lane.",
        command: cutpoint(`stream resolve ${LANE} --writer "$WRITER"`),
      },
    ],
    forbidden: [
      { name: 'appending the same records under a new attempt id', why: 'If the original committed, the records would be in the log twice. Only a resolve of this same attempt settles it.' },
      { name: 'any other append to the lane', why: 'Refused with `stream.lane_suspended` (`Stream.LaneSuspended`) naming this attempt (or the writer), until it is resolved.' },
    ],
    diagnostics: [
      { code: 'stream.may_have_committed', when: '`cutpoint stream append` exits 1 with it, and the resolve command to run' },
      { code: 'stream.lane_suspended', when: 'every later append to the lane, until the resolve' },
      { code: 'stream.resolve_inconsistent', when: 'a resolve that finds evidence that contradicts itself: the lane stays suspended; escalate' },
      { code: 'stream.attempt_expired', when: "a resolve of a time-marked attempt past the lane's attempt window that no evidence settles yet (the message says when to run it again), or nothing proves any more: nothing written; whether its records committed is in the lane's commit records" },
    ],
  },
  KNOWN_NOT_COMMITTED: {
    summary: 'append again under a new attempt id',
    meaning: 'The head did not and can never advance for this attempt (refused before its WAL was written, or proven not committed: a spent marker). None of its records is in the log.',
    holds: 'no',
    incoming: [
      'an append refused before the head CAS (fenced, a suspended lane, bad records): RetireAttempt spends the attempt',
      'from [MAY_HAVE_COMMITTED](MAY_HAVE_COMMITTED.md) by resolve, when the head proves the attempt did not commit',
    ],
    permitted: [
      {
        name: 'append again',
        does: 'A new attempt id for the same records is safe: this one provably wrote nothing to the log.',
        command: `printf 'hello\\nworld\\n' | ${cutpoint(`stream append ${LANE} --attempt "$NEW_ATTEMPT"`)}`,
      },
    ],
    forbidden: [{ name: 'reusing this attempt id', why: 'An attempt id is bound to one batch for good; once spent it is refused with `stream.attempt_aborted` (`Stream.AttemptAborted`).' }],
    diagnostics: [
      { code: 'stream.not_committed', when: '`cutpoint stream append` exits 1 with it (the message says what has to happen first: a takeover, a resolve)' },
      { code: 'stream.attempt_aborted', when: 'the same attempt id used again' },
    ],
  },
  KNOWN_COMMITTED: {
    summary: 'nothing (committed)',
    meaning: "The attempt's records are committed at their range [start, end). Derived data (the index, generation 0) may still be missing (`pendingRepairs`); reads and resolve repair it, and the WAL object serves the range meanwhile.",
    holds: 'no',
    incoming: ['an append whose head CAS applied', 'from [MAY_HAVE_COMMITTED](MAY_HAVE_COMMITTED.md) by resolve, when the head proves the attempt committed'],
    permitted: [],
    forbidden: [
      { name: 'appending the same records again under a new attempt id', why: 'They would be in the log twice. Re-running with the SAME attempt id is safe: it answers KNOWN_COMMITTED with the same range.' },
    ],
    diagnostics: [],
  },
} satisfies Record<AppendStatus, Omit<RunbookPage, 'subsystem' | 'state' | 'inspect' | 'sources'>>;

export function streamPages(): RunbookPage[] {
  return (Object.keys(PAGES) as AppendStatus[]).map((state) => ({
    subsystem: 'stream',
    state,
    ...PAGES[state],
    inspect: cutpoint('stream describe orders'),
    sources: ['src/domain/stream.ts', 'src/stream/resolve.ts'],
  }));
}
