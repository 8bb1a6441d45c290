import { engine } from '../adapters/local-engines.js';

/**
 * The Step Functions emulator (aws-local-stepfunctions), an engine of the local runtime
 * (src/adapters/local-engines.ts): loaded on a local run's first step, never by `--aws`.
 */
export function stepFunctions() {
  return engine('aws-local-stepfunctions', () => import('aws-local-stepfunctions'));
}
