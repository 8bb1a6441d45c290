import type { AslState } from './task.js';

/** The stream flows' refusal: one stable error name, the caught step error as its cause. */
export const STREAM_REJECTED: AslState = {
  Type: 'Fail',
  Error: 'Stream.Rejected',
  CausePath: '$.failure.Cause',
  Comment:
    'Error is stable for EventBridge and the CLI; the cause carries the caught step error (name and message, never secrets).',
};
