import { readdirSync } from 'node:fs';
import { StateMachine } from 'aws-local-stepfunctions';
import { describe, expect, it } from 'vitest';
import { FLOWS, STEPS, stepByPlaceholder } from '../../src/registry/index.js';
import {
  allStates,
  childFlowPlaceholderOf,
  duplicateStateNames,
  flowPlaceholder,
  loadAsl,
  nestedMachines,
  REPO_ROOT,
  taskStates,
  type AslDefinition,
} from '../../src/local/asl.js';
import { checkMap } from '../../src/local/distributed-map-spec.js';
import { fixtureFlow } from '../fixtures/distributed-map-steps.js';
import { flowWorstSeconds } from '../support/asl-budget.js';

const files = readdirSync(`${REPO_ROOT}statemachines`).filter((f) => f.endsWith('.asl.json'));

describe('statemachines/*.asl.json', () => {
  it('every ASL file is a registered flow and every flow has its file', () => {
    expect(files.map((f) => f.replace('.asl.json', '')).sort()).toEqual(FLOWS.map((f) => f.name).sort());
  });

  it('placeholders match the registry one to one (but for the steps a schedule invokes directly, which no flow names)', () => {
    // (A Task that starts another flow names no step: see childFlowPlaceholderOf.)
    const used = new Set(
      FLOWS.flatMap((f) => taskStates(loadAsl(f.name)).flatMap((t) => (t.placeholder ? [t.placeholder] : []))),
    );
    const tasks = STEPS.filter((s) => s.invokedBy === undefined).map((s) => s.placeholder);
    expect([...used].sort()).toEqual(tasks.sort());
    expect(STEPS.filter((s) => s.invokedBy === 'schedule').map((s) => s.placeholder)).toEqual([
      'OperationsSweepRetainedFunctionArn',
    ]);
  });

  describe.each(FLOWS.map((f) => [f.name]))('%s', (flow) => {
    const definition = loadAsl(flow);
    const text = JSON.stringify(definition);

    it('is valid ASL (JSONPath only, as the local runner and AWS both accept)', () => {
      const withArns = JSON.parse(
        text.replace(/\$\{([A-Za-z0-9]+)\}/g, 'arn:aws:lambda:us-east-1:000000000000:function:$1'),
      );
      expect(() => new StateMachine(withArns)).not.toThrow();
      expect(text).not.toMatch(/"QueryLanguage"\s*:\s*"JSONata"/);
    });

    it('holds placeholders, never ARNs (only the S3 service integrations of a Distributed Map reader and writer, and the start of another flow)', () => {
      const integrations = /"arn:aws:states:::(s3:(getObject|putObject)|states:startExecution\.sync:2)"/g;
      expect(text.replace(integrations, '""')).not.toMatch(/arn:aws/);
      for (const { state, placeholder, definition: s } of taskStates(definition)) {
        const child = childFlowPlaceholderOf(s);
        if (child)
          expect(
            FLOWS.map((f) => flowPlaceholder(f.name)),
            `${state} starts no registry flow`,
          ).toContain(child);
        else expect(placeholder, `${state} must use a \${placeholder}`).toBeDefined();
      }
    });

    it('retries or catches every error name each step declares, with no blanket States.ALL retry', () => {
      for (const { state, placeholder, definition: s } of taskStates(definition)) {
        const retried = (s.Retry ?? []).flatMap((r) => r.ErrorEquals);
        const caught = (s.Catch ?? []).flatMap((c) => c.ErrorEquals);
        expect(retried, `${state} retries States.ALL`).not.toContain('States.ALL');
        // A child execution that fails, times out or is stopped surfaces as States.TaskFailed.
        const errors = childFlowPlaceholderOf(s)
          ? ['States.TaskFailed', 'States.Timeout']
          : stepByPlaceholder(placeholder!).errors;
        for (const error of errors) {
          expect([...retried, ...caught], `${state} neither retries nor catches ${error}`).toContain(error);
        }
        expect(s.TimeoutSeconds, `${state} needs a TimeoutSeconds`).toBeGreaterThan(0);
      }
    });

    it('no error name is caught by two catchers of one state, and States.ALL only by the last: the order of catchers carries no meaning', () => {
      for (const machine of machinesOf(definition)) {
        for (const [state, s] of Object.entries(machine.States)) {
          const catchers = s.Catch ?? [];
          const names = catchers.flatMap((c) => c.ErrorEquals);
          expect(names.length, `${state} catches an error name twice`).toBe(new Set(names).size);
          catchers
            .slice(0, -1)
            .forEach((c) =>
              expect(c.ErrorEquals, `${state}: States.ALL before another catcher`).not.toContain('States.ALL'),
            );
        }
      }
    });

    it('every Next and Catch target exists, and every state is reachable (nested machines too)', () => {
      for (const machine of machinesOf(definition)) expect(unreachable(machine)).toEqual([]);
    });

    it('state names are unique across the whole machine, and every Map is one the local runner runs as written', () => {
      expect(duplicateStateNames(definition)).toEqual([]);
      for (const { state, definition: s } of allStates(definition))
        if (s.Type === 'Map') expect(() => checkMap(state, s)).not.toThrow();
    });
  });
});

