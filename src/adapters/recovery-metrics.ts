import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricCounter } from '../ports/executions.js';
import { METRIC_NAMESPACE, SERVICE_NAME } from '../telemetry/metric-names.js';

/**
 * Contract metrics as CloudWatch Embedded Metric Format on stdout, through Powertools
 * Metrics: one EMF document per count, with exactly the given dimensions (Powertools'
 * default `service` dimension is cleared, so the metric is the one alarms name).
 */
export function emfMetricCounter(): MetricCounter {
  return {
    count(metric, dimensions) {
      const metrics = new Metrics({ namespace: METRIC_NAMESPACE, serviceName: SERVICE_NAME });
      metrics.clearDefaultDimensions();
      metrics.addDimensions(dimensions);
      metrics.addMetric(metric, MetricUnit.Count, 1);
      metrics.publishStoredMetrics();
    },
  };
}
