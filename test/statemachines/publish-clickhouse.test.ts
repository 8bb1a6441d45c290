import { describe, expect, it } from 'vitest';
import { OBSERVE_TIMING, QUALITY_STOPS, stepByPlaceholder } from '../../src/registry/index.js';
import { DEFAULT_OBSERVE_DEADLINE_S } from '../../src/domain/delivery/manifest-types.js';
import { CLICKHOUSE_ERROR_CLASSES } from '../../src/domain/clickhouse-errors.js';
import { loadAsl, taskStates, type AslDefinition } from '../../src/local/asl.js';

/**
 * Static checks of statemachines/publish-clickhouse.asl.json (docs/rules.md#observation-failures, K4, F4) on
 * top of the generic ones every flow passes (test/statemachines/asl.test.ts).
 */
const flow = loadAsl('publish-clickhouse');
const deliver = loadAsl('deliver-window');
const states = flow.States;

/** The Task states in execution order, following Next from StartAt. */
function mainPath(machine: AslDefinition): string[] {
  const path: string[] = [];
  for (let name: string | undefined = machine.StartAt; name; name = machine.States[name]?.Next as string | undefined)
    path.push(name);
  return path;
}

interface ChoiceRule {
  Variable?: string;
  StringEquals?: string;
  Or?: ChoiceRule[];
  Next?: string;
}

/** Where a caught error ends: through NotifyIncident and the AfterIncident Choice on `$.stop.Error`, or directly. */
function endOf(next: string, error: string): string {
  if (next !== 'NotifyIncident') return next;
  const choice = states.AfterIncident as unknown as { Choices: ChoiceRule[]; Default: string };
  const matches = (rule: ChoiceRule): boolean =>
    rule.Or ? rule.Or.some(matches) : rule.Variable === '$.stop.Error' && rule.StringEquals === error;
  return choice.Choices.find(matches)?.Next ?? choice.Default;
}

