import fc from 'fast-check';
import { loadAsl } from '../../src/local/asl.js';
import { designedStopErrors } from '../../src/recovery/designed-stops.js';
import { localStateMachineArn } from '../support/local-executions.js';
import { freshSuffix, spliced } from './arbitraries.js';

/**
 * The recovery dispatcher's input (functions/recovery/dispatch.ts → dispatchRecovery): the
 * EventBridge rule's constant part ({flow, designedStops, recovery}) and the "Step Functions
 * Execution Status Change" event's detail. Each case is a valid request for a FAILED
 * commit-generation execution — one the dispatcher would recover — with exactly one
 * defect: not an object, a field missing or of another type, a status that has not ended,
 * a recovery declaration that names no flow, state machine or recoverable status, an
 * execution name Step Functions would refuse, an ARN that is not that execution's.
 */

export interface DispatchCase {
  what: string;
  event: unknown;
}

type Rec = Record<string, unknown>;

/** A request the dispatcher would act on: a FAILED commit-generation execution named `name`, its recovery declared. */
export function validRequest(name: string): Rec {
  const input = {
    root: `fuzz/${name}`,
    generation: 0,
    taskId: `task-${name}`,
    sources: [
      { key: 'docs/readme.txt', sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', size: 5 },
    ],
  };
  return {
    flow: 'commit-generation',
    designedStops: designedStopErrors(loadAsl('commit-generation')),
    recovery: {
      by: 'commit-generation',
      stateMachineArn: localStateMachineArn('commit-generation'),
      on: ['FAILED', 'TIMED_OUT'],
    },
    detail: {
      executionArn: `arn:aws:states:local:000000000000:execution:commit-generation:${name}`,
      name,
      status: 'FAILED',
      input: JSON.stringify(input),
      inputDetails: { included: true },
      error: 'Cutpoint.WorkerCrashed',
    },
  };
}

const notAString = fc.constantFrom<unknown>(undefined, null, '', 1, true, [], {});
const notAStatus = fc.constantFrom<unknown>(
  undefined,
  null,
  '',
  'RUNNING',
  'PENDING_REDRIVE',
  'failed',
  'Failed',
  ' FAILED',
  1,
  ['FAILED'],
);
// eslint-disable-next-line no-control-regex
const NOT_IN_A_NAME = /[\s/#%\\"$`;\u0000-\u001f\u007f-\u009f]/;
const badName = fc.oneof(
  fc.integer({ min: 81, max: 300 }).map((n) => 'n'.repeat(n)),
  spliced(fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,30}$/)).filter((s) => NOT_IN_A_NAME.test(s)),
  fc.constantFrom('a:b', 'a*b', 'a?b', '[x]', '{x}', 'a|b', 'a~b', 'a,b', 'a&b', 'a<b', 'a^b'),
);

/** One defect applied to a fresh valid request. */
export const dispatchCases: fc.Arbitrary<DispatchCase> = freshSuffix.chain((sfx) => {
  const name = `fz-${sfx}`;
  const base = validRequest(name);
  const detail = base.detail as Rec;
  const recovery = base.recovery as Rec;
  const with_ = (what: string, patch: Rec): DispatchCase => ({ what, event: { ...base, ...patch } });
  const withDetail = (what: string, patch: Rec): DispatchCase => with_(what, { detail: { ...detail, ...patch } });
  const withRecovery = (what: string, patch: Rec): DispatchCase => with_(what, { recovery: { ...recovery, ...patch } });
  return fc.oneof(
    fc.constantFrom<unknown>(null, undefined, 'event', 1, [], [base], true).map((event): DispatchCase => ({
      what: `not an object: ${JSON.stringify(event) ?? 'undefined'}`.slice(0, 60),
      event,
    })),
    notAString.map((v) => with_(`flow ${JSON.stringify(v)}`, { flow: v })),
    fc
      .constantFrom<unknown>(undefined, null, 'Cutpoint.WorkerCrashed', {}, [1], [''], [null])
      .map((v) => with_(`designedStops ${JSON.stringify(v)}`, { designedStops: v })),
    fc
      .constantFrom<unknown>(undefined, null, 'detail', [])
      .map((v) => with_(`detail ${JSON.stringify(v)}`, { detail: v })),
    fc
      .tuple(fc.constantFrom('executionArn', 'name'), notAString)
      .map(([k, v]) => withDetail(`detail.${k} ${JSON.stringify(v)}`, { [k]: v })),
    notAStatus.map((v) => withDetail(`detail.status ${JSON.stringify(v)}`, { status: v })),
    fc
      .constantFrom<unknown>(1, true, {}, ['{}'])
      .map((v) => withDetail(`detail.input ${JSON.stringify(v)}`, { input: v })),
    badName.map((n) =>
      withDetail(`detail.name not an execution name: ${JSON.stringify(n).slice(0, 40)}`, {
        name: n,
        executionArn: `arn:aws:states:local:000000000000:execution:commit-generation:${n}`,
      }),
    ),
    fc
      .constantFrom(
        'x',
        `arn:aws:states:local:000000000000:execution:commit-generation:${name}-other`,
        `arn:aws:states:local:000000000000:stateMachine:commit-generation`,
        `arn:aws:lambda:local:000000000000:execution:commit-generation:${name}`,
        `arn:aws:states:local:0:execution:commit-generation:${name}`,
        `arn:aws:states:local:000000000000:execution::${name}`,
        `${name}`,
      )
      .map((a) => withDetail(`detail.executionArn not this execution's: ${a.slice(0, 50)}`, { executionArn: a })),
    fc.constantFrom<unknown>('x', 1, [], true).map((v) => with_(`recovery ${JSON.stringify(v)}`, { recovery: v })),
    fc
      .tuple(fc.constantFrom('by', 'stateMachineArn'), notAString)
      .map(([k, v]) => withRecovery(`recovery.${k} ${JSON.stringify(v)}`, { [k]: v })),
    fc
      .constantFrom<unknown>(undefined, null, 'FAILED', ['SUCCEEDED'], ['RUNNING'], ['failed'], ['FAILED', 1])
      .map((v) => withRecovery(`recovery.on ${JSON.stringify(v)}`, { on: v })),
  );
});
