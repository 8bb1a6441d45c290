import type { AslState } from './task.js';

/** One state machine's definition: what the generator prints to statemachines/<name>.asl.json. */
export interface FlowSpec {
  name: string;
  definition: { Comment: string; TimeoutSeconds?: number; StartAt: string; States: Record<string, AslState> };
}

export function flow(name: string, definition: FlowSpec['definition']): FlowSpec {
  return { name, definition };
}
