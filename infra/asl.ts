import { readFileSync } from 'node:fs';
import { FLOWS, STEPS, type StepEntry } from '../src/registry/index.js';
import { flowPlaceholder } from '../src/local/asl.js';
import { repoPath } from './repo.js';

/** A flow's ASL as written on disk, and the registry steps its placeholders name. */
export interface FlowDefinition {
  /** Repository-relative path of the ASL file. */
  file: string;
  /** The file's text, unchanged: placeholders stay for definitionSubstitutions. */
  body: string;
  /** One registry entry per distinct `${Placeholder}`, in first-use order. */
  steps: StepEntry[];
  /** Flows the ASL starts as child executions (`${<Flow>StateMachineArn}`), by name, in first-use order. */
  childFlows: string[];
  /** True when a Map state runs its ItemProcessor in DISTRIBUTED mode (child executions, S3 reader/writer). */
  distributedMap: boolean;
}

const PLACEHOLDER = /\$\{([^}]*)\}/g;
const PLACEHOLDER_NAME = /^[A-Za-z][A-Za-z0-9]*$/;

/**
 * Reads statemachines/<name>.asl.json and resolves every placeholder against the registry.
 * Fails at synth, naming the file, when the ASL is not JSON or uses a placeholder with no
 * registry entry: a state machine that would only fail at its first execution must not
 * deploy.
 */
export function loadFlowDefinition(name: string): FlowDefinition {
  const file = `statemachines/${name}.asl.json`;
  return resolveFlowDefinition(file, readFileSync(repoPath(file), 'utf8'));
}

/** The checks of loadFlowDefinition on text already read (`file` names it in errors). */
export function resolveFlowDefinition(file: string, body: string): FlowDefinition {
  try {
    JSON.parse(body);
  } catch (error) {
    throw new Error(`${file} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const placeholders = placeholdersOf(body);
  const childFlows = placeholders.filter((p) => p.endsWith(FLOW_PLACEHOLDER_SUFFIX)).map((p) => registryFlow(file, p));
  const steps = placeholders.filter((p) => !p.endsWith(FLOW_PLACEHOLDER_SUFFIX)).map((p) => registryStep(file, p));
  return { file, body, steps, childFlows, distributedMap: /"Mode"\s*:\s*"DISTRIBUTED"/.test(body) };
}

/** Distinct `${Name}` placeholders in ASL text, in first-use order. */
export function placeholdersOf(asl: string): string[] {
  return [...new Set(Array.from(asl.matchAll(PLACEHOLDER), (m) => m[1] ?? ''))];
}

/** `${StreamGcStateMachineArn}`: the ARN of another registry flow (a child execution), not a step. */
const FLOW_PLACEHOLDER_SUFFIX = 'StateMachineArn';

function registryFlow(file: string, placeholder: string): string {
  const flow = FLOWS.find((f) => flowPlaceholder(f.name) === placeholder);
  if (!flow) throw new Error(`${file} uses \${${placeholder}}, which names no flow in src/registry/flows.ts FLOWS`);
  return flow.name;
}

function registryStep(file: string, placeholder: string): StepEntry {
  if (!PLACEHOLDER_NAME.test(placeholder)) throw new Error(`${file} has a malformed placeholder \${${placeholder}}`);
  const step = STEPS.find((s) => s.placeholder === placeholder);
  if (!step)
    throw new Error(`${file} uses \${${placeholder}}, which has no entry in the registry's STEPS (src/registry/)`);
  return step;
}
