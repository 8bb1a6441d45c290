import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeHandler as makeRegister } from '../../functions/generation/register-task.js';
import { makeHandler as makeWrite } from '../../functions/generation/write-object.js';
import { observedFaults } from '../../functions/lib/telemetry-invocation.js';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import { GENERATION_CUT_POINTS } from '../../src/generation/cut-points.js';
import type { Ports } from '../../src/ports/index.js';
import { STEP_NAME_ENV } from '../../src/telemetry/metric-names.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { newGenerationCase } from '../support/generation-fixture.js';
import { captureOutputLines } from '../support/captured-output.js';

/*
 * The real generation handlers over DynamoDB Local and the S3 emulator, with the ports a
 * deployed Lambda builds (lambda-ports.ts): the adapters' fault-injector port observed. An
 * armed lost response is seen as `unknown` at its cut point, while the use case resolves
 * it by exact identity and the step succeeds.
 */

let stores: TestStores;
let faults: FaultSwitch;
let observed: Ports;
let lines: string[];

beforeAll(async () => {
  stores = await freshStores();
  faults = new FaultSwitch();
  observed = awsPorts(stores.config, observedFaults(faults));
});

beforeEach(() => {
  lines = captureOutputLines();
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  faults.disarm();
});

const json = () => lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
const outcomes = (step: string) =>
  Object.fromEntries(
    json()
      .filter((d) => d._aws !== undefined && d.Step === step && 'CutPointOutcome' in d)
      .map((d) => [d.Outcome, d.CutPointOutcome]),
  );

/** The handler as a deployed Lambda builds it (its environment), over the observed emulator ports. */
function handlerOf(makeHandler: typeof makeRegister, step: string) {
  vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', `cutpoint-${step}`);
  vi.stubEnv(STEP_NAME_ENV, step);
  return makeHandler({ ports: async () => observed });
}

describe('generation handlers in Lambda mode, against the emulators', () => {
  it('count every cut point crossed; a lost response is unknown at its cut point, resolved by the use case', async () => {
    const c = await newGenerationCase(stores.ports, 'telemetry');
    const register = handlerOf(makeRegister, 'GenerationRegisterTask');
    // The flow's first Task: its input nested, the execution input from the context object beside it.
    await register({ flow: 'commit-generation', executionInput: c.input, input: c.input });
    expect(outcomes('GenerationRegisterTask')).toEqual({ applied: 1 });

    faults.arm(`${GENERATION_CUT_POINTS.objectPut}:lose-response`);
    const write = handlerOf(makeWrite, 'GenerationWriteObject');
    await expect(write({ root: c.root, taskId: c.input.taskId })).resolves.toMatchObject({
      objectKey: expect.any(String),
    });
    expect(outcomes('GenerationWriteObject')).toMatchObject({ unknown: 1 });
    const crossed = json().filter((l) => l.message === 'cut point crossed' && l.step === 'GenerationWriteObject');
    expect(crossed).toContainEqual(
      expect.objectContaining({
        level: 'WARN',
        cutPoint: GENERATION_CUT_POINTS.objectPut,
        outcome: 'unknown',
        taskId: c.input.taskId,
      }),
    );
    expect(json().find((l) => l.message === 'step ended' && l.step === 'GenerationWriteObject')).toMatchObject({
      level: 'INFO',
      service: 'cutpoint',
      taskId: c.input.taskId,
    });
  });

  it("refuse an execution input with a field the flow does not read inside the handler's telemetry: logged with its code, counted as a StepError, nothing crossed", async () => {
    const c = await newGenerationCase(stores.ports, 'telemetry-refused');
    const register = handlerOf(makeRegister, 'GenerationRegisterTask');
    await expect(
      register({ flow: 'commit-generation', executionInput: { ...c.input, extra: 1 }, input: c.input }),
    ).rejects.toMatchObject({ name: 'Cutpoint.ValidationError', code: 'flow.input_unknown_field' });
    expect(json().find((l) => l.message === 'step failed' && l.step === 'GenerationRegisterTask')).toMatchObject({
      level: 'ERROR',
      code: 'flow.input_unknown_field',
      taskId: c.input.taskId,
    });
    expect(
      json().find((d) => d._aws !== undefined && d.Step === 'GenerationRegisterTask' && 'StepError' in d),
    ).toMatchObject({ ErrorName: 'Cutpoint.ValidationError', StepError: 1 });
    expect(outcomes('GenerationRegisterTask')).toEqual({});
  });
});
