import type { Template } from 'aws-cdk-lib/assertions';

/** An alarm's CloudFormation properties as the infra tests read them, and the metrics it reads. */
export interface AlarmProps {
  AlarmName?: string;
  AlarmDescription?: string;
  AlarmActions?: unknown[];
  OKActions?: unknown[];
  TreatMissingData?: string;
  Namespace?: string;
  MetricName?: string;
  Statistic?: string;
  Period?: number;
  EvaluationPeriods?: number;
  Threshold?: number;
  ComparisonOperator?: string;
  Dimensions?: Array<{ Name: string; Value: unknown }>;
  Metrics?: Array<{
    Id: string;
    Expression?: string;
    MetricStat?: {
      Metric: { Namespace: string; MetricName: string; Dimensions: Array<{ Name: string; Value: unknown }> };
    };
  }>;
}

export function alarmsOf(template: Template): Record<string, AlarmProps> {
  return Object.fromEntries(
    Object.entries(template.findResources('AWS::CloudWatch::Alarm')).map(([id, r]) => [id, r.Properties as AlarmProps]),
  );
}

/** Every metric an alarm reads: its one metric, or each metric of its math expression. */
export function metricsOf(
  alarm: AlarmProps,
): Array<{ Namespace: string; MetricName: string; Dimensions: Record<string, unknown> }> {
  const dims = (d: Array<{ Name: string; Value: unknown }> = []) =>
    Object.fromEntries(d.map(({ Name, Value }) => [Name, Value]));
  if (alarm.MetricName)
    return [{ Namespace: alarm.Namespace!, MetricName: alarm.MetricName, Dimensions: dims(alarm.Dimensions) }];
  return (alarm.Metrics ?? []).flatMap((m) =>
    m.MetricStat ? [{ ...m.MetricStat.Metric, Dimensions: dims(m.MetricStat.Metric.Dimensions) }] : [],
  );
}
