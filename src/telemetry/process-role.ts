/**
 * Whether this process is the operator's CLI (`cutpoint`, src/cli/main.ts). The CLI runs
 * the same step handlers a Lambda runs (the local flows), and an environment may carry
 * AWS_LAMBDA_FUNCTION_NAME without being a Lambda (CodeBuild, a Lambda-like container):
 * the CLI never starts Lambda telemetry, whose log lines and metrics would reach its
 * stdout ahead of the command's one JSON document (functions/lib/telemetry.ts).
 */
let cli = false;

/** Set by the CLI's main while a command runs (and cleared after it, for a process that runs it in-process). */
export function setCliProcess(on: boolean): void {
  cli = on;
}

export function isCliProcess(): boolean {
  return cli;
}
