import { describe, expect, it } from 'vitest';
import { retainedDescription } from '../../infra/retained-alarms.js';
import { runbookLinkOf } from '../../src/docs/runbook/ref.js';
import { holdsCustody, JOURNAL_STATES } from '../../src/domain/delivery/journal-states.js';
import { RETAINED_STATES, RETAINED_SUBSYSTEM } from '../../src/operations/retained.js';
import { stepByHandler } from '../../src/registry/index.js';
import { RETAINED_STEP, retainedOf } from '../../src/telemetry/retained.js';
import { stepNameOf } from '../../src/telemetry/step-name.js';

describe('the retained-items gauge', () => {
  it('covers every custody-holding journal state, the quality states that hold governance and a suspended lane, each with a runbook page', () => {
    expect(RETAINED_STATES.filter((s) => s.kind === 'custody').map((s) => s.state)).toEqual(
      JOURNAL_STATES.filter(holdsCustody),
    );
    expect(RETAINED_STATES.filter((s) => s.kind === 'governance').map((s) => s.state)).toEqual([
      'FAILED',
      'TARGET_PENDING',
      'READER_GUARD_HELD',
    ]);
    expect(RETAINED_STATES.filter((s) => s.kind === 'lane').map((s) => s.state)).toEqual(['MAY_HAVE_COMMITTED']);
    for (const { kind, state } of RETAINED_STATES)
      expect(() => runbookLinkOf(RETAINED_SUBSYSTEM[kind], state)).not.toThrow();
  });

  it("is read from the sweep step's result only, every count kept (zeros too), malformed entries dropped", () => {
    expect(RETAINED_STEP).toBe(stepNameOf(stepByHandler('operations/sweep-retained').placeholder));
    const counts = [
      { kind: 'custody', state: 'INCIDENT_RETAINED', count: 1 },
      { kind: 'custody', state: 'EMPTY_STAGING', count: 0 },
      { kind: 'custody', state: 'PUBLISHED', count: -0.5 },
      { kind: 'custody', count: 2 },
    ];
    expect(retainedOf(RETAINED_STEP, { counts })).toEqual(counts.slice(0, 2));
    expect(retainedOf('DeliveryInspect', { counts })).toEqual([]);
    expect(retainedOf(RETAINED_STEP, { counts: 'none' })).toEqual([]);
  });

  it("each alarm's description fits CloudWatch's 1024 characters and says when the state counts", () => {
    for (const { kind, state } of RETAINED_STATES) {
      const text = retainedDescription(kind, state, 60);
      expect(text.length).toBeLessThanOrEqual(1024);
      expect(text).toMatch(
        state === 'INCIDENT_RETAINED' || state === 'FAILED' || state === 'TARGET_PENDING'
          ? /from the moment/
          : /60 minutes/,
      );
    }
  });
});
