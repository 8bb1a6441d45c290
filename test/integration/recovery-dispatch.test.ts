import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { FAULT_KINDS } from '../../src/domain/faults.js';
import { loadAsl } from '../../src/local/asl.js';
import { designedStopErrors } from '../../src/recovery/designed-stops.js';
import { RECOVERY_CUT_POINTS } from '../../src/recovery/cut-points.js';
import { RECOVERY_FAILURE_NOTICE_KIND } from '../../src/recovery/failure-notice.js';
import { recoveryStopsOf } from '../../src/recovery/recovery-stops.js';
import { dispatchRecovery } from '../../src/recovery/dispatch.js';
import type { DispatchTarget, StatusChangeDetail } from '../../src/recovery/dispatch-request.js';
import { METRICS } from '../../src/telemetry/metric-names.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { LocalFlowExecutions, localStateMachineArn } from '../support/local-executions.js';
import { recordingNotifier } from '../support/recording-notifier.js';

/**
 * The recovery dispatcher against the real local state-machine runner (its FlowExecutions
 * port over runFlow, with Step Functions' name rules) and real DynamoDB Local / S3: a failed
 * commit-generation execution, the status-change event EventBridge delivers for it (once,
 * twice, or with its input cut short), and what the dispatcher starts.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
}, 120_000);

/** The rule's constant input for commit-generation (infra/recovery-dispatch.ts builds the same). */
const target: DispatchTarget = {
  flow: 'commit-generation',
  designedStops: designedStopErrors(loadAsl('commit-generation')),
  recovery: {
    by: 'commit-generation',
    stateMachineArn: localStateMachineArn('commit-generation'),
    on: ['FAILED', 'TIMED_OUT'],
  },
  recoveryStops: recoveryStopsOf('commit-generation', loadAsl('commit-generation')),
};

function counter() {
  const counts: Array<{ metric: string; dimensions: Record<string, string> }> = [];
  return {
    counts,
    count: (metric: string, dimensions: Record<string, string>) => void counts.push({ metric, dimensions }),
  };
}

/** A commit-generation execution that fails for real: its object copy crashes on every try. */
async function failedExecution(executions: LocalFlowExecutions, name: string) {
  const bytes = new TextEncoder().encode(`${name}\n`);
  const sha256 = sha256Hex(bytes);
  await stores.ports.objects.put('test.source.put', `sources/${name}`, bytes, { sha256 });
  const input = {
    root: `demo/${name}`,
    generation: 0,
    taskId: `task-${name}`,
    sources: [{ key: `sources/${name}`, sha256, size: bytes.byteLength }],
  };
  stores.faults.arm('generation.object.copy:crash-before*');
  const run = await executions.run('commit-generation', name, input);
  stores.faults.disarm();
  expect(run).toMatchObject({ status: 'FAILED', error: 'Cutpoint.WorkerCrashed' });
  const detail: StatusChangeDetail = {
    executionArn: run.executionArn,
    name,
    status: 'FAILED',
    input: run.input,
    inputDetails: { included: true },
    error: run.error,
  };
  return { run, detail };
}

