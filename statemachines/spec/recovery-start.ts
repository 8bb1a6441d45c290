import type { AslState } from './task.js';

/**
 * The first states of a flow the recovery dispatcher re-runs itself (commit-generation,
 * stream-resolve-append): an execution input `{recoveryOf, originalInput}` is unwrapped to
 * the original input and the flow goes on at `next` as if started with it; a recovery of a
 * recovery goes to RecoveryExhausted (one automatic recovery per original execution), which
 * each flow declares under its own error name.
 */
export function recoveryStart(o: { next: string; comment: string; nestedComment?: string }): Record<string, AslState> {
  return {
    IsRecovery: {
      Type: 'Choice',
      Comment: o.comment,
      Choices: [{ Variable: '$.recoveryOf', IsPresent: true, Next: 'UnwrapRecovery' }],
      Default: o.next,
    },
    UnwrapRecovery: {
      Type: 'Pass',
      Parameters: { 'original.$': 'States.StringToJson($.originalInput)' },
      Next: 'IsNestedRecovery',
    },
    IsNestedRecovery: {
      Type: 'Choice',
      Comment: o.nestedComment,
      Choices: [{ Variable: '$.original.recoveryOf', IsPresent: true, Next: 'RecoveryExhausted' }],
      Default: 'UseOriginalInput',
    },
    UseOriginalInput: { Type: 'Pass', OutputPath: '$.original', Next: o.next },
  };
}