describe('publish-clickhouse', () => {
  it('runs Begin → CreateStaging → PlanParts → ExtractLoadParts → VerifyEof → FillCandidate → PrepareCapsule → Dispatch → ObserveTarget → Evidence → Checkpoint → Cleanup, STANDARD steps only', () => {
    expect(mainPath(flow)).toEqual([
      'Begin',
      'CreateStaging',
      'PlanParts',
      'ExtractLoadParts',
      'VerifyEof',
      'FillCandidate',
      'PrepareCapsule',
      'Dispatch',
      'ObserveTarget',
      'Evidence',
      'Checkpoint',
      'Cleanup',
    ]);
    expect(states.Cleanup!.End).toBe(true);
  });

  it("reuses deliver-window's Distributed Map exactly and the shared steps' registry entries", () => {
    expect(states.ExtractLoadParts).toEqual(deliver.States.ExtractLoadParts);
    for (const shared of ['Begin', 'CreateStaging', 'PlanParts', 'VerifyEof', 'Evidence', 'Checkpoint'])
      expect(states[shared]!.Resource, shared).toBe(deliver.States[shared]!.Resource);
    const placeholders = taskStates(flow).map((t) => t.placeholder);
    expect(placeholders).toEqual(
      expect.arrayContaining([
        'PublicationFillCandidateFunctionArn',
        'QualityPrepareCapsuleFunctionArn',
        'PublicationDispatchFunctionArn',
        'QualityObserveTargetFunctionArn',
        'PublicationCleanupFunctionArn',
      ]),
    );
  });

  it('Begin names its flow in the Task parameters (not forgeable by the execution input), and so does deliver-window', () => {
    expect(states.Begin!.Parameters).toMatchObject({
      'executionInput.$': '$$.Execution.Input',
      flow: 'publish-clickhouse',
    });
    expect(deliver.States.Begin!.Parameters).toMatchObject({
      'executionInput.$': '$$.Execution.Input',
      flow: 'deliver-window',
    });
  });

  it('carries `known` and the retry count into every Task after Begin, and stops for recovery on Delivery.NeedsRecovery everywhere (through the incident step, which notifies only an INCIDENT_RETAINED journal)', () => {
    for (const { state, definition } of taskStates(flow).filter(
      (t) => !['Begin', 'ExtractLoadPart', 'NotifyIncident'].includes(t.state),
    )) {
      expect(definition.Parameters, state).toMatchObject({
        'known.$': '$.delivery.known',
        'retry.$': '$$.State.RetryCount',
      });
      expect(definition.Catch?.[0], state).toEqual({
        ErrorEquals: ['Delivery.NeedsRecovery'],
        ResultPath: '$.stop',
        Next: 'NotifyIncident',
      });
      expect(endOf(definition.Catch![0]!.Next, 'Delivery.NeedsRecovery'), state).toBe('StoppedForRecovery');
    }
    expect(states.Begin!.Catch?.[0]).toEqual({
      ErrorEquals: ['Delivery.NeedsRecovery'],
      ResultPath: '$.stop',
      Next: 'StoppedForRecovery',
    });
  });

  it("one NotifyIncident Task (the recovery flows' handler), one Retry block, whose own failure never hides the stop", () => {
    const notify = states.NotifyIncident!;
    expect(notify).toMatchObject({
      Type: 'Task',
      Resource: '${DeliveryNotifyIncidentFunctionArn}',
      Next: 'AfterIncident',
      ResultPath: '$.notice',
    });
    expect(notify.Parameters).toEqual({
      'invocationId.$': '$.delivery.invocationId',
      flow: 'publish-clickhouse',
      'execution.$': '$$.Execution.Id',
    });
    // Its own retrier, plus the Lambda service and throttle retriers every Lambda Task carries (asl.test.ts).
    expect(notify.Retry).toHaveLength(3);
    expect(notify.Catch?.map((c) => c.Next)).toEqual(['AfterIncident']);
    expect(taskStates(flow).filter((t) => t.placeholder === 'DeliveryNotifyIncidentFunctionArn')).toHaveLength(1);
  });

  it('K4: no Task retries a ClickHouse error class, a Publication.* or Quality.* error, or States.ALL', () => {
    const clickhouse = new Set<string>(CLICKHOUSE_ERROR_CLASSES);
    for (const { state, definition } of taskStates(flow)) {
      const retried = (definition.Retry ?? []).flatMap((r) => r.ErrorEquals);
      expect(
        retried.filter(
          (e) =>
            clickhouse.has(e) || /^(ClickHouse|Publication|Quality)\./.test(e) || e === 'States.ALL' || e === 'Error',
        ),
        state,
      ).toEqual([]);
    }
  });

  it('Quality.TargetPending, Quality.Failed, Quality.Incomplete and Quality.ReaderGuardHeld end the flow in named Fail states of the same error', () => {
    const caught = Object.fromEntries(
      (states.ObserveTarget!.Catch ?? []).flatMap((c) => c.ErrorEquals.map((e) => [e, c.Next])),
    );
    for (const error of QUALITY_STOPS) {
      const fail = states[endOf(caught[error]!, error)];
      expect(fail, error).toMatchObject({ Type: 'Fail', Error: error });
    }
    // FAILED, INCOMPLETE and a guard held when the flow gives up pass the incident step first
    // (docs/rules.md#quality-commands): a guard left by
    // this execution's own crashed attempt is reported by nothing else (found by the scheduler, publication seed 4); pending does not.
    expect(['Quality.Failed', 'Quality.Incomplete', 'Quality.ReaderGuardHeld'].map((e) => caught[e])).toEqual([
      'NotifyIncident',
      'NotifyIncident',
      'NotifyIncident',
    ]);
    expect(caught['Quality.TargetPending']).toBe('QualityTargetPending');
    // A timeout whose retries are spent is an unproved outcome, not a refusal.
    for (const error of ['States.Timeout', 'Sandbox.Timedout', 'Lambda.Unknown'])
      expect(endOf(caught[error]!, error), error).toBe('QualityIncomplete');
  });

  it('F4: ObserveTarget — default deadline + reserve < its Lambda timeout < its Task TimeoutSeconds', () => {
    const lambda = stepByPlaceholder('QualityObserveTargetFunctionArn').timeoutSeconds;
    expect(OBSERVE_TIMING.deadlineSeconds).toBe(DEFAULT_OBSERVE_DEADLINE_S);
    expect(lambda).toBe(OBSERVE_TIMING.lambdaSeconds);
    expect(OBSERVE_TIMING.deadlineSeconds + OBSERVE_TIMING.reserveSeconds).toBeLessThan(lambda);
    expect(lambda).toBeLessThan(states.ObserveTarget!.TimeoutSeconds as number);
  });
});
