import { describe, expect, it } from 'vitest';
import { retainedDescription } from '../../infra/retained-alarms.js';
import { runbookLinkOf, runbookPages } from '../../src/docs/runbook/ref.js';
import { withRunbook } from '../../src/delivery/journal/runbook.js';
import { recoveryProjectionOf } from '../../src/domain/delivery/identifiers.js';
import { holdsCustody, JOURNAL_STATES, type JournalState } from '../../src/domain/delivery/journal-states.js';
import type { QualityAction } from '../../src/domain/quality/actions.js';
import { RETAINED_STATES, type RetainedKind } from '../../src/operations/retained.js';
import type { StoredCapsule } from '../../src/domain/quality/capsule.js';
import { governanceIncidentNotice } from '../../src/quality/observe-incident.js';
import { qualityRunbookOf } from '../../src/quality/runbook.js';
import { recoveryStopNotice } from '../../src/recovery/stop-notice.js';
import { laneRunbookOf } from '../../src/stream/describe.js';

/**
 * Every durable state with a runbook page, walked: what inspect prints for an item in it,
 * the notice that pages for it and the alarm that stays open on it name the same page and
 * the same command (src/docs/runbook/ref.ts). Pure builders only: the projections, the
 * notice builders, the alarms' descriptions.
 */

const arn = (flow: string) => `arn:aws:states:eu-west-1:111111111111:execution:${flow}:x`;
const INVOCATION = 'inv-0123456789abcdef0123456789abcdef';
const summary = (state: JournalState) => ({
  invocationId: INVOCATION,
  route: 'daily',
  state,
  facts: { ownedStagesRecorded: true },
  window: { start: '2026-11-01T00:00:00.000Z', end: '2026-11-02T00:00:00.000Z' },
});
const alarmOf = (kind: RetainedKind, state: string) =>
  RETAINED_STATES.some((s) => s.kind === kind && s.state === state) ? retainedDescription(kind, state, 60) : undefined;

/** What each surface names for one state; undefined where that surface has nothing for it. */
interface Named {
  inspect?: { page: string; command: string };
  notice?: { page: string; command: string };
  alarm?: string;
}

function named(subsystem: string, state: string): Named {
  switch (subsystem) {
    case 'delivery': {
      const inspect = withRunbook(recoveryProjectionOf(summary(state as JournalState))).runbook;
      const notice =
        state === 'INCIDENT_RETAINED'
          ? recoveryStopNotice(
              'delivery-reconcile',
              'invocation',
              { executionArn: arn('delivery-reconcile'), error: 'Delivery.IncidentRetained' },
              JSON.stringify({ invocationId: INVOCATION }),
            ).message.runbook
          : undefined;
      return { inspect, notice, alarm: alarmOf('custody', state) };
    }
    case 'quality': {
      const guard = state === 'READER_GUARD_HELD';
      // An item whose guide offers what the page offers first (nothing, for a held guard).
      const first = runbookPages().find((p) => p.subsystem === 'quality' && p.state === state)!.permitted[0];
      const inspect = qualityRunbookOf({
        capsule_state: guard ? 'PREPARED' : state,
        capsule_version: 2,
        journal_state: 'PUBLISHED',
        permitted_actions: first ? [first.name as QualityAction] : [],
        reader_guard_held: guard,
      });
      // The governance incident notice (src/quality/observe-incident.ts), for a capsule in that
      // state: only the fields the builder reads.
      const capsule = {
        schema: 2,
        version: 4,
        state: guard ? 'PREPARED' : state,
        ...(guard ? { reader: { acquiredAt: '2026-11-01T00:00:00.000Z', runId: 'run-1' } } : {}),
        ...(state === 'FAILED' ? { failure: { probes: ['row_count'] } } : {}),
      } as unknown as StoredCapsule;
      const notice = governanceIncidentNotice(
        { invocationId: INVOCATION, route: 'daily', state: 'PUBLISHED' },
        capsule,
        { flow: 'publish-clickhouse', execution: arn('publish-clickhouse') },
      )?.message.runbook as { page: string; command: string } | undefined;
      return { inspect, notice, alarm: alarmOf('governance', state) };
    }
    case 'stream': {
      if (state !== 'MAY_HAVE_COMMITTED') return {};
      return {
        inspect: laneRunbookOf({ suspendedBy: 'a1' }),
        notice: recoveryStopNotice(
          'stream-resolve-append',
          'lane',
          { executionArn: arn('stream-resolve-append'), error: 'Stream.Unresolvable' },
          JSON.stringify({ stream: 'orders', partition: 0, attemptId: 'a1' }),
        ).message.runbook,
        alarm: alarmOf('lane', state),
      };
    }
    case 'generation': {
      if (state !== 'PREPARED') return {};
      return {
        notice: recoveryStopNotice(
          'commit-generation',
          'task',
          { executionArn: arn('commit-generation'), error: 'Generation.Undecided' },
          JSON.stringify({ recoveryOf: arn('commit-generation'), originalInput: '{"taskId":"t-1","generation":0}' }),
        ).message.runbook,
      };
    }
  }
  return {};
}

describe('every durable state: inspect, notice and alarm name the same runbook page and command', () => {
  const pages = runbookPages();

  it.each(pages.map((p) => [`${p.subsystem}/${p.state}`, p] as const))('%s', (_key, page) => {
    const expected = runbookLinkOf(page.subsystem, page.state);
    expect(expected.page).toBe(`docs/runbook/${page.subsystem}/${page.state}.md`);
    // The command is one the page prints: its first permitted action's, else its inspect command.
    expect([...page.permitted.map((a) => a.command), page.inspect]).toContain(expected.command);
    const { inspect, notice, alarm } = named(page.subsystem, page.state);
    if (inspect) expect(inspect).toEqual(expected);
    if (notice) expect(notice).toEqual(expected);
    if (alarm) {
      expect(alarm).toContain(expected.page);
      expect(alarm).toContain(expected.command);
    }
  });

  it('a state that holds something is reachable: every custody-holding journal state and held governance has an alarm, and every state an inspect output can show names its page there', () => {
    for (const state of JOURNAL_STATES) {
      expect(named('delivery', state).inspect, state).toBeDefined();
      if (holdsCustody(state)) expect(named('delivery', state).alarm, state).toBeDefined();
    }
    for (const state of ['FAILED', 'TARGET_PENDING', 'READER_GUARD_HELD'])
      expect(named('quality', state).alarm, state).toBeDefined();
    // The states that page through a notice: an incident, failed or incomplete governance, a stopped resolve, an undecided task.
    expect(named('stream', 'MAY_HAVE_COMMITTED').alarm).toBeDefined();
    for (const [subsystem, state] of [
      ['delivery', 'INCIDENT_RETAINED'],
      ['quality', 'FAILED'],
      ['quality', 'READER_GUARD_HELD'],
      ['stream', 'MAY_HAVE_COMMITTED'],
      ['generation', 'PREPARED'],
    ])
      expect(named(subsystem!, state!).notice, `${subsystem}/${state}`).toBeDefined();
  });
});