describe('recovery dispatcher over the local runner', () => {
  it('a duplicated event starts one recovery, counted once; the recovery finishes the original task', async () => {
    const executions = new LocalFlowExecutions({ ports: stores.ports, retryIntervalMs: 0 });
    const metrics = counter();
    const notifier = recordingNotifier();
    const { run, detail } = await failedExecution(executions, 'dup');

    const [first, second] = await Promise.all([
      dispatchRecovery({ ...target, detail }, { executions, metrics, notifier, faults: stores.faults }),
      dispatchRecovery({ ...target, detail }, { executions, metrics, notifier, faults: stores.faults }),
    ]);
    const third = await dispatchRecovery(
      { ...target, detail },
      { executions, metrics, notifier, faults: stores.faults },
    );

    expect([first.recovery, second.recovery, third.recovery].map((r) => r.action).sort()).toEqual([
      'already-started',
      'already-started',
      'started',
    ]);
    const ended = await executions.settled();
    const recoveries = ended.filter((e) => e.name !== 'dup');
    expect(recoveries.map((e) => e.name)).toEqual(['recover-commit-generation-dup']);
    const recovery = recoveries[0]!;
    expect(Object.keys(JSON.parse(recovery.input) as object)).toEqual(['recoveryOf', 'originalInput']);
    expect(JSON.parse(recovery.input)).toEqual({ recoveryOf: run.executionArn, originalInput: run.input });
    expect(recovery.outcome.output).toMatchObject({ outcome: 'COMMITTED', taskId: 'task-dup' });

    expect(metrics.counts.filter((c) => c.metric === METRICS.recoveryStarted)).toEqual([
      { metric: 'RecoveryStarted', dimensions: { Flow: 'commit-generation' } },
    ]);
    expect(metrics.counts.filter((c) => c.metric === METRICS.executionOutcome).map((c) => c.dimensions)).toEqual(
      Array(3).fill({ Flow: 'commit-generation', Outcome: 'failed' }),
    );
    expect(executions.describeCalls).toEqual([]);
    // An ordinary execution's failure is its recovery's to settle: no notice (the recovery would give one, failing).
    expect(notifier.notices).toEqual([]);
  }, 120_000);

  it('an event whose input was cut short is completed with DescribeExecution, and the recovery gets the full input', async () => {
    const executions = new LocalFlowExecutions({ ports: stores.ports, retryIntervalMs: 0 });
    const metrics = counter();
    const notifier = recordingNotifier();
    const { run, detail } = await failedExecution(executions, 'cut');
    const truncated = {
      ...detail,
      input: detail.input!.slice(0, 20),
      inputDetails: { included: true, truncated: true },
    };

    const result = await dispatchRecovery(
      { ...target, detail: truncated },
      { executions, metrics, notifier, faults: stores.faults },
    );

    expect(result.recovery).toEqual({
      action: 'started',
      flow: 'commit-generation',
      name: 'recover-commit-generation-cut',
    });
    expect(executions.describeCalls).toEqual([run.executionArn]);
    const recovery = (await executions.settled()).find((e) => e.name === 'recover-commit-generation-cut')!;
    expect(JSON.parse(recovery.input)).toEqual({ recoveryOf: run.executionArn, originalInput: run.input });
    expect(recovery.outcome.status).toBe('SUCCEEDED');
  }, 120_000);

  it('a failed recovery starts no recovery of the recovery (its outcome is still counted)', async () => {
    const executions = new LocalFlowExecutions({ ports: stores.ports, retryIntervalMs: 0 });
    const metrics = counter();
    const notifier = recordingNotifier();
    const { detail } = await failedExecution(executions, 'nest');
    stores.faults.arm('generation.object.copy:crash-before*');
    await dispatchRecovery({ ...target, detail }, { executions, metrics, notifier, faults: stores.faults });
    const recovery = (await executions.settled()).find((e) => e.name === 'recover-commit-generation-nest')!;
    stores.faults.disarm();
    expect(recovery.outcome.status).toBe('FAILED');

    const recoveryDetail: StatusChangeDetail = {
      executionArn: recovery.outcome.executionArn,
      name: recovery.name,
      status: 'FAILED',
      input: recovery.input,
      inputDetails: { included: true },
      error: recovery.outcome.error,
    };
    const again = await dispatchRecovery(
      { ...target, detail: recoveryDetail },
      { executions, metrics, notifier, faults: stores.faults },
    );

    expect(again.recovery).toEqual({ action: 'none', reason: 'recovery-of-recovery' });
    expect([...executions.executions.values()].map((e) => e.name).sort()).toEqual([
      'nest',
      'recover-commit-generation-nest',
    ]);
    expect(metrics.counts.filter((c) => c.metric === METRICS.recoveryStarted)).toHaveLength(1);
    expect(metrics.counts.at(-1)).toEqual({
      metric: 'ExecutionOutcome',
      dimensions: { Flow: 'commit-generation', Outcome: 'failed' },
    });
    // A crash is no designed stop: the flow's -failed alarm, and one notice that says it is unclassified (docs/operate.md "Recovery stops").
    expect(notifier.notices.map((n) => n.message)).toEqual([
      expect.objectContaining({
        kind: RECOVERY_FAILURE_NOTICE_KIND,
        execution: recovery.outcome.executionArn,
        recovery_of: detail.executionArn,
        classification: 'unclassified',
        error: 'Cutpoint.WorkerCrashed',
        cause: expect.stringContaining('generation.object.copy') as string,
        concerns: { taskId: 'task-nest', generation: 0 },
        command: `aws stepfunctions describe-execution --execution-arn ${recovery.outcome.executionArn} --query "[status,output,error,cause]"`,
      }),
    ]);
    expect(notifier.notices[0]!.message).not.toHaveProperty('rerun');
  }, 120_000);

  it('statuses the registry does not recover, and flows without recovery, are only counted', async () => {
    const executions = new LocalFlowExecutions({ ports: stores.ports, retryIntervalMs: 0 });
    const metrics = counter();
    const notifier = recordingNotifier();
    const base = {
      executionArn: 'arn:aws:states:local:000000000000:execution:commit-generation:x',
      name: 'x',
      input: '{}',
      inputDetails: { included: true },
    };
    const aborted = await dispatchRecovery(
      { ...target, detail: { ...base, status: 'ABORTED' } },
      { executions, metrics, notifier, faults: stores.faults },
    );
    const rejected = await dispatchRecovery(
      {
        flow: target.flow,
        designedStops: target.designedStops,
        detail: { ...base, status: 'FAILED', error: 'Generation.Rejected' },
      },
      { executions, metrics: counter(), notifier, faults: stores.faults },
    );
    const trim = await dispatchRecovery(
      {
        flow: 'stream-trim',
        designedStops: designedStopErrors(loadAsl('stream-trim')),
        detail: { ...base, status: 'SUCCEEDED' },
      },
      { executions, metrics, notifier, faults: stores.faults },
    );
    expect(aborted).toMatchObject({ outcome: 'aborted', recovery: { action: 'none', reason: 'status-not-recovered' } });
    expect(rejected.outcome).toBe('designed-stop');
    expect(trim).toMatchObject({ outcome: 'succeeded', recovery: { action: 'none', reason: 'not-declared' } });
    expect(executions.executions.size).toBe(0);
    expect(metrics.counts.map((c) => c.dimensions)).toEqual([
      { Flow: 'commit-generation', Outcome: 'aborted' },
      { Flow: 'stream-trim', Outcome: 'succeeded' },
    ]);
  }, 120_000);

  /*
   * The fault matrix of the dispatcher's one cut point: a fault at the start, then what
   * Lambda does with an event whose handler threw (it runs it again), then the invariant —
   * exactly one recovery execution for the failure, and it finishes the original task.
   */
  it.each(FAULT_KINDS.map((kind) => [kind] as const))(
    '%s at recovery.dispatch.start: the retried event leaves exactly one recovery, which commits the task',
    async (kind) => {
      const executions = new LocalFlowExecutions({ ports: stores.ports, retryIntervalMs: 0 });
      const metrics = counter();
      const notifier = recordingNotifier();
      const name = `fault-${kind}`;
      const { detail } = await failedExecution(executions, name);
      const deps = { executions, metrics, notifier, faults: stores.faults };

      stores.faults.arm(`${RECOVERY_CUT_POINTS.start}:${kind}${kind === 'delay' ? '=50' : ''}`);
      let threw: string | undefined;
      try {
        await dispatchRecovery({ ...target, detail }, deps);
      } catch (error) {
        threw = (error as Error).name;
      } finally {
        stores.faults.disarm();
      }
      // Only a delay lets the first attempt finish; every other kind leaves it to Lambda's retry.
      expect(threw === undefined).toBe(kind === 'delay');
      const retried = threw === undefined ? undefined : await dispatchRecovery({ ...target, detail }, deps);
      // The effect applied before the fault (crash-after, lose-response) is found by its name.
      const applied = kind === 'crash-after' || kind === 'lose-response';
      if (retried) expect(retried.recovery).toMatchObject({ action: applied ? 'already-started' : 'started' });

      const recoveries = (await executions.settled()).filter((e) => e.name !== name);
      expect(recoveries.map((e) => e.name)).toEqual([`recover-commit-generation-${name}`]);
      expect(recoveries[0]!.outcome.output).toMatchObject({ outcome: 'COMMITTED', taskId: `task-${name}` });
      // RecoveryStarted counts only a start this dispatcher saw create the execution: at most one.
      expect(metrics.counts.filter((c) => c.metric === METRICS.recoveryStarted).length).toBe(applied ? 0 : 1);
    },
    120_000,
  );
});
