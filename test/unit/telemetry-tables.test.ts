import { describe, expect, it } from 'vitest';
import { STEPS } from '../../src/registry/index.js';
import { redact } from '../../src/domain/redact.js';
import {
  CutpointError,
  EffectFailedError,
  OutcomeUnknownError,
  ValidationError,
  WorkerCrashedError,
} from '../../src/domain/errors.js';
import { cutPointOutcomeOf, STABLE_ERROR_NAME, stepFailureOf } from '../../src/telemetry/classify.js';
import { invocationKeysOf } from '../../src/telemetry/log-keys.js';
import { RECOVERY_OUTCOMES } from '../../src/telemetry/metric-names.js';
import {
  RECOVERY_OUTCOME_TABLE,
  RECOVERY_STEP_FLOWS,
  recoveryOutcomeOf,
} from '../../src/telemetry/recovery-outcomes.js';
import { stepNameOf } from '../../src/telemetry/step-name.js';
import { VOLUME_STEP_FLOWS, volumeOf } from '../../src/telemetry/volumes.js';

describe('cut point outcomes (what FaultInjector.at saw)', () => {
  it('classifies the injector errors and raw driver errors', () => {
    expect(cutPointOutcomeOf()).toBe('applied');
    expect(cutPointOutcomeOf(new OutcomeUnknownError('x.y', 'lost'))).toBe('unknown');
    expect(cutPointOutcomeOf(new WorkerCrashedError('x.y', 'after'))).toBe('crashed');
    expect(cutPointOutcomeOf(new EffectFailedError('x.y', 'no'))).toBe('failed');
    expect(cutPointOutcomeOf(new ValidationError('x.bad', 'bad'))).toBe('failed');
    expect(cutPointOutcomeOf(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toBe('unknown');
    expect(cutPointOutcomeOf(Object.assign(new Error('slow'), { name: 'TimeoutError' }))).toBe('unknown');
    expect(
      cutPointOutcomeOf(
        Object.assign(new Error('5xx'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } }),
      ),
    ).toBe('unknown');
    expect(
      cutPointOutcomeOf(
        Object.assign(new Error('denied'), { name: 'AccessDeniedException', $metadata: { httpStatusCode: 403 } }),
      ),
    ).toBe('failed');
  });
});

describe('step failures: StepError with a stable name, UnexpectedError otherwise', () => {
  it('names designed errors and leaves the rest unexpected', () => {
    expect(stepFailureOf(new OutcomeUnknownError('x.y', 'lost'))).toEqual({
      metric: 'StepError',
      errorName: 'Cutpoint.OutcomeUnknown',
    });
    expect(stepFailureOf(new CutpointError('Delivery.NeedsRecovery', 'delivery.needs_recovery', 'stop'))).toEqual({
      metric: 'StepError',
      errorName: 'Delivery.NeedsRecovery',
    });
    expect(stepFailureOf(Object.assign(new Error('x'), { name: 'Stream.LaneMissing' }))).toEqual({
      metric: 'StepError',
      errorName: 'Stream.LaneMissing',
    });
    expect(stepFailureOf(new TypeError('undefined is not a function'))).toEqual({ metric: 'UnexpectedError' });
    expect(stepFailureOf(new Error('boom'))).toEqual({ metric: 'UnexpectedError' });
    expect(stepFailureOf(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }))).toEqual({
      metric: 'UnexpectedError',
    });
    expect(stepFailureOf('a string')).toEqual({ metric: 'UnexpectedError' });
  });

  it('every error name the registry lists is a stable name (so it counts as StepError, not UnexpectedError)', () => {
    const names = new Set(STEPS.flatMap((s) => s.errors));
    expect(names.size).toBeGreaterThan(10);
    for (const name of names) expect(name).toMatch(STABLE_ERROR_NAME);
  });
});

