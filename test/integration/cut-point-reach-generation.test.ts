import { recordingNotifier } from '../support/recording-notifier.js';
import { describe, expect, it } from 'vitest';
import { FaultSwitch, faultsFromEnv } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import { firedOf } from '../../src/cli/fault-report.js';
import type { SourceRef } from '../../src/domain/generation.js';
import { loadAsl } from '../../src/local/asl.js';
import { designedStopErrors } from '../../src/recovery/designed-stops.js';
import { dispatchRecovery } from '../../src/recovery/dispatch.js';
import { useCliRuntime, type CliRun } from '../support/cli-runtime.js';
import {
  expectReach,
  isStreamPlace,
  LOG_SUBSYSTEMS,
  placesInLane,
  placesOfSubsystems,
  type ReachScenario,
} from '../support/cut-point-reach.js';
import { LocalFlowExecutions, localStateMachineArn } from '../support/local-executions.js';

/**
 * Every generation, objects and recovery cut point `cutpoint faults list` names for a
 * place outside the stream commands fires when armed through it (test/support/cut-point-reach.ts):
 * the generation-commit flow by `flow run` over sources an operator stored with `object
 * put`, `demo generation` (its own throw-away runtime), `object put`, and the recovery
 * dispatcher's handler, which is no command: it is run as Lambda runs it, on a status
 * event of a failed execution, with the injector CUTPOINT_FAULTS arms (what fired is read
 * from that injector). The stream places that cross generation cut points are in
 * cut-point-reach-stream.test.ts.
 */

const { runtime, cli } = useCliRuntime('reach-generation');
let objects = 0;
let tasks = 0;

/** Bytes an operator stored with `object put`: the source reference a flow input takes. */
async function stored(text: string): Promise<SourceRef> {
  const r = await cli(['object', 'put', `reach/source-${++objects}`], '', text);
  expect(r.code, r.stderr).toBe(0);
  const { key, sha256, size } = JSON.parse(r.stdout) as SourceRef;
  return { key, sha256, size };
}

/** The generation-commit flow's input: a task of its own over `sources`. */
function generationInput(sources: SourceRef[]): {
  root: string;
  generation: number;
  taskId: string;
  sources: SourceRef[];
} {
  const n = ++tasks;
  return { root: `reach/g${n}`, generation: 0, taskId: `task-${n}`, sources };
}

const commitGeneration = (sources: SourceRef[], faults: string): Promise<CliRun> =>
  cli(['flow', 'run', 'commit-generation', '--input', JSON.stringify(generationInput(sources))], faults);

const generationScenarios: ReachScenario[] = [
  {
    name: 'two sources concatenated into one generation',
    run: async (faults) => commitGeneration([await stored('a\n'), await stored('b\n')], faults),
  },
  { name: 'one source copied server-side', run: async (faults) => commitGeneration([await stored('c\n')], faults) },
  {
    name: 'a source whose bytes are not its reference (the output does not verify: aborted)',
    async run(faults) {
      const source = await stored('d\n');
      return commitGeneration([{ ...source, sha256: (await stored('other\n')).sha256 }], faults);
    },
  },
];

/**
 * The recovery dispatcher on the status event of a commit-generation execution that failed
 * for real (its object copy crashed on every try), with the handler's injector armed from
 * CUTPOINT_FAULTS; the recovery it starts runs on the local runner.
 */
const dispatch: ReachScenario = {
  name: 'the status event of a failed commit-generation execution',
  async run(faults) {
    const setup = new FaultSwitch();
    const executions = new LocalFlowExecutions({ ports: awsPorts(runtime().config, setup), retryIntervalMs: 0 });
    const name = `reach-${++tasks}`;
    setup.arm('generation.object.copy:crash-before*');
    const failed = await executions.run('commit-generation', name, generationInput([await stored('e\n')]));
    setup.disarm();
    expect(failed.status).toBe('FAILED');
    const injector = faultsFromEnv({ CUTPOINT_FAULTS: faults });
    const target = {
      flow: 'commit-generation',
      designedStops: designedStopErrors(loadAsl('commit-generation')),
      recovery: {
        by: 'commit-generation',
        stateMachineArn: localStateMachineArn('commit-generation'),
        on: ['FAILED', 'TIMED_OUT'],
      },
      detail: {
        executionArn: failed.executionArn,
        name,
        status: 'FAILED',
        input: failed.input,
        inputDetails: { included: true },
        error: failed.error,
      },
    };
    const result = await dispatchRecovery(target, {
      executions,
      metrics: { count: () => undefined },
      notifier: recordingNotifier(),
      faults: injector,
    });
    expect(result.recovery).toMatchObject({ action: 'started' });
    await executions.settled();
    return { stderr: '', alsoFired: firedOf(injector).map((f) => f.cutPoint) };
  },
};

/** Each place and its scenarios (built when the test runs). */
const PLACES: Record<string, () => ReachScenario[]> = {
  'flow commit-generation': () => generationScenarios,
  'demo generation': () => [
    { name: 'the demo (its own runtime, two fixed sources)', run: (faults) => cli(['demo', 'generation'], faults) },
  ],
  'object put': () => [
    {
      name: 'new bytes under a new key',
      run: (faults) => cli(['object', 'put', `reach/put-${++objects}`], faults, 'bytes'),
    },
  ],
  'functions/recovery/dispatch.ts': () => [dispatch],
};

describe('every generation, objects and recovery cut point fires where faults list says', () => {
  it('covers every place of those subsystems outside the stream commands', () => {
    expect(Object.keys(PLACES).sort()).toEqual(placesOfSubsystems(LOG_SUBSYSTEMS).filter((p) => !isStreamPlace(p)));
  });

  for (const [place, scenarios] of placesInLane(PLACES)) {
    it(place, async () => expectReach(place, scenarios()), 300_000);
  }
});
