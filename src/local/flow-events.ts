/** One event of a local execution's history, as the CLI and the tests read it. */
export interface FlowEvent {
  type: string;
  state?: string;
  error?: string;
  cause?: string;
  /** Map Run events (`MapRunStarted`, `MapRunItemFailed`, `MapRunSucceeded`, `MapRunFailed`): the run's ARN. */
  mapRunArn?: string;
  /** Map Run events: how many items the run has. */
  items?: number;
  /** `MapRunItemFailed`: the failed item's index. */
  item?: number;
}

/** aws-local-stepfunctions' raw event as a FlowEvent. */
export function toFlowEvent(raw: Record<string, unknown>): FlowEvent {
  const state = (raw.state as { name?: string } | undefined)?.name;
  const event: FlowEvent = { type: String(raw.type) };
  if (state) event.state = state;
  const error = (raw.Error ?? raw.error) as string | undefined;
  const cause = (raw.Cause ?? raw.cause) as string | undefined;
  if (error) event.error = String(error);
  if (cause) event.cause = String(cause);
  return event;
}
