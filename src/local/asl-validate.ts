import type { StateMachineOptions } from 'aws-local-stepfunctions';
import type { AslDefinition } from './asl.js';
import { stepFunctions } from './step-functions.js';

/** Placeholders become syntactically valid ARNs; every Task is overridden anyway. */
export function withLocalArns(definition: AslDefinition): AslDefinition {
  const text = JSON.stringify(definition).replace(
    /\$\{([A-Za-z0-9]+)\}/g,
    (_m, name: string) => `arn:aws:lambda:us-east-1:000000000000:function:local-${name}`,
  );
  return JSON.parse(text) as AslDefinition;
}

/** Definitions (as JSON text) the library has validated: validation costs ~100 ms a run, the run itself less. */
const validated = new Set<string>();

/** The library's own validation, of the ASL as written (before any stand-in replaces a Map), once per definition. */
export async function validateOnce(source: AslDefinition): Promise<void> {
  const withArns = withLocalArns(source);
  const text = JSON.stringify(withArns);
  if (validated.has(text)) return;
  const { StateMachine } = await stepFunctions();
  new StateMachine(withArns as never, { validationOptions: { checkArn: false } } as StateMachineOptions);
  validated.add(text);
}
