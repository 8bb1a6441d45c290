import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deliveryStep } from '../../functions/lib/delivery-deps.js';
import { step } from '../../functions/lib/step.js';
import { observedFaults } from '../../functions/lib/telemetry-invocation.js';
import { inertFaults } from '../../src/adapters/fault-injector.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { CutpointError, OutcomeUnknownError } from '../../src/domain/errors.js';
import type { Ports } from '../../src/ports/index.js';
import { METRIC_NAMESPACE, STEP_NAME_ENV } from '../../src/telemetry/metric-names.js';
import { captureOutputLines } from '../support/captured-output.js';

/*
 * The telemetry layer of the handler skeletons, end to end in-process: the real middy
 * handler, the real Powertools logger/metrics/tracer, the real observed fault-injector
 * port; stdout captured as CloudWatch would receive it. The use cases are stand-ins that
 * return or throw what real ones do (the subject is what the handler emits).
 */

const SECRET = 'hunter2-Zq9';
const noPorts = { ports: async () => ({}) as Ports };
const noDeps = { delivery: async () => ({}) as DeliveryDeps };
let lines: string[];

function lambdaEnv(stepName: string) {
  vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', `cutpoint-${stepName}`);
  vi.stubEnv(STEP_NAME_ENV, stepName);
}

beforeEach(() => {
  lines = captureOutputLines();
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const json = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
const emf = () => json().filter((l) => l._aws !== undefined);
const logs = () => json().filter((l) => l._aws === undefined);
/** The EMF documents of one metric: its dimension names and the values per line. */
function metric(name: string) {
  return emf()
    .filter((doc) => name in doc)
    .map((doc) => {
      const aws = doc._aws as { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][] }> };
      const dims = aws.CloudWatchMetrics[0]!.Dimensions[0]!;
      return {
        namespace: aws.CloudWatchMetrics[0]!.Namespace,
        dims: Object.fromEntries(dims.map((d) => [d, doc[d]])),
        value: doc[name],
      };
    });
}

