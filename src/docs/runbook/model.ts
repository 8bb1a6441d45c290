/**
 * One operator runbook page per durable state (docs/runbook/<subsystem>/<STATE>.md), as
 * data. Each subsystem's builder fills these from the state-to-action table its code
 * enforces (delivery: journal-states.ts; quality: actions.ts and capsule.ts; …); render.ts
 * turns them into Markdown. Nothing here performs I/O.
 */

export type Subsystem = 'delivery' | 'quality' | 'stream' | 'generation';

export interface FlowStart {
  /** A flow of the registry's FLOWS (src/registry/flows.ts). */
  flow: string;
  /** How to build the input file first (a `jq -Rs …` line), if the input is not inline. */
  setup?: string;
  /** `file://recovery.json` or an inline JSON object. */
  input: string;
  executionName: string;
}

export interface PermittedAction {
  /** The action's name as the code lists it (`reconcile`, `observe`, `resolve`, …). */
  name: string;
  /** When it is offered, if not in every case of this state. */
  when?: string;
  /** What it does from here. */
  does: string;
  /** The exact `cutpoint` command. */
  command: string;
  /** The flow that performs it on AWS, started directly. */
  start?: FlowStart;
}

export interface ForbiddenAction {
  name: string;
  why: string;
}

export interface Diagnostic {
  code: string;
  when: string;
}

export interface RunbookPage {
  subsystem: Subsystem;
  /** The state's name exactly as the code and `inspect` print it; also the page's file name. */
  state: string;
  /** One line for the index. */
  summary: string;
  meaning: string;
  /** Does this state hold the target's custody (or the lane) until someone acts? */
  holds?: string;
  /** How the journal, capsule or lane gets here: one line per incoming transition. */
  incoming: string[];
  /** The read-only command that shows this state. */
  inspect: string;
  permitted: PermittedAction[];
  forbidden: ForbiddenAction[];
  diagnostics: Diagnostic[];
  /** Extra Markdown blocks (a generated table, a procedure), in order. */
  extra?: string[];
  /** The code the page is generated from (repository paths). */
  sources: string[];
}

export const SUBSYSTEM_TITLES: Record<Subsystem, string> = {
  delivery: 'Delivery journal',
  quality: 'Quality capsule of a ClickHouse publication',
  stream: 'Stream append attempts',
  generation: 'Object generation records',
};

/** The section of docs/rules.md that states each subsystem's rules (its anchor). */
export const SUBSYSTEM_RULES: Record<Subsystem, string> = {
  delivery: 'delivery-journal-states',
  quality: 'quality-capsule',
  stream: 'append-outcomes',
  generation: 'materialized-generations',
};
