import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Repository root, from this file's location (src/local/). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface AslState {
  Type: string;
  Resource?: string;
  Retry?: Array<{ ErrorEquals: string[] }>;
  Catch?: Array<{ ErrorEquals: string[]; Next: string }>;
  [field: string]: unknown;
}

export interface AslDefinition {
  Comment?: string;
  StartAt: string;
  States: Record<string, AslState>;
}

export function aslPath(flow: string): string {
  return `${REPO_ROOT}statemachines/${flow}.asl.json`;
}

export function loadAsl(flow: string): AslDefinition {
  return JSON.parse(readFileSync(aslPath(flow), 'utf8')) as AslDefinition;
}

/** `${Placeholder}` → `Placeholder`, or undefined for a literal resource. */
export function placeholderOf(resource: string | undefined): string | undefined {
  const match = /^\$\{([A-Za-z0-9]+)\}$/.exec(resource ?? '');
  return match?.[1];
}

/** Task states and the registry placeholder each one names. */
export function taskStates(definition: AslDefinition): Array<{ state: string; placeholder: string | undefined }> {
  return Object.entries(definition.States)
    .filter(([, s]) => s.Type === 'Task')
    .map(([state, s]) => ({ state, placeholder: placeholderOf(s.Resource) }));
}