describe('telemetry in a deployed Lambda', () => {
  it('logs allowlisted keys and emits CutPointOutcome per outcome crossed', async () => {
    lambdaEnv('GenerationWriteObject');
    const faults = observedFaults(inertFaults);
    const handler = step(async () => {
      await faults.at('generation.object.put', async () => 'ok');
      await faults.at('generation.record.put', async () => 'ok');
      await faults
        .at('generation.commit.cas', () => Promise.reject(new OutcomeUnknownError('generation.commit.cas', 'lost')))
        .catch(() => undefined);
      return { outcome: 'COMMITTED' };
    })(noPorts);
    await expect(
      handler(
        { root: 'r', taskId: 'task-1', generation: 0, manifestText: `password: ${SECRET}` },
        { awsRequestId: 'req-1', functionName: 'f' },
      ),
    ).resolves.toEqual({ outcome: 'COMMITTED' });

    expect(metric('CutPointOutcome')).toEqual([
      { namespace: METRIC_NAMESPACE, dims: { Step: 'GenerationWriteObject', Outcome: 'applied' }, value: 2 },
      { namespace: METRIC_NAMESPACE, dims: { Step: 'GenerationWriteObject', Outcome: 'unknown' }, value: 1 },
    ]);
    const ended = logs().find((l) => l.message === 'step ended');
    expect(ended).toMatchObject({
      level: 'INFO',
      service: 'cutpoint',
      step: 'GenerationWriteObject',
      taskId: 'task-1',
      generation: 0,
      function_request_id: 'req-1',
      cutPoints: { applied: 2, unknown: 1 },
    });
    expect(logs().find((l) => l.message === 'cut point crossed')).toMatchObject({
      level: 'WARN',
      cutPoint: 'generation.commit.cas',
      outcome: 'unknown',
      taskId: 'task-1',
    });
    // The event is never dumped.
    expect(lines.join('\n')).not.toContain(SECRET);
    expect(lines.join('\n')).not.toContain('manifestText');
  });

  it('a named error leaves with its name and code, redacted, and counts as StepError', async () => {
    lambdaEnv('DeliveryPublish');
    const cause = new Error(
      `Login failed; Server=db.example;Password=${SECRET}; secret arn:aws:secretsmanager:us-east-1:123456789012:secret:t-Ab`,
    );
    const handler = deliveryStep(async () => {
      throw new CutpointError(
        'Cutpoint.TargetUnavailable',
        'delivery.target_unavailable',
        `cannot reach mssql://deliverer:${SECRET}@db.example/w`,
        { cause },
      );
    })(noDeps);
    const error = (await handler({ invocationId: 'inv-1' }).catch((e: unknown) => e)) as CutpointError;
    expect(error).toBeInstanceOf(CutpointError);
    expect(error.name).toBe('Cutpoint.TargetUnavailable');
    expect(error.code).toBe('delivery.target_unavailable');
    // What Step Functions sees (errorType, errorMessage, trace) and what a log would print.
    for (const text of [
      error.message,
      error.stack ?? '',
      String((error.cause as Error).message),
      String((error.cause as Error).stack),
    ]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('arn:aws:secretsmanager');
    }
    expect(lines.join('\n')).not.toContain(SECRET);
    expect(metric('StepError')).toEqual([
      {
        namespace: METRIC_NAMESPACE,
        dims: { Step: 'DeliveryPublish', ErrorName: 'Cutpoint.TargetUnavailable' },
        value: 1,
      },
    ]);
    expect(logs().find((l) => l.message === 'step failed')).toMatchObject({
      level: 'ERROR',
      errorName: 'Cutpoint.TargetUnavailable',
      code: 'delivery.target_unavailable',
      invocationId: 'inv-1',
    });
  });

  it('an error without a stable name counts as UnexpectedError, redacted too', async () => {
    lambdaEnv('StreamCommitHead');
    const handler = step(async () => {
      throw Object.assign(new Error(`driver said postgres://u:${SECRET}@h/db`), { config: { password: SECRET } });
    })(noPorts);
    const error = (await handler({ stream: 's', partition: 0 }).catch((e: unknown) => e)) as Error & {
      config?: unknown;
    };
    expect(error.message).not.toContain(SECRET);
    expect(error.config).toBeUndefined();
    expect(metric('UnexpectedError')).toEqual([
      { namespace: METRIC_NAMESPACE, dims: { Step: 'StreamCommitHead' }, value: 1 },
    ]);
    expect(metric('StepError')).toEqual([]);
    expect(lines.join('\n')).not.toContain(SECRET);
  });

  it('reads RecoveryOutcome and the delivered/appended volumes from step results', async () => {
    lambdaEnv('DeliveryRecoverReconcile');
    await deliveryStep(async () => ({
      action: 'reconcile',
      invocationId: 'inv-2',
      state: 'INCIDENT_RETAINED',
      retained: true,
      diagnostic_code: 'delivery.x',
    }))(noDeps)({ invocationId: 'inv-2' });
    expect(metric('RecoveryOutcome')).toEqual([
      { namespace: METRIC_NAMESPACE, dims: { Flow: 'delivery-reconcile', Outcome: 'incident-retained' }, value: 1 },
    ]);

    vi.stubEnv(STEP_NAME_ENV, 'DeliveryRecoverRetire');
    await deliveryStep(async () => {
      throw new CutpointError(
        'Delivery.ConfirmationRequired',
        'mssql_native.recovery_confirmation_required',
        'needs yes',
      );
    })(noDeps)({ invocationId: 'inv-3' }).catch(() => undefined);
    expect(metric('RecoveryOutcome').at(-1)).toEqual({
      namespace: METRIC_NAMESPACE,
      dims: { Flow: 'delivery-retire', Outcome: 'escalated' },
      value: 1,
    });

    vi.stubEnv(STEP_NAME_ENV, 'StreamCommitHead');
    await step(async () => ({
      status: 'KNOWN_COMMITTED',
      stream: 's',
      partition: 1,
      recordCount: 4,
      start: 0,
      end: 4,
      headVersion: 2,
    }))(noPorts)({ stream: 's', partition: 1, wal: { walSize: 321 } });
    expect(metric('RecordsAppended')).toEqual([
      { namespace: METRIC_NAMESPACE, dims: { Flow: 'stream-append' }, value: 4 },
    ]);
    expect(metric('BytesAppended')).toEqual([
      { namespace: METRIC_NAMESPACE, dims: { Flow: 'stream-append' }, value: 321 },
    ]);
  });
});

describe('telemetry outside Lambda (local runner, CLI)', () => {
  it('prints nothing (the CLI keeps one JSON document on stdout), and still redacts what leaves', async () => {
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', '');
    const faults = observedFaults(inertFaults);
    const ok = step(async () => faults.at('generation.object.put', async () => 'done'))(noPorts);
    await expect(ok({ taskId: 't' })).resolves.toBe('done');
    const failing = step(async () => {
      throw new CutpointError('Cutpoint.ConfigError', 'delivery.binding_unresolved', `url postgres://u:${SECRET}@h/db`);
    })(noPorts);
    const error = (await failing({}).catch((e: unknown) => e)) as Error;
    expect(error.name).toBe('Cutpoint.ConfigError');
    expect(error.message).not.toContain(SECRET);
    expect(lines).toEqual([]);
  });
});
