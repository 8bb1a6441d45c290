import type { FlowStart } from './model.js';

/**
 * The exact commands the runbook pages print, in the conventions of docs/flows.md: the
 * `cp_out` shell function (one stack output by name) and `$CP_AWS` (the cutpoint CLI's
 * --aws flags), the route manifest at /etc/cutpoint/route.yaml, and shell variables for
 * what the operator copies from `inspect` (`ID`, the invocation id), so every line pastes.
 */

export const MANIFEST_PATH = '/etc/cutpoint/route.yaml';
export const SQL_SELECTOR = `${MANIFEST_PATH}#daily`;
export const EXCHANGE_SELECTOR = `${MANIFEST_PATH}#lake_daily`;
export const INVOCATION = '"$ID"';

/** A cutpoint command in --aws mode. */
export const cutpoint = (args: string): string => `npx cutpoint ${args} $CP_AWS`;

/** The recovery input file every live delivery or quality action's flow takes. */
export function recoveryInput(selector: string): Pick<FlowStart, 'setup' | 'input'> {
  return {
    setup: `jq -Rs --arg id "$ID" '{invocationId: $id, manifestText: ., selector: "${selector}", yes: true}' ${MANIFEST_PATH} > recovery.json`,
    input: 'file://recovery.json',
  };
}
