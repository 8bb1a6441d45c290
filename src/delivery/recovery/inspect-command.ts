/**
 * The read-only command an operator runs first for a delivery invocation: its journal
 * state, diagnostic code and the one permitted action (README "Delivery recovery").
 */
export function inspectCommand(invocationId: string, aws = false): string {
  return `cutpoint delivery inspect ${invocationId} --format json${aws ? ' --aws' : ''}`;
}
