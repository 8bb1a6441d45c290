import { describe, expect, it } from 'vitest';
import { handlerPlaceholder, inFlowOrder, successPath } from '../../src/engine/flow-path.js';
import deliverWindow from '../../statemachines/deliver-window.asl.json' with { type: 'json' };

const machine = {
  StartAt: 'A',
  States: {
    A: { Type: 'Task', Resource: '${AaAFunctionArn}', Next: 'Parts' },
    Parts: {
      Type: 'Map',
      ItemProcessor: { StartAt: 'P', States: { P: { Type: 'Task', Resource: '${AaPFunctionArn}', End: true } } },
      Next: 'Ok',
    },
    Ok: { Type: 'Choice', Default: 'B' },
    B: { Type: 'Task', Resource: '${AaBFunctionArn}', Next: 'Notify' },
    Notify: { Type: 'Task', Resource: 'arn:aws:states:::sns:publish', Next: 'Done' },
    Done: { Type: 'Succeed' },
  },
};

describe('a flow success path (src/engine/flow-path.ts)', () => {
  it('follows Next, a Map item processor and a Choice default; a service integration is no registry step', () => {
    expect(successPath(machine).map((t) => t.state)).toEqual(['A', 'P', 'B']);
    expect(successPath(machine).map((t) => t.placeholder)).toEqual([
      'AaAFunctionArn',
      'AaPFunctionArn',
      'AaBFunctionArn',
    ]);
  });

  it('deliver-window: begin, staging, plan, the part, then the gates, publish and the end', () => {
    expect(successPath(deliverWindow).map((t) => t.state)).toEqual([
      'Begin',
      'CreateStaging',
      'PlanParts',
      'ExtractLoadPart',
      'VerifyEof',
      'Quality',
      'Publish',
      'Evidence',
      'Checkpoint',
      'Cleanup',
    ]);
  });

  it('names a handler path by its placeholder, and refuses what is not a handler path', () => {
    expect(handlerPlaceholder('delivery/begin')).toBe('DeliveryBeginFunctionArn');
    expect(() => handlerPlaceholder('Delivery/Begin')).toThrow(/not a handler path/);
  });

  it('maps the path through the in-process steps, and refuses a step missing on either side', () => {
    expect(inFlowOrder('f', machine, { 'aa/p': 'p', 'aa/b': 'b' }, 1)).toEqual(['p', 'b']);
    expect(() => inFlowOrder('f', machine, { 'aa/p': 'p' }, 1)).toThrow(/no step for B; not in the flow: -/);
    expect(() => inFlowOrder('f', machine, { 'aa/p': 'p', 'aa/b': 'b', 'aa/x': 'x' }, 1)).toThrow(
      /not in the flow: aa\/x/,
    );
  });
});
