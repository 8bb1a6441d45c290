import { afterEach, describe, expect, it, vi } from 'vitest';
import { emfMetricCounter } from '../../src/adapters/recovery-metrics.js';
import { startOutcomeOf } from '../../src/adapters/stepfunctions-dispatch.js';
import { loadAsl } from '../../src/local/asl.js';
import { designedStopErrors, executionOutcome } from '../../src/recovery/designed-stops.js';
import { isRecoveryInput } from '../../src/recovery/dispatch.js';
import { inputTruncated, parseDispatchRequest } from '../../src/recovery/dispatch-request.js';
import { MAX_EXECUTION_NAME, recoveryExecutionName } from '../../src/recovery/execution-name.js';

/** Step Functions' execution name rule, for names built from valid names: 1-80 of these. */
const VALID_NAME = /^[A-Za-z0-9_.-]{1,80}$/;

describe('recovery execution names', () => {
  it('names the recovery after the failed execution and its flow, deterministically', () => {
    expect(recoveryExecutionName('commit-generation', 'a1b2')).toBe('recover-commit-generation-a1b2');
    expect(recoveryExecutionName('deliver-window', 'daily')).toBe(recoveryExecutionName('deliver-window', 'daily'));
    // One recovering flow (delivery-reconcile) recovers two flows whose executions may share a name.
    expect(recoveryExecutionName('deliver-window', 'daily')).not.toBe(
      recoveryExecutionName('publish-clickhouse', 'daily'),
    );
  });

  it('a UUID-named execution of the longest flow name keeps its whole name', () => {
    const name = recoveryExecutionName('stream-resolve-append', '0f8fad5b-d9cb-469f-a165-70867728950e');
    expect(name).toBe('recover-stream-resolve-append-0f8fad5b-d9cb-469f-a165-70867728950e');
    expect(name.length).toBeLessThanOrEqual(MAX_EXECUTION_NAME);
  });

  it('too long: a prefix and a hash of the full name, 80 characters, distinct for names that differ only at the end', () => {
    const a = recoveryExecutionName('publish-clickhouse', `${'x'.repeat(70)}-a`);
    const b = recoveryExecutionName('publish-clickhouse', `${'x'.repeat(70)}-b`);
    expect(a).toHaveLength(MAX_EXECUTION_NAME);
    expect(b).toHaveLength(MAX_EXECUTION_NAME);
    expect(a).not.toBe(b);
    expect(a.startsWith('recover-publish-clickhouse-xxxx')).toBe(true);
    expect(a).toMatch(VALID_NAME);
    expect(recoveryExecutionName('publish-clickhouse', 'x'.repeat(80))).toHaveLength(MAX_EXECUTION_NAME);
  });
});

describe('designed stops, from the ASL', () => {
  it("every Fail state's Error, and the caught errors a Fail state with ErrorPath passes on", () => {
    expect(designedStopErrors(loadAsl('commit-generation'))).toEqual([
      'Generation.Inconsistent',
      'Generation.RecoveryExhausted',
      'Generation.Rejected',
      'Generation.Undecided',
    ]);
    expect(designedStopErrors(loadAsl('deliver-window'))).toEqual(
      expect.arrayContaining(['Delivery.NeedsRecovery', 'Delivery.CleanupUnproved', 'Delivery.StepRefused']),
    );
    // stream-compact's Refused state passes on the Compact step's caught refusal.
    expect(designedStopErrors(loadAsl('stream-compact'))).toContain('Stream.CompactionNotCommitted');
    // stream-maintain's Refused state passes on its input check's refusal.
    expect(designedStopErrors(loadAsl('stream-maintain'))).toEqual([
      'Cutpoint.ValidationError',
      'Stream.MaintenanceIncomplete',
      'Stream.TooManyLanes',
    ]);
  });

  it('classifies an ended execution: a designed error is a designed stop, any other failure failed', () => {
    const stops = ['Delivery.NeedsRecovery'];
    expect(executionOutcome('FAILED', 'Delivery.NeedsRecovery', stops)).toBe('designed-stop');
    expect(executionOutcome('FAILED', 'States.TaskFailed', stops)).toBe('failed');
    expect(executionOutcome('FAILED', undefined, stops)).toBe('failed');
    expect(executionOutcome('TIMED_OUT', undefined, stops)).toBe('timed-out');
    expect(executionOutcome('ABORTED', undefined, stops)).toBe('aborted');
    expect(executionOutcome('SUCCEEDED', undefined, stops)).toBe('succeeded');
  });

  it('a designed stop of a recovery execution that pages is recovery-stopped; a benign one, or any other failure, is not', () => {
    const stops = ['Stream.Rejected', 'Stream.Unresolvable'];
    const paging = ['Stream.Unresolvable'];
    expect(executionOutcome('FAILED', 'Stream.Unresolvable', stops, paging)).toBe('recovery-stopped');
    expect(executionOutcome('FAILED', 'Stream.Rejected', stops, paging)).toBe('designed-stop');
    expect(executionOutcome('FAILED', 'States.TaskFailed', stops, paging)).toBe('failed');
    // An ordinary execution: the caller passes no paging stops.
    expect(executionOutcome('FAILED', 'Stream.Unresolvable', stops)).toBe('designed-stop');
  });
});

