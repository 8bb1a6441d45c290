import { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { StepEntry } from '../src/registry/index.js';
import { METRIC_NAMESPACE } from '../src/telemetry/metric-names.js';
import { stepNameOf } from '../src/telemetry/step-name.js';

/** The period of every alarm and dashboard graph: counts per five minutes. */
export const PERIOD = Duration.minutes(5);

/** CloudWatch's hard limit of metrics in one alarm's math expression. */
export const ALARM_METRICS_LIMIT = 10;

/** The `Step` dimension of the contract, as the handlers emit it (src/telemetry/step-name.ts). */
export function stepName(step: StepEntry): string {
  return stepNameOf(step.placeholder);
}

/** One contract metric (src/telemetry/metric-names.ts), summed per PERIOD. */
export function cutpointMetric(metricName: string, dimensionsMap: Record<string, string>, label?: string): Metric {
  return new Metric({
    namespace: METRIC_NAMESPACE,
    metricName,
    dimensionsMap,
    statistic: 'Sum',
    period: PERIOD,
    ...(label ? { label } : {}),
  });
}

/**
 * The sum of `metrics` per period. Each term is FILLed with 0: in metric math `a + b` has
 * no value where either has none, and a step that never failed has no data at all.
 * `prefix` keeps the ids of several sums in one graph apart (ids: lowercase start).
 */
export function sumOf(metrics: IMetric[], label: string, prefix = 'm'): IMetric {
  const [only] = metrics;
  if (metrics.length === 1 && only) return only instanceof Metric ? only.with({ label }) : only;
  const ids = metrics.map((_m, i) => `${prefix}${i}`);
  return new MathExpression({
    expression: ids.map((id) => `FILL(${id}, 0)`).join(' + '),
    usingMetrics: Object.fromEntries(ids.map((id, i) => [id, metrics[i]!])),
    label,
    period: PERIOD,
  });
}

/** `items` in consecutive groups of at most `size` (an alarm reads at most ALARM_METRICS_LIMIT metrics). */
export function chunks<T>(items: readonly T[], size = ALARM_METRICS_LIMIT): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