describe('recovery outcomes (RECOVERY_OUTCOME_TABLE)', () => {
  const answer = (retained: boolean, state: string) => ({
    result: { action: 'reconcile', invocationId: 'i', state, retained, diagnostic_code: 'x.y' },
  });

  it('maps each recovery step end to one closed outcome, first matching row wins', () => {
    expect(recoveryOutcomeOf(answer(false, 'VERIFIED_EOF'))).toBe('resolved');
    expect(recoveryOutcomeOf(answer(false, 'CUSTODY_RELEASED'))).toBe('resolved');
    expect(recoveryOutcomeOf(answer(true, 'INCIDENT_RETAINED'))).toBe('incident-retained');
    expect(recoveryOutcomeOf(answer(true, 'REEXTRACT_REQUIRED'))).toBe('escalated');
    expect(recoveryOutcomeOf({ errorName: 'Quality.TargetPending' })).toBe('target-pending');
    expect(recoveryOutcomeOf({ errorName: 'Delivery.ConfirmationRequired' })).toBe('escalated');
    expect(recoveryOutcomeOf({ errorName: 'Delivery.ActionNotPermitted' })).toBe('escalated');
    expect(recoveryOutcomeOf({ errorName: 'Delivery.CustodyHeld' })).toBe('escalated');
    expect(recoveryOutcomeOf({ errorName: 'Quality.Failed' })).toBe('escalated');
    expect(recoveryOutcomeOf({ errorName: 'Cutpoint.OutcomeUnknown' })).toBe('failed');
    expect(recoveryOutcomeOf({ errorName: 'Cutpoint.TargetUnavailable' })).toBe('failed');
    expect(recoveryOutcomeOf({ errorName: 'Unexpected' })).toBe('failed');
    expect(recoveryOutcomeOf({ result: { not: 'a recovery answer' } })).toBeUndefined();
  });

  it('covers every recovery outcome and names only registry recovery steps', () => {
    expect(new Set(RECOVERY_OUTCOME_TABLE.map((r) => r.outcome))).toEqual(new Set(RECOVERY_OUTCOMES));
    const placeholders = new Set(STEPS.map((s) => stepNameOf(s.placeholder)));
    for (const step of [...Object.keys(RECOVERY_STEP_FLOWS), ...Object.keys(VOLUME_STEP_FLOWS)])
      expect(placeholders).toContain(step);
  });
});

describe('volumes (RowsDelivered, RecordsAppended)', () => {
  const published = (acted: boolean) => ({
    state: 'PUBLISHED',
    acted,
    known: { invocation: { facts: { parts: { rows: 7, bytes: 700 }, publication: { rows: 7 } } } },
  });

  it('counts the call that published or committed, never a re-run that found its work journaled', () => {
    expect(volumeOf('DeliveryPublish', {}, published(true))).toEqual({
      flow: 'deliver-window',
      count: 7,
      bytes: 700,
      kind: 'delivered',
    });
    expect(volumeOf('DeliveryPublish', {}, published(false))).toBeUndefined();
    expect(volumeOf('DeliveryPublish', {}, { state: 'PUBLICATION_UNKNOWN', acted: true })).toBeUndefined();
    const committed = { status: 'KNOWN_COMMITTED', recordCount: 3, headVersion: 9 };
    expect(volumeOf('StreamCommitHead', { wal: { walSize: 120 } }, committed)).toEqual({
      flow: 'stream-append',
      count: 3,
      bytes: 120,
      kind: 'appended',
    });
    expect(
      volumeOf('StreamCommitHead', { wal: { walSize: 120 } }, { ...committed, headVersion: undefined }),
    ).toBeUndefined();
    expect(volumeOf('WriteWal', {}, committed)).toBeUndefined();
  });
});