describe('dispatcher input', () => {
  const detail = {
    executionArn: 'arn:aws:states:eu-west-1:111111111111:execution:m:n',
    name: 'n',
    status: 'FAILED',
    input: '{}',
    inputDetails: { included: true },
  };

  it('refuses an event it cannot act on, with a stable code', () => {
    expect(() => parseDispatchRequest({ designedStops: [], detail })).toThrow(
      expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'recovery.event_invalid' }),
    );
    expect(() =>
      parseDispatchRequest({ flow: 'f', designedStops: [], detail: { ...detail, status: 'RUNNING' } }),
    ).toThrow(expect.objectContaining({ code: 'recovery.status_not_terminal' }));
    expect(() =>
      parseDispatchRequest({
        flow: 'f',
        designedStops: [],
        recovery: { by: 'g', stateMachineArn: 'arn', on: ['SUCCEEDED'] },
        detail,
      }),
    ).toThrow(expect.objectContaining({ code: 'recovery.event_invalid' }));
    for (const recoveryStops of [
      { runs: 'sometimes', subject: 'lane', pages: [], deterministic: [] },
      { runs: 'always', subject: 'lake', pages: [], deterministic: [] },
      { runs: 'always', subject: 'lane', pages: [''], deterministic: [] },
      { runs: 'always', subject: 'lane', pages: [] },
      { runs: 'always', subject: 'lane', pages: [], deterministic: 'Stream.Unresolvable' },
      'pages',
    ]) {
      expect(
        () => parseDispatchRequest({ flow: 'f', designedStops: [], recoveryStops, detail }),
        JSON.stringify(recoveryStops),
      ).toThrow(expect.objectContaining({ code: 'recovery.event_invalid' }));
    }
    const stops = {
      runs: 'always',
      subject: 'lane',
      pages: ['Stream.Unresolvable'],
      deterministic: ['Stream.Rejected', 'Stream.Unresolvable'],
    };
    expect(parseDispatchRequest({ flow: 'f', designedStops: [], recoveryStops: stops, detail }).recoveryStops).toEqual(
      stops,
    );
  });

  it('an input that is null, marked truncated or not included is fetched', () => {
    const parsed = parseDispatchRequest({ flow: 'f', designedStops: [], detail });
    expect(inputTruncated(parsed.detail)).toBe(false);
    expect(inputTruncated({ ...parsed.detail, input: null })).toBe(true);
    expect(inputTruncated({ ...parsed.detail, inputDetails: { truncated: true } })).toBe(true);
    expect(inputTruncated({ ...parsed.detail, inputDetails: { included: false } })).toBe(true);
  });

  it('a recovery input is a JSON object with recoveryOf; anything else is an original input', () => {
    expect(isRecoveryInput(JSON.stringify({ recoveryOf: 'arn', originalInput: '{}' }))).toBe(true);
    expect(isRecoveryInput('{"recoveryOf":"arn","originalInput":"{\\"a\\":')).toBe(true);
    expect(isRecoveryInput(JSON.stringify({ root: 'r', note: 'recoveryOf' }))).toBe(false);
    expect(isRecoveryInput('[]')).toBe(false);
  });
});

describe('Step Functions start outcome', () => {
  it('a start date from before the request is a running execution an earlier event started', () => {
    const sent = Date.parse('2026-01-01T00:10:00Z');
    expect(startOutcomeOf(new Date(sent + 40), sent)).toBe('started');
    expect(startOutcomeOf(new Date(sent - 1000), sent)).toBe('started');
    expect(startOutcomeOf(new Date(sent - 60_000), sent)).toBe('already-started');
  });
});

describe('EMF through Powertools', () => {
  afterEach(() => vi.restoreAllMocks());

  it('one document per count, in the Cutpoint namespace, with exactly the contract dimensions', () => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const metrics = emfMetricCounter();
    metrics.count('ExecutionOutcome', { Flow: 'deliver-window', Outcome: 'designed-stop' });
    metrics.count('RecoveryStarted', { Flow: 'deliver-window' });
    vi.restoreAllMocks();
    const docs = lines.map(
      (l) =>
        JSON.parse(l) as Record<string, unknown> & {
          _aws: {
            CloudWatchMetrics: Array<{
              Namespace: string;
              Dimensions: string[][];
              Metrics: Array<{ Name: string; Unit: string }>;
            }>;
          };
        },
    );
    expect(docs).toHaveLength(2);
    expect(docs[0]!._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'Cutpoint',
        Dimensions: [['Flow', 'Outcome']],
        Metrics: [{ Name: 'ExecutionOutcome', Unit: 'Count' }],
      },
    ]);
    expect(docs[0]).toMatchObject({ Flow: 'deliver-window', Outcome: 'designed-stop', ExecutionOutcome: 1 });
    expect(docs[0]).not.toHaveProperty('service');
    expect(docs[1]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['Flow']]);
  });
});
