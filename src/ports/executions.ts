/** A start by exact name: `started`, or `already-started` (that name exists: running with the same input, or closed). */
export type StartOutcome = 'started' | 'already-started';

/** Executions of STANDARD flows, by exact name: what the recovery dispatcher needs of Step Functions. */
export interface FlowExecutions {
  /** StartExecution under `name`; a second start of the same name and input starts nothing. */
  start(request: { stateMachineArn: string; name: string; input: string }): Promise<StartOutcome>;
  /** The full input of an execution (DescribeExecution), when an event carried it truncated. */
  inputOf(executionArn: string): Promise<string>;
  /** How an ended execution failed (DescribeExecution's error and cause; either may be absent), for the notice of a recovery that failed unclassified. */
  failureOf(executionArn: string): Promise<ExecutionFailure>;
}

/** An ended execution's error name and cause, as Step Functions recorded them (the cause is not redacted). */
export interface ExecutionFailure {
  error?: string;
  cause?: string;
}

/** Counts one occurrence of a contract metric (src/telemetry/metric-names.ts) with its dimensions. */
export interface MetricCounter {
  count(metric: string, dimensions: Record<string, string>): void;
}
