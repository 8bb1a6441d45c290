// Over ~300 lines (314), kept whole — one subject, one world: its cases share the emulators and fixtures they start (setup is what costs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSnsNotifier } from '../../src/adapters/sns/notifier.js';
import { sha256Hex } from '../../src/domain/digest.js';
import { laneKeys, type LaneHead } from '../../src/domain/stream.js';
import { loadAsl } from '../../src/local/asl.js';
import { designedStopErrors } from '../../src/recovery/designed-stops.js';
import { dispatchRecovery, type DispatchDeps } from '../../src/recovery/dispatch.js';
import type { DispatchTarget, StatusChangeDetail } from '../../src/recovery/dispatch-request.js';
import { recoveryStopsOf } from '../../src/recovery/recovery-stops.js';
import { runbookLinkOf } from '../../src/docs/runbook/ref.js';
import { ESCALATION_RUNBOOK, RECOVERY_FAILURE_NOTICE_KIND } from '../../src/recovery/failure-notice.js';
import { RECOVERY_STOP_NOTICE_KIND } from '../../src/recovery/stop-notice.js';
import { METRICS } from '../../src/telemetry/metric-names.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { LocalFlowExecutions, localStateMachineArn } from '../support/local-executions.js';
import { recordingNotifier } from '../support/recording-notifier.js';
import { subscribedTopic, type SubscribedTopic } from '../support/sns-queue.js';
import { appendFlow, batchOf, newLane, statusOf } from '../support/stream-fixture.js';

/**
 * Issue 28 §3, no recovery ends silently: the recovery dispatcher over the real local runner,
 * DynamoDB Local and S3, and the SNS adapter over the run's fauxqs emulator (the notice is
 * read back from an SQS queue subscribed to the topic). A recovery execution that ends in a
 * designed stop that pages is `recovery-stopped` (the flow's alarm) with a notice on the
 * incident topic; an ordinary execution's designed stop and a benign one stay quiet.
 */
let stores: TestStores;
let topic: SubscribedTopic;
beforeAll(async () => {
  stores = await freshStores();
  topic = await subscribedTopic('recovery-stops');
}, 120_000);
afterAll(() => topic.destroy());

/** The rule's constant input for `flow` (infra/recovery-dispatch.ts builds the same), its recovery re-running itself. */
function targetOf(flow: string): DispatchTarget {
  const definition = loadAsl(flow);
  return {
    flow,
    designedStops: designedStopErrors(definition),
    recovery: { by: flow, stateMachineArn: localStateMachineArn(flow), on: ['FAILED', 'TIMED_OUT'] },
    recoveryStops: recoveryStopsOf(flow, definition)!,
  };
}

function counter() {
  const counts: Array<{ metric: string; dimensions: Record<string, string> }> = [];
  return {
    counts,
    count: (metric: string, dimensions: Record<string, string>) => void counts.push({ metric, dimensions }),
  };
}

const detailOf = (run: { executionArn: string; error?: string }, name: string, input: string): StatusChangeDetail => ({
  executionArn: run.executionArn,
  name,
  status: 'FAILED',
  input,
  inputDetails: { included: true },
  error: run.error,
});
const outcomes = (metrics: ReturnType<typeof counter>) =>
  metrics.counts.filter((c) => c.metric === METRICS.executionOutcome).map((c) => c.dimensions.Outcome);

/** What EventBridge does: every ended execution's event to the dispatcher, once (those in `done` were dispatched already); the names it saw. */
async function dispatchEveryEnd(
  executions: LocalFlowExecutions,
  target: DispatchTarget,
  deps: DispatchDeps,
  done: string[] = [],
): Promise<string[]> {
  const ended = await executions.settled();
  for (const e of ended.filter((x) => !done.includes(x.name))) {
    await dispatchRecovery(
      { ...target, detail: { ...detailOf(e.outcome, e.name, e.input), status: e.outcome.status } },
      deps,
    );
  }
  return ended.map((e) => e.name);
}

