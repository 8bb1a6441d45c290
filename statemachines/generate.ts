/**
 * Writes statemachines/<flow>.asl.json from each flow's spec (statemachines/flows/): the
 * files CDK and the local runner read. `npm run flows` writes them; `--check` only
 * compares and names the files that differ (the drift test runs the same comparison).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { FLOW_SPECS } from './flows/index.js';
import { printAsl } from './spec/print.js';

const DIR = fileURLToPath(new URL('./', import.meta.url));

export interface GeneratedFlow {
  name: string;
  file: string;
  text: string;
}

export function generatedFlows(): GeneratedFlow[] {
  return FLOW_SPECS.map((spec) => ({
    name: spec.name,
    file: `statemachines/${spec.name}.asl.json`,
    text: printAsl(spec.definition),
  }));
}

/** The generated files whose committed text differs. */
export function driftedFlows(): string[] {
  return generatedFlows()
    .filter((flow) => readFileSync(`${DIR}${flow.name}.asl.json`, 'utf8') !== flow.text)
    .map((flow) => flow.file);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) {
    const drifted = driftedFlows();
    if (drifted.length > 0) {
      process.stderr.write(`out of date with their specs: ${drifted.join(', ')}; run npm run flows\n`);
      process.exit(1);
    }
  } else {
    for (const flow of generatedFlows()) writeFileSync(`${DIR}${flow.name}.asl.json`, flow.text);
    process.stderr.write(`wrote ${FLOW_SPECS.length} flows\n`);
  }
}
