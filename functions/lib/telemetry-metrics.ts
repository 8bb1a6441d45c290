import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { stepFailureOf } from '../../src/telemetry/classify.js';
import { DIMENSIONS, METRICS, type CutPointOutcome } from '../../src/telemetry/metric-names.js';
import { RECOVERY_STEP_FLOWS, recoveryOutcomeOf, type RecoveryEnd } from '../../src/telemetry/recovery-outcomes.js';
import { retainedOf } from '../../src/telemetry/retained.js';
import { volumeOf } from '../../src/telemetry/volumes.js';
import type { Invocation } from './telemetry-invocation.js';

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

/**
 * One EMF document per dimension set: Powertools puts every metric of one flush under the
 * same dimensions, and the contract's metrics have different ones ({Step, Outcome},
 * {Step, ErrorName}, {Flow}…), so each group is flushed on its own, at the end of the
 * invocation (after or onError). This replaces Powertools' `logMetrics` middleware, which
 * flushes one dimension set and warns on every invocation that crossed nothing.
 */
function emit(
  metrics: Metrics,
  dimensions: Record<string, string>,
  values: [name: string, unit: Unit, value: number][],
): void {
  for (const [name, value] of Object.entries(dimensions)) metrics.addDimension(name, value);
  for (const [name, unit, value] of values) metrics.addMetric(name, unit, value);
  metrics.publishStoredMetrics();
}

/**
 * Emits the metrics of one ended invocation — CutPointOutcome per outcome crossed,
 * StepError/UnexpectedError, RecoveryOutcome, Rows/BytesDelivered, Records/BytesAppended,
 * RetainedItems —
 * and returns the crossed cut points per outcome for the closing log line.
 */
export function recordEnd(
  metrics: Metrics,
  step: string,
  invocation: Invocation | undefined,
  event: unknown,
  end: { result: unknown } | { error: Error | null | undefined },
): Partial<Record<CutPointOutcome, number>> {
  const cutPoints: Partial<Record<CutPointOutcome, number>> = {};
  for (const [outcome, count] of invocation?.cutPoints ?? []) {
    cutPoints[outcome] = count;
    emit(metrics, { [DIMENSIONS.step]: step, [DIMENSIONS.outcome]: outcome }, [
      [METRICS.cutPointOutcome, MetricUnit.Count, count],
    ]);
  }
  let recoveryEnd: RecoveryEnd;
  if ('error' in end) {
    const failure = stepFailureOf(end.error);
    if (failure.metric === 'StepError')
      emit(metrics, { [DIMENSIONS.step]: step, [DIMENSIONS.errorName]: failure.errorName }, [
        [METRICS.stepError, MetricUnit.Count, 1],
      ]);
    else emit(metrics, { [DIMENSIONS.step]: step }, [[METRICS.unexpectedError, MetricUnit.Count, 1]]);
    recoveryEnd = { errorName: failure.metric === 'StepError' ? failure.errorName : 'Unexpected' };
  } else {
    recoveryEnd = { result: end.result };
    for (const gauge of retainedOf(step, end.result))
      emit(metrics, { [DIMENSIONS.kind]: gauge.kind, [DIMENSIONS.state]: gauge.state }, [
        [METRICS.retainedItems, MetricUnit.Count, gauge.count],
      ]);
    const volume = volumeOf(step, event, end.result);
    if (volume) {
      const [rows, bytes] =
        volume.kind === 'delivered'
          ? [METRICS.rowsDelivered, METRICS.bytesDelivered]
          : [METRICS.recordsAppended, METRICS.bytesAppended];
      emit(metrics, { [DIMENSIONS.flow]: volume.flow }, [
        [rows, MetricUnit.Count, volume.count],
        ...(volume.bytes !== undefined ? [[bytes, MetricUnit.Bytes, volume.bytes] as [string, Unit, number]] : []),
      ]);
    }
  }
  const flow = RECOVERY_STEP_FLOWS[step];
  const outcome = flow === undefined ? undefined : recoveryOutcomeOf(recoveryEnd);
  if (flow !== undefined && outcome !== undefined)
    emit(metrics, { [DIMENSIONS.flow]: flow, [DIMENSIONS.outcome]: outcome }, [
      [METRICS.recoveryOutcome, MetricUnit.Count, 1],
    ]);
  return cutPoints;
}
