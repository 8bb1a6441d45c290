/** Engine steps that belong to no subsystem. */
import { stepEntry, type StepEntry } from './step-entry.js';

export const ENGINE_ENTRIES: StepEntry[] = [
  // A flow's execution-input check as a Task of its own: stream-maintain's other Tasks start child flows.
  stepEntry({
    handler: 'engine/check-flow-input',
    needs: 'nothing',
    load: () => import('../../functions/engine/check-flow-input.js'),
    cutPoints: [],
    table: [],
    bucket: [],
    errors: ['Cutpoint.ValidationError'],
    timeoutSeconds: 10,
    memoryMB: 256,
  }),
];