describe('log keys: an allowlist of the Task input', () => {
  it('keeps identities, drops the manifest, fences and everything else', () => {
    const keys = invocationKeysOf({
      invocationId: 'inv-1',
      manifestText: 'bindings: { target: { secret_arn: arn:aws:secretsmanager:x } }',
      fence: { owner: 'inv-1', session: 'sess-secret', epoch: 1 },
      execution: { id: 'arn:aws:states:us-east-1:1:execution:f:e', name: 'e' },
      stream: 'orders',
      partition: 3,
      part: { part: 2, start: 'a', end: 'b' },
      retry: 1,
    });
    expect(keys).toEqual({
      invocationId: 'inv-1',
      execution: 'arn:aws:states:us-east-1:1:execution:f:e',
      lane: 'orders/3',
      part: 2,
      retry: 1,
    });
    expect(invocationKeysOf(null)).toEqual({});
    expect(invocationKeysOf({ taskId: 'a\u001b[31m' })).toEqual({ taskId: 'a\\x1b[31m' });
  });

  it("a first Task's nested input and its execution input count too; `execution` only as the Task's own parameter", () => {
    const trim = {
      flow: 'stream-trim',
      executionInput: { stream: 'orders', partition: 3, to: 9, execution: 'forged' },
    };
    expect(invocationKeysOf(trim)).toEqual({ lane: 'orders/3' });
    const register = {
      flow: 'commit-generation',
      executionInput: { recoveryOf: 'arn:x', originalInput: '{}' },
      input: { root: 'r', generation: 2, taskId: 't-1', sources: [] },
    };
    expect(invocationKeysOf(register)).toEqual({ recoveryOf: 'arn:x', taskId: 't-1', generation: 2 });
  });
});

describe('the one redactor', () => {
  it('removes connection strings, secret ARNs, AWS keys, bearer tokens and credential pairs', () => {
    const text = [
      'connect postgres://deliverer:hunter2@db.example:5432/w failed',
      'Server=db.example;User Id=deliverer;Password=hunter2;',
      'secret arn:aws:secretsmanager:us-east-1:123456789012:secret:cutpoint/target-AbCdEf unreadable',
      'key AKIAIOSFODNN7EXAMPLE',
      'Authorization: Bearer eyJhbGciOi.payload.sig',
      '{"password":"hunter2","secret_arn":"arn-like","aws_secret_access_key":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}',
      'fence {"session":"sess-9f8e"}',
    ].join('\n');
    const out = redact(text);
    for (const secret of [
      'hunter2',
      'deliverer',
      'arn:aws:secretsmanager',
      'AKIAIOSFODNN7EXAMPLE',
      'eyJhbGciOi',
      'wJalrXUtnFEMI',
      'sess-9f8e',
      'arn-like',
    ])
      expect(out).not.toContain(secret);
    expect(out).toContain('[redacted-url]');
  });

  it("removes where an endpoint listens: node's connection errors, host:port of an address, localhost, IPv6 or a host name", () => {
    const text = [
      'source describe failed: connect ECONNREFUSED 127.0.0.1:37895',
      'connect ECONNREFUSED ::1:8000',
      'getaddrinfo ENOTFOUND ch.internal',
      'reached localhost:4566, [::1]:8000, 10.0.3.7:9000 and clickhouse.example.com:9440',
    ].join('\n');
    const out = redact(text);
    for (const endpoint of [
      '127.0.0.1',
      '37895',
      '::1',
      'ch.internal',
      'localhost:4566',
      '10.0.3.7',
      'clickhouse.example.com',
    ])
      expect(out).not.toContain(endpoint);
    expect(out).toBe(
      [
        'source describe failed: connect ECONNREFUSED [redacted-endpoint]',
        'connect ECONNREFUSED [redacted-endpoint]',
        'getaddrinfo ENOTFOUND [redacted-endpoint]',
        'reached [redacted-endpoint], [redacted-endpoint], [redacted-endpoint] and [redacted-endpoint]',
      ].join('\n'),
    );
  });

  it('keeps stack frame paths and ordinary text', () => {
    const frame = 'at step (file:///var/task/index.mjs:10:5)';
    expect(redact(frame)).toBe(frame);
    expect(redact('invocation inv-1 stopped in PUBLICATION_UNKNOWN; start reconcile')).toBe(
      'invocation inv-1 stopped in PUBLICATION_UNKNOWN; start reconcile',
    );
    for (const plain of [
      'at step (/app/src/index.ts:12:3)',
      'CUTPOINT_S3_ENDPOINT must be an http:// loopback address',
      'at 12:30:45, lane orders/0, fault rule stream.trim.cas:fail*3',
    ])
      expect(redact(plain)).toBe(plain);
  });
});