describe('a recovery that stops for an operator is alarmed and noticed', () => {
  it('stream-resolve-append ending Stream.Unresolvable: recovery-stopped, a notice naming the lane and `cutpoint stream resolve`; a lost notice fails the run until the retry publishes it; its benign Rejected stays quiet', async () => {
    const executions = new LocalFlowExecutions({ ports: stores.ports, retryIntervalMs: 0 });
    const { lane, session } = await newLane(stores.ports, 'unresolvable');
    expect(statusOf(await appendFlow(stores.ports, lane, session, 'a1', batchOf('a1', 3)))).toBe('KNOWN_COMMITTED');
    // Evidence that contradicts itself: a1's commit record ends past the head, and a1 suspends the lane.
    const head = (await stores.ports.authority.get(laneKeys.head(lane))) as unknown as LaneHead & { version: number };
    expect(
      await stores.ports.authority.update(
        'test.head.rewind',
        laneKeys.head(lane),
        { version: head.version },
        { committedEnd: 0, suspendedBy: 'a1' },
      ),
    ).toMatchObject({ status: 'APPLIED' });
    const input = { ...lane, attemptId: 'a1' };
    const run = await executions.run('stream-resolve-append', 'resolve-a1', input);
    expect(run).toMatchObject({ status: 'FAILED', error: 'Stream.Unresolvable' });
    const target = targetOf('stream-resolve-append');
    const event = { ...target, detail: detailOf(run, 'resolve-a1', run.input) };

    // The topic cannot be reached: the run fails (Lambda retries it), having counted and started nothing.
    const metrics = counter();
    const unreachable = openSnsNotifier({
      topicArn: topic.topicArn.replace(/[^:]+$/, 'cutpoint-missing-topic'),
      client: topic.sns,
    });
    await expect(
      dispatchRecovery(event, { executions, metrics, notifier: unreachable, faults: stores.faults }),
    ).rejects.toMatchObject({ name: 'Cutpoint.EffectFailed' });
    expect(metrics.counts).toEqual([]);
    expect([...executions.executions.values()].map((e) => e.name)).toEqual(['resolve-a1']);

    const notifier = openSnsNotifier({ topicArn: topic.topicArn, client: topic.sns });
    const retried = await dispatchRecovery(event, { executions, metrics, notifier, faults: stores.faults });
    // One stop, one notice: Unresolvable is deterministic (src/recovery/recovery-stops.ts), so no re-run meets the same evidence and pages again.
    expect(retried).toMatchObject({
      outcome: 'recovery-stopped',
      recovery: { action: 'none', reason: 'deterministic-stop' },
    });
    expect(outcomes(metrics)).toEqual(['recovery-stopped']);
    const command = `cutpoint stream resolve ${lane.stream} --partition 0 --attempt a1 --aws`;
    expect(JSON.parse(await topic.receiveOne())).toEqual({
      kind: RECOVERY_STOP_NOTICE_KIND,
      notice_id: `recovery-stopped.${run.executionArn}`,
      flow: 'stream-resolve-append',
      execution: run.executionArn,
      stop: 'Stream.Unresolvable',
      concerns: { lane: `${lane.stream}/0`, attemptId: 'a1' },
      command,
      state: 'MAY_HAVE_COMMITTED',
      runbook: runbookLinkOf('stream', 'MAY_HAVE_COMMITTED'),
    });
    expect(((await stores.ports.authority.get(laneKeys.head(lane))) as unknown as LaneHead).suspendedBy).toBe('a1');
    // Every execution's end reaches the dispatcher (EventBridge): there is no other, and the topic has nothing more.
    expect(
      await dispatchEveryEnd(executions, target, { executions, metrics, notifier, faults: stores.faults }, [
        'resolve-a1',
      ]),
    ).toEqual(['resolve-a1']);
    await topic.expectNoMore();

    // A benign stop of the same flow stays quiet: a resolve Rejected for a lane that does not exist holds nothing.
    const quiet = recordingNotifier();
    const rejected = await executions.run('stream-resolve-append', 'resolve-missing', {
      stream: 'no-such-stream',
      partition: 0,
      attemptId: 'a1',
    });
    expect(rejected).toMatchObject({ status: 'FAILED', error: 'Stream.Rejected' });
    const benign = await dispatchRecovery(
      { ...target, detail: detailOf(rejected, 'resolve-missing', rejected.input) },
      { executions, metrics, notifier: quiet, faults: stores.faults },
    );
    expect(benign.outcome).toBe('designed-stop');
    expect(quiet.notices).toEqual([]);
    await executions.settled();
  }, 120_000);

  it('a recovery that fails unclassified, times out or is aborted: one notice each, naming the error, the redacted cause, what it works on, its inspect command and the escalation', async () => {
    const executions = new LocalFlowExecutions({ ports: stores.ports, retryIntervalMs: 0 });
    const metrics = counter();
    const notifier = openSnsNotifier({ topicArn: topic.topicArn, client: topic.sns });
    const deps = { executions, metrics, notifier, faults: stores.faults };
    const target = targetOf('stream-resolve-append');
    const { lane, session } = await newLane(stores.ports, 'unclassified');
    expect(statusOf(await appendFlow(stores.ports, lane, session, 'c1', batchOf('c1', 2)))).toBe('KNOWN_COMMITTED');
    const input = { ...lane, attemptId: 'c1' };

    // RepairIndex crashes on every try: its retries spent, the execution fails with Cutpoint.WorkerCrashed, which no Fail state of the flow ends with.
    stores.faults.arm('stream.append.index:crash-before*');
    const run = await executions
      .run('stream-resolve-append', 'resolve-crash', input)
      .finally(() => stores.faults.disarm());
    expect(run).toMatchObject({ status: 'FAILED', error: 'Cutpoint.WorkerCrashed' });
    const first = await dispatchRecovery({ ...target, detail: detailOf(run, 'resolve-crash', run.input) }, deps);
    expect(first).toMatchObject({
      outcome: 'failed',
      recovery: { action: 'started', name: 'recover-stream-resolve-append-resolve-crash' },
    });
    const describe = `cutpoint stream describe ${lane.stream} --aws`;
    expect(JSON.parse(await topic.receiveOne())).toEqual({
      kind: RECOVERY_FAILURE_NOTICE_KIND,
      notice_id: `recovery-failed.${run.executionArn}`,
      flow: 'stream-resolve-append',
      execution: run.executionArn,
      classification: 'unclassified',
      status: 'FAILED',
      error: 'Cutpoint.WorkerCrashed',
      cause: expect.stringContaining('stream.append.index') as string,
      concerns: { lane: `${lane.stream}/0`, attemptId: 'c1' },
      rerun: 'recover-stream-resolve-append-resolve-crash',
      command: describe,
      state: 'MAY_HAVE_COMMITTED',
      runbook: { command: describe, page: ESCALATION_RUNBOOK },
    });
    // The automatic re-run (the fault gone) repairs the index and succeeds: counted, never noticed.
    expect(await dispatchEveryEnd(executions, target, deps, ['resolve-crash'])).toEqual([
      'resolve-crash',
      'recover-stream-resolve-append-resolve-crash',
    ]);
    await topic.expectNoMore();

    // Ends the local runner does not produce, as EventBridge reports them (error null; DescribeExecution
    // finds no such execution here, so the notice goes out without a cause rather than not at all).
    const ended = (flow: string, name: string, status: 'TIMED_OUT' | 'ABORTED', body: unknown): StatusChangeDetail => ({
      executionArn: `arn:aws:states:local:000000000000:execution:${flow}:${name}`,
      name,
      status,
      input: JSON.stringify(body),
      inputDetails: { included: true },
      error: null,
    });
    // An operator's resolve that timed out: re-run once (TIMED_OUT is a status its rule recovers), noticed once.
    const slow = ended('stream-resolve-append', 'resolve-slow', 'TIMED_OUT', input);
    expect(await dispatchRecovery({ ...target, detail: slow }, deps)).toMatchObject({
      outcome: 'timed-out',
      recovery: { action: 'started', name: 'recover-stream-resolve-append-resolve-slow' },
    });
    expect(JSON.parse(await topic.receiveOne())).toMatchObject({
      execution: slow.executionArn,
      status: 'TIMED_OUT',
      error: null,
      cause: null,
      concerns: { lane: `${lane.stream}/0`, attemptId: 'c1' },
      rerun: 'recover-stream-resolve-append-resolve-slow',
      command: describe,
    });
    await dispatchEveryEnd(executions, target, deps, ['resolve-crash', 'recover-stream-resolve-append-resolve-crash']);
    await topic.expectNoMore();

    // A delivery-resume stopped by hand (no recovery is declared for it): noticed with the invocation's inspect command; the manifest never reaches the topic.
    const resume = {
      flow: 'delivery-resume',
      designedStops: designedStopErrors(loadAsl('delivery-resume')),
      recoveryStops: recoveryStopsOf('delivery-resume', loadAsl('delivery-resume'))!,
    };
    const invocationId = `inv-${'a'.repeat(26)}`;
    const stopped = ended('delivery-resume', 'resume-by-hand', 'ABORTED', {
      invocationId,
      manifestText: 'password: hunter2',
      selector: 'route.yaml#daily',
      yes: true,
    });
    expect(await dispatchRecovery({ ...resume, detail: stopped }, deps)).toMatchObject({
      outcome: 'aborted',
      recovery: { action: 'none', reason: 'not-declared' },
    });
    const text = await topic.receiveOne();
    expect(text).not.toContain('hunter2');
    expect(JSON.parse(text)).toMatchObject({
      flow: 'delivery-resume',
      status: 'ABORTED',
      concerns: { invocationId },
      command: `cutpoint delivery inspect ${invocationId} --format json --aws`,
      state: null,
      runbook: { command: `cutpoint delivery inspect ${invocationId} --format json --aws`, page: ESCALATION_RUNBOOK },
    });
    await topic.expectNoMore();
    expect(outcomes(metrics)).toEqual(['failed', 'succeeded', 'timed-out', 'succeeded', 'aborted']);
  }, 120_000);

  it('commit-generation: an ordinary Generation.Undecided goes to its recovery quietly; the recovery ending Undecided pages with the task and the re-run of the original input', async () => {
    const executions = new LocalFlowExecutions({ ports: stores.ports, retryIntervalMs: 0 });
    const metrics = counter();
    const notifier = recordingNotifier();
    const bytes = new TextEncoder().encode('undecided\n');
    const sha256 = sha256Hex(bytes);
    await stores.ports.objects.put('test.source.put', 'sources/undecided', bytes, { sha256 });
    const input = {
      root: 'demo/undecided',
      generation: 0,
      taskId: 'task-undecided',
      sources: [{ key: 'sources/undecided', sha256, size: bytes.byteLength }],
    };
    const target = targetOf('commit-generation');
    // Every commit request is lost before it applies: the flow stops Undecided, and so does its recovery.
    stores.faults.arm('generation.commit.cas:lose-request*');
    try {
      const run = await executions.run('commit-generation', 'undecided', input);
      expect(run).toMatchObject({ status: 'FAILED', error: 'Generation.Undecided' });
      const first = await dispatchRecovery(
        { ...target, detail: detailOf(run, 'undecided', run.input) },
        { executions, metrics, notifier, faults: stores.faults },
      );
      expect(first).toMatchObject({ outcome: 'designed-stop', recovery: { action: 'started' } });
      expect(notifier.notices).toEqual([]);

      const recovery = (await executions.settled()).find((e) => e.name === 'recover-commit-generation-undecided')!;
      expect(recovery.outcome).toMatchObject({ status: 'FAILED', error: 'Generation.Undecided' });
      const second = await dispatchRecovery(
        { ...target, detail: detailOf(recovery.outcome, recovery.name, recovery.input) },
        { executions, metrics, notifier, faults: stores.faults },
      );
      expect(second.outcome).toBe('recovery-stopped');
      expect(outcomes(metrics)).toEqual(['designed-stop', 'recovery-stopped']);
      expect(notifier.notices).toHaveLength(1);
      const { message } = notifier.notices[0]!;
      expect(message).toMatchObject({
        flow: 'commit-generation',
        execution: recovery.outcome.executionArn,
        recovery_of: run.executionArn,
        stop: 'Generation.Undecided',
        concerns: { taskId: 'task-undecided', generation: 0 },
      });
      expect(message.command).toBe(
        `aws stepfunctions describe-execution --execution-arn ${run.executionArn} --query input --output text > commit-generation.json && cutpoint flow run commit-generation --input @commit-generation.json --aws --name <a new execution name>`,
      );
    } finally {
      stores.faults.disarm();
    }
  }, 120_000);
});