describe('timeouts', () => {
  it.each(FLOWS.map((f) => [f.name]))(
    '%s: every Task outlasts its Lambda, so a Lambda timeout surfaces as a retried error',
    (flow) => {
      const definition = loadAsl(flow);
      for (const { state, placeholder, definition: s } of taskStates(definition)) {
        const child = childFlowPlaceholderOf(s);
        if (child) {
          // A child flow's own execution timeout (where it sets one) ends it before the Task gives up on it.
          const childFlow = FLOWS.find((f) => flowPlaceholder(f.name) === child)!;
          expect(s.TimeoutSeconds as number, state).toBeGreaterThan(
            (loadAsl(childFlow.name).TimeoutSeconds as number | undefined) ?? 0,
          );
          continue;
        }
        const lambda = stepByPlaceholder(placeholder!).timeoutSeconds;
        expect(s.TimeoutSeconds as number, state).toBeGreaterThan(lambda);
        const retried = (s.Retry ?? []).flatMap((r) => r.ErrorEquals);
        expect(retried, state).toEqual(expect.arrayContaining(['Sandbox.Timedout', 'States.Timeout']));
      }
    },
  );
});

/**
 * AWS's retry guidance for Lambda Tasks ("Handle transient Lambda service exceptions"):
 * the Invoke API's service errors and client timeouts, jittered and capped; throttles get
 * their own counter and a longer budget (up to 242 s of backoff, not ~15 s). Every Lambda
 * Task of a STANDARD flow carries exactly these two retriers, and no other retrier names
 * their errors. The EXPRESS flow (stream-append) names them in each Task's one retrier, so
 * its worst path stays under the 5-minute cap (test/unit/stream-append-flow.test.ts).
 */
const LAMBDA_SERVICE_RETRIER = {
  ErrorEquals: [
    'Lambda.ServiceException',
    'Lambda.AWSLambdaException',
    'Lambda.SdkClientException',
    'Lambda.ClientExecutionTimeoutException',
  ],
  IntervalSeconds: 1,
  MaxAttempts: 3,
  BackoffRate: 2,
  MaxDelaySeconds: 8,
  JitterStrategy: 'FULL',
};
const LAMBDA_THROTTLE_RETRIER = {
  ErrorEquals: ['Lambda.TooManyRequestsException'],
  IntervalSeconds: 2,
  MaxAttempts: 8,
  BackoffRate: 2,
  MaxDelaySeconds: 60,
  JitterStrategy: 'FULL',
};
const LAMBDA_ERRORS = [...LAMBDA_SERVICE_RETRIER.ErrorEquals, ...LAMBDA_THROTTLE_RETRIER.ErrorEquals];

describe('Lambda retries (AWS guidance)', () => {
  it.each(FLOWS.map((f) => [f.name, f.type]))(
    '%s: every Lambda Task retries Lambda service errors and throttles with jittered, capped backoff',
    (flow, type) => {
      const lambdaTasks = taskStates(loadAsl(flow)).filter((t) => t.placeholder !== undefined);
      for (const { state, definition: s } of lambdaTasks) {
        const retriers = s.Retry ?? [];
        if (type === 'EXPRESS') {
          expect(retriers, state).toHaveLength(1);
          expect(retriers[0]!.ErrorEquals, state).toEqual(expect.arrayContaining(LAMBDA_ERRORS));
          expect(retriers[0], state).toMatchObject({
            JitterStrategy: 'FULL',
            BackoffRate: 2,
            MaxDelaySeconds: expect.any(Number),
          });
          continue;
        }
        expect(retriers, state).toContainEqual(LAMBDA_SERVICE_RETRIER);
        expect(retriers, state).toContainEqual(LAMBDA_THROTTLE_RETRIER);
        const others = retriers.filter(
          (r) => r.ErrorEquals !== undefined && !LAMBDA_ERRORS.includes(r.ErrorEquals[0]!),
        );
        expect(
          others.flatMap((r) => r.ErrorEquals).filter((e) => LAMBDA_ERRORS.includes(e)),
          `${state} names a Lambda service error in another retrier`,
        ).toEqual([]);
        expect(retriers.length, state).toBe(others.length + 2);
      }
    },
  );

  it('throttles get a longer budget than the ~15 s of the default backoff', () => {
    let backoff = 0;
    for (let i = 0; i < LAMBDA_THROTTLE_RETRIER.MaxAttempts; i++)
      backoff += Math.min(LAMBDA_THROTTLE_RETRIER.IntervalSeconds * 2 ** i, LAMBDA_THROTTLE_RETRIER.MaxDelaySeconds);
    expect(backoff).toBeGreaterThan(120);
  });
});

