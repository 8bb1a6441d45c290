import { readFileSync } from 'node:fs';
import { STEPS, type StepEntry } from '../functions/registry.js';
import { repoPath } from './repo.js';

/** A flow's ASL as written on disk, and the registry steps its placeholders name. */
export interface FlowDefinition {
  /** Repository-relative path of the ASL file. */
  file: string;
  /** The file's text, unchanged: placeholders stay for definitionSubstitutions. */
  body: string;
  /** One registry entry per distinct `${Placeholder}`, in first-use order. */
  steps: StepEntry[];
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
  return { file, body, steps: placeholdersOf(body).map((p) => registryStep(file, p)), distributedMap: /"Mode"\s*:\s*"DISTRIBUTED"/.test(body) };
}

/** Distinct `${Name}` placeholders in ASL text, in first-use order. */
export function placeholdersOf(asl: string): string[] {
  return [...new Set(Array.from(asl.matchAll(PLACEHOLDER), (m) => m[1] ?? ''))];
}

function registryStep(file: string, placeholder: string): StepEntry {
  if (!PLACEHOLDER_NAME.test(placeholder)) throw new Error(`${file} has a malformed placeholder \${${placeholder}}`);
  const step = STEPS.find((s) => s.placeholder === placeholder);
  if (!step) throw new Error(`${file} uses \${${placeholder}}, which has no entry in functions/registry.ts STEPS`);
  return step;
}
