import { describe, expect, it } from 'vitest';
import type { StepOutput } from '../../src/delivery/steps/common.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { fromFlowTask } from '../../src/delivery/steps/begin.js';
import { FLOW_STOP_STATES, flowStep } from '../../src/delivery/steps/flow-stop.js';
import { JOURNAL_STATES, type JournalState } from '../../src/domain/delivery/journal-states.js';
import type { DropStatus } from '../../src/domain/delivery/target-types.js';

const out = (state: JournalState, drop?: DropStatus): StepOutput & { drop?: DropStatus } => ({
  invocationId: 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa',
  fence: { owner: 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa', session: 's', epoch: 1 },
  targetId: 'w.dwh.events',
  known: null,
  state,
  acted: true,
  ...(drop ? { drop } : {}),
});
const deps = {} as DeliveryDeps;

describe('flowStep: the typed stops the deliver-window flow catches instead of a Choice after every Task', () => {
  it('passes every state the flow carries on from; stops with Delivery.NeedsRecovery on the others, naming the state', async () => {
    for (const state of JOURNAL_STATES) {
      const step = flowStep(async () => out(state));
      if (FLOW_STOP_STATES.has(state)) {
        await expect(step(undefined, deps)).rejects.toMatchObject({
          name: 'Delivery.NeedsRecovery',
          code: 'delivery.needs_recovery',
          message: expect.stringContaining(`stopped in ${state}`),
        });
      } else {
        await expect(step(undefined, deps)).resolves.toMatchObject({ state });
      }
    }
  });

  it('the last step must reach CUSTODY_RELEASED; an unproved drop is Delivery.CleanupUnproved', async () => {
    await expect(flowStep(async () => out('CUSTODY_RELEASED'), { last: true })(undefined, deps)).resolves.toMatchObject(
      { state: 'CUSTODY_RELEASED' },
    );
    await expect(flowStep(async () => out('SUCCEEDED'), { last: true })(undefined, deps)).rejects.toMatchObject({
      name: 'Delivery.NeedsRecovery',
    });
    await expect(flowStep(async () => out('SUCCEEDED', 'ABSENCE_UNPROVABLE'))(undefined, deps)).rejects.toMatchObject({
      name: 'Delivery.CleanupUnproved',
      code: 'delivery.cleanup_unproved',
    });
    await expect(flowStep(async () => out('SUCCEEDED', 'ABSENT_PROVED'))(undefined, deps)).resolves.toMatchObject({
      drop: 'ABSENT_PROVED',
    });
  });
});

describe("Begin's Task input in the flow: { executionInput, execution }", () => {
  it('takes the execution id and name from the context object, never from the execution input', () => {
    const given = { manifestText: 'm', selector: 's#r', session: 'x', execution: { id: 'forged', name: 'forged' } };
    const context = { id: 'arn:aws:states:eu-west-1:1:execution:sm:name-1', name: 'name-1' };
    expect(fromFlowTask({ executionInput: given, execution: context })).toEqual({
      manifestText: 'm',
      selector: 's#r',
      session: 'x',
      execution: context,
    });
    expect(fromFlowTask({ executionInput: given })).toEqual({ manifestText: 'm', selector: 's#r', session: 'x' });
    expect(fromFlowTask({ executionInput: 'text' })).toBeNull();
    // Outside a flow (in process, the CLI) the input is Begin's as given.
    expect(fromFlowTask(given)).toBe(given);
  });
});
