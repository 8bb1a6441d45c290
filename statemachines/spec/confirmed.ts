import type { AslState } from './task.js';

/**
 * A live action's confirmation, before any Task runs: the execution input's `yes` is
 * present, a boolean and true (the CLI's --yes), or the flow ends at ConfirmationRequired
 * having read and written nothing.
 */
export function confirmed(o: { next: string; comment?: string }): AslState {
  const yes = (test: Record<string, boolean>) => ({ Variable: '$.yes', ...test });
  return {
    Type: 'Choice',
    Comment: o.comment,
    Choices: [
      { And: [yes({ IsPresent: true }), yes({ IsBoolean: true }), yes({ BooleanEquals: true })], Next: o.next },
    ],
    Default: 'ConfirmationRequired',
  };
}

/** What an operator's action Task is given: the invocation, its sealed manifest and selector, and the confirmation. */
export const OPERATOR_ACTION = {
  'invocationId.$': '$.invocationId',
  'manifestText.$': '$.manifestText',
  'selector.$': '$.selector',
  'yes.$': '$.yes',
} as const;

/** What a read-only operator Task is given (quality replay and diagnose): the invocation, the manifest and selector; no confirmation. */
export const READ_ONLY_ACTION = {
  'invocationId.$': '$.invocationId',
  'manifestText.$': '$.manifestText',
  'selector.$': '$.selector',
} as const;
