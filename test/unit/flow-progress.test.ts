import { describe, expect, it } from 'vitest';
import { describeFlowEvent } from '../../src/cli/flow-progress.js';

describe('flow progress lines', () => {
  it('shows states, failures and a Distributed Map run; nothing for other events', () => {
    expect(describeFlowEvent({ type: 'StateEntered', state: 'PlanParts' })).toBe('→ PlanParts');
    expect(describeFlowEvent({ type: 'StateRetried', state: 'Begin', error: 'Cutpoint.OutcomeUnknown' })).toBe(
      '  StateRetried Begin Cutpoint.OutcomeUnknown',
    );
    expect(describeFlowEvent({ type: 'MapRunStarted', state: 'ExtractLoadParts', items: 24 })).toBe(
      '  ExtractLoadParts: map run of 24 items',
    );
    expect(
      describeFlowEvent({
        type: 'MapRunItemFailed',
        state: 'ExtractLoadParts',
        item: 3,
        error: 'Delivery.StepRefused',
      }),
    ).toBe('  ExtractLoadParts: item 3 failed: Delivery.StepRefused');
    expect(
      describeFlowEvent({
        type: 'MapRunFailed',
        state: 'ExtractLoadParts',
        error: 'States.ExceedToleratedFailureThreshold',
      }),
    ).toBe('  ExtractLoadParts: map run failed (States.ExceedToleratedFailureThreshold)');
    expect(describeFlowEvent({ type: 'MapRunSucceeded', state: 'ExtractLoadParts' })).toBe(
      '  ExtractLoadParts: map run succeeded',
    );
    expect(describeFlowEvent({ type: 'StateExited', state: 'Begin' })).toBeUndefined();
  });
});
