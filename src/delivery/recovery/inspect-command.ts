/**
 * The read-only command an operator runs first for a delivery invocation: its journal
 * state, diagnostic code and the one permitted action (docs/delivery.md "Delivery recovery: the five commands and the flows behind them").
 */
export function inspectCommand(invocationId: string, aws = false): string {
  return `cutpoint delivery inspect ${invocationId} --format json${aws ? ' --aws' : ''}`;
}
