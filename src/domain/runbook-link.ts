/**
 * Where an operator goes for one durable state: its runbook page (docs/runbook/<subsystem>/<STATE>.md,
 * or that path under the stage's runbook base URL) and the one command the page names for
 * it. Built from the runbook tables by src/docs/runbook/ref.ts; every inspect output,
 * notice and alarm names the same pair.
 */
export interface RunbookLink {
  command: string;
  page: string;
}
