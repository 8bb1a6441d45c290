import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler } from '../../functions/recovery/dispatch.js';
import { captureOutputLines } from '../support/captured-output.js';

/*
 * The recovery dispatcher's handler carries the step handlers' telemetry
 * (functions/lib/telemetry.ts: Powertools logger and tracer, redaction) with its own
 * observer (functions/recovery/dispatch-telemetry.ts), in a deployed Lambda's mode; stdout
 * captured as CloudWatch would receive it. The events need no AWS call: one names no
 * recovery, one is malformed.
 */

const SECRET = 'hunter2-Zq9';
let lines: string[];

beforeEach(() => {
  lines = captureOutputLines();
  vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'cutpoint-recovery-dispatch');
  vi.stubEnv('AWS_REGION', 'eu-west-1');
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const logs = () =>
  lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l._aws === undefined && 'message' in l);

describe('the recovery dispatcher in a deployed Lambda', () => {
  it('logs what it did with the Lambda context (Powertools logger), never the event', async () => {
    const event = {
      flow: 'deliver-window',
      designedStops: [],
      detail: {
        executionArn: 'arn:aws:states:eu-west-1:111111111111:execution:deliver-window:daily',
        name: 'daily',
        status: 'FAILED',
        input: JSON.stringify({ password: SECRET }),
        inputDetails: { included: true },
      },
    };
    await expect(handler(event, { awsRequestId: 'req-1', functionName: 'f' })).resolves.toMatchObject({
      flow: 'deliver-window',
      outcome: 'failed',
      recovery: { action: 'none', reason: 'not-declared' },
    });
    expect(logs().find((l) => l.message === 'recovery dispatched')).toMatchObject({
      level: 'INFO',
      service: 'cutpoint',
      step: 'RecoveryDispatch',
      function_request_id: 'req-1',
      flow: 'deliver-window',
      outcome: 'failed',
      recovery: 'none',
      reason: 'not-declared',
    });
    expect(lines.join('\n')).not.toContain(SECRET);
  });

  it('a refused event leaves with its name and code, logged as the dispatch failure', async () => {
    const error = (await handler({ designedStops: [] }, { awsRequestId: 'req-2' }).catch((e: unknown) => e)) as {
      name: string;
      code: string;
    };
    expect(error).toMatchObject({ name: 'Cutpoint.ValidationError', code: 'recovery.event_invalid' });
    expect(logs().find((l) => l.message === 'recovery dispatch failed')).toMatchObject({
      level: 'ERROR',
      step: 'RecoveryDispatch',
      function_request_id: 'req-2',
      errorName: 'Cutpoint.ValidationError',
      code: 'recovery.event_invalid',
    });
  });
});
