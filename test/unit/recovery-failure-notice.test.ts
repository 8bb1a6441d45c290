import { describe, expect, it } from 'vitest';
import { invocationIdOfExecution } from '../../src/domain/delivery/identifiers.js';
import {
  ESCALATION_RUNBOOK,
  MAX_NOTICE_CAUSE,
  noticeCause,
  RECOVERY_FAILURE_NOTICE_KIND,
  recoveryFailureNotice,
} from '../../src/recovery/failure-notice.js';
import { repoFile, section } from './readme-blocks.js';

const arn = (machine: string, name: string) => `arn:aws:states:eu-west-1:111111111111:execution:${machine}:${name}`;

/** A Lambda error's cause as Step Functions records it: type, message and the stack trace. */
const lambdaCause = (errorType: string, errorMessage: string) =>
  JSON.stringify({
    errorType,
    errorMessage,
    trace: [`${errorType}: ${errorMessage}`, '    at handler (/var/task/index.mjs:10:5)'],
  });

describe('the notice of a recovery that failed unclassified', () => {
  it("a lane: says it is unclassified, names the error and the cause without its trace, the re-run, the lane's describe command and the escalation", () => {
    const input = JSON.stringify({ stream: 'orders', partition: 3, attemptId: 'a-7' });
    const cause = lambdaCause('Cutpoint.WorkerCrashed', 'worker crashed before stream.resolve.fence');
    const notice = recoveryFailureNotice(
      'stream-resolve-append',
      'lane',
      { executionArn: arn('r', 'x'), status: 'FAILED', error: 'Cutpoint.WorkerCrashed' },
      input,
      { cause },
      'recover-stream-resolve-append-x',
    );
    expect(notice.message).toEqual({
      kind: RECOVERY_FAILURE_NOTICE_KIND,
      notice_id: `recovery-failed.${arn('r', 'x')}`,
      flow: 'stream-resolve-append',
      execution: arn('r', 'x'),
      execution_console: `https://eu-west-1.console.aws.amazon.com/states/home?region=eu-west-1#/v2/executions/details/${arn('r', 'x')}`,
      classification: 'unclassified',
      status: 'FAILED',
      error: 'Cutpoint.WorkerCrashed',
      cause: 'Cutpoint.WorkerCrashed: worker crashed before stream.resolve.fence',
      concerns: { lane: 'orders/3', attemptId: 'a-7' },
      rerun: 'recover-stream-resolve-append-x',
      command: 'cutpoint stream describe orders --aws',
      state: 'MAY_HAVE_COMMITTED',
      runbook: { command: 'cutpoint stream describe orders --aws', page: ESCALATION_RUNBOOK },
    });
    expect(notice.subject).toBe(
      'cutpoint: stream-resolve-append failed with Cutpoint.WorkerCrashed, unclassified (orders/3)',
    );
  });

  it('an invocation: nothing secret-like reaches the topic, from the input or the cause', () => {
    const failed = arn('deliver-window', 'nightly');
    const input = JSON.stringify({
      recoveryOf: failed,
      originalInput: JSON.stringify({
        manifestText: 'password: hunter2',
        selector: 'route.yaml#daily',
        session: 'session-0123456789abcdef',
      }),
    });
    const cause = lambdaCause(
      'Error',
      'connect to postgres://loader:hunter2@db.internal:5432/wh failed (password=hunter2; "session": "session-0123456789abcdef"; key AKIAABCDEFGHIJKLMNOP; Bearer abc.def.ghi)',
    );
    const notice = recoveryFailureNotice(
      'delivery-reconcile',
      'invocation',
      { executionArn: arn('rc', 'recover-nightly'), status: 'FAILED', error: 'Error' },
      input,
      { cause },
    );
    const text = JSON.stringify(notice);
    for (const secret of ['hunter2', 'session-0123', 'AKIAABCDEFGHIJKLMNOP', 'abc.def.ghi', 'db.internal', 'loader'])
      expect(text, secret).not.toContain(secret);
    expect(notice.message).toMatchObject({
      recovery_of: failed,
      concerns: { invocationId: invocationIdOfExecution(failed) },
      command: `cutpoint delivery inspect ${invocationIdOfExecution(failed)} --format json --aws`,
    });
    expect(notice.message.cause).toMatch(/^Error: connect to \[redacted-url\] failed \(password=\[redacted\]/);
  });

  it("a task timed out or aborted: no error or cause to name, the execution's own describe command; a long cause is cut", () => {
    const input = JSON.stringify({
      recoveryOf: arn('cg', 'orig'),
      originalInput: JSON.stringify({ root: 'demo/x', generation: 2, taskId: 't-1', sources: [] }),
    });
    const timedOut = recoveryFailureNotice(
      'commit-generation',
      'task',
      { executionArn: arn('cg', 'recover-orig'), status: 'TIMED_OUT', error: undefined },
      input,
      {},
    );
    expect(timedOut.message).toMatchObject({
      status: 'TIMED_OUT',
      error: null,
      cause: null,
      concerns: { taskId: 't-1', generation: 2 },
      recovery_of: arn('cg', 'orig'),
    });
    expect(timedOut.message.command).toBe(
      `aws stepfunctions describe-execution --execution-arn ${arn('cg', 'recover-orig')} --query "[status,output,error,cause]"`,
    );
    expect(timedOut.message).not.toHaveProperty('rerun');
    expect(timedOut.subject).toBe('cutpoint: commit-generation timed out, unclassified (t-1)');
    const aborted = recoveryFailureNotice(
      'delivery-resume',
      'invocation',
      { executionArn: arn('dr', 'x'), status: 'ABORTED', error: undefined },
      '{}',
      { error: 'Operator', cause: 'stopped by hand' },
    );
    expect(aborted.message).toMatchObject({
      status: 'ABORTED',
      error: 'Operator',
      cause: 'stopped by hand',
      concerns: {},
      command: 'cutpoint delivery inspect <invocation-id> --format json --aws',
    });
    expect(noticeCause('x'.repeat(5000))).toHaveLength(MAX_NOTICE_CAUSE + 1);
    const escaped = noticeCause('line one\nline two\u0007')!;
    expect(escaped.includes('\n') || escaped.includes('\u0007'), escaped).toBe(false);
  });

  it('the escalation it points to is a section of the generated runbook', () => {
    const [file = '', anchor = ''] = ESCALATION_RUNBOOK.split('#');
    expect(anchor).toBe('escalation');
    expect(section(repoFile(file), 'Escalation')).toContain('cutpoint.recovery-failed.v1');
  });
});