describe('execution timeouts', () => {
  it.each(FLOWS.map((f) => [f.name, f.type]))(
    '%s: has an execution TimeoutSeconds above the worst case of its Tasks, derived in its Comment',
    (flow, type) => {
      const definition = loadAsl(flow);
      const timeout = definition.TimeoutSeconds as number | undefined;
      expect(timeout, `${flow} has no execution TimeoutSeconds (TIMED_OUT never fires)`).toBeGreaterThan(0);
      expect(timeout!).toBeGreaterThan(flowWorstSeconds(definition));
      // STANDARD: at most a year; EXPRESS: the 5-minute cap.
      expect(timeout!).toBeLessThanOrEqual(type === 'EXPRESS' ? 300 : 365 * 24 * 3600);
      expect(definition.Comment).toContain('TimeoutSeconds');
    },
  );
});

/** The definition and every state machine nested in it (Map ItemProcessors, Parallel Branches). */
function machinesOf(definition: AslDefinition): AslDefinition[] {
  return [definition, ...Object.values(definition.States).flatMap((s) => nestedMachines(s).flatMap(machinesOf))];
}

/** Targets naming no state of the machine, and states nothing reaches from StartAt. */
function unreachable(machine: AslDefinition): string[] {
  const names = new Set(Object.keys(machine.States));
  const reached = new Set<string>([machine.StartAt]);
  const unknown: string[] = [];
  for (const s of Object.values(machine.States)) {
    const targets = [
      s.Next as string | undefined,
      s.Default as string | undefined,
      ...((s.Choices as Array<{ Next: string }> | undefined) ?? []).map((c) => c.Next),
      ...(s.Catch ?? []).map((c) => c.Next),
    ].filter((t): t is string => typeof t === 'string');
    for (const t of targets) {
      if (names.has(t)) reached.add(t);
      else unknown.push(`unknown target ${t}`);
    }
  }
  return [...unknown, ...[...names].filter((n) => !reached.has(n)).map((n) => `unreachable ${n}`)];
}

describe('taskStates and allStates reach nested machines', () => {
  it('finds the Task inside a Distributed Map ItemProcessor, with its definition', () => {
    const tasks = taskStates(fixtureFlow());
    expect(tasks.map((t) => [t.state, t.placeholder])).toEqual([
      ['ExtractLoadPart', 'TestExtractLoadPartFunctionArn'],
      ['VerifyEof', 'TestVerifyEofFunctionArn'],
    ]);
    expect(tasks[0]!.definition.Retry).toEqual([expect.objectContaining({ ErrorEquals: ['Cutpoint.WorkerCrashed'] })]);
  });

  it('finds Tasks in Parallel Branches and a legacy Map Iterator, and names duplicated across machines', () => {
    const task = (resource: string) => ({ Type: 'Task', Resource: resource, End: true });
    const definition: AslDefinition = {
      StartAt: 'Both',
      States: {
        Both: {
          Type: 'Parallel',
          Branches: [
            { StartAt: 'A', States: { A: task('${APlaceholder}') } },
            {
              StartAt: 'Each',
              States: {
                Each: { Type: 'Map', Iterator: { StartAt: 'B', States: { B: task('${BPlaceholder}') } }, End: true },
              },
            },
          ],
          Next: 'A',
        },
        A: task('${APlaceholder}'),
      },
    };
    expect(taskStates(definition).map((t) => t.state)).toEqual(['A', 'B', 'A']);
    expect(allStates(definition).map((s) => s.state)).toEqual(['Both', 'A', 'Each', 'B', 'A']);
    expect(duplicateStateNames(definition)).toEqual(['A']);
  });

  it('the Distributed Map fixture is valid ASL for the library and its Map one the runner runs', () => {
    const definition = fixtureFlow();
    const withArns = JSON.parse(
      JSON.stringify(definition).replace(/\$\{([A-Za-z0-9]+)\}/g, 'arn:aws:lambda:us-east-1:000000000000:function:$1'),
    );
    expect(() => new StateMachine(withArns)).not.toThrow();
    expect(() => checkMap('ExtractLoadParts', definition.States.ExtractLoadParts!)).not.toThrow();
    for (const machine of machinesOf(definition)) expect(unreachable(machine)).toEqual([]);
  });
});
