import { ListStackResourcesCommand, type CloudFormationClient } from '@aws-sdk/client-cloudformation';
import {
  GetFunctionConfigurationCommand,
  UpdateFunctionConfigurationCommand,
  waitUntilFunctionUpdatedV2,
  type LambdaClient,
} from '@aws-sdk/client-lambda';
import { CutpointError } from '../../domain/errors.js';
import { FAULTS_IN_LAMBDA_ENV } from '../../domain/faults.js';
import type { ArmableFunction } from '../../gameday/arm-targets.js';
import { STEP_NAME_ENV } from '../../telemetry/metric-names.js';

/**
 * A game day's faults on a deployed stack: CUTPOINT_FAULTS set in (and later removed from)
 * the environment of the stack's Lambda functions. Only a stage deployed with
 * `gamedayFaults` lets a function arm it (FAULTS_IN_LAMBDA_ENV=enabled); any other is
 * refused before one function is changed (`gameday.lambda_faults_disabled`). An update
 * replaces the function's environment as a whole, so the other variables are written back
 * as they were read; it is waited for, so the next invocation runs with it.
 */

const FAULTS_ENV = 'CUTPOINT_FAULTS';
const WAIT_SECONDS = 120;

/** The physical names of the stacks' Lambda functions (ListStackResources, every page). */
export async function stackFunctionNames(
  cloudFormation: CloudFormationClient,
  stacks: readonly string[],
): Promise<string[]> {
  const names: string[] = [];
  for (const stack of stacks) {
    let token: string | undefined;
    do {
      const page = await cloudFormation.send(new ListStackResourcesCommand({ StackName: stack, NextToken: token }));
      for (const r of page.StackResourceSummaries ?? [])
        if (r.ResourceType === 'AWS::Lambda::Function' && r.PhysicalResourceId) names.push(r.PhysicalResourceId);
      token = page.NextToken;
    } while (token);
  }
  return names;
}

/** Only the functions that may arm faults, each with the step it runs (its CUTPOINT_STEP); refused when none may. */
export async function armableFunctions(lambda: LambdaClient, names: readonly string[]): Promise<ArmableFunction[]> {
  const armable: ArmableFunction[] = [];
  for (const name of names) {
    const config = await lambda.send(new GetFunctionConfigurationCommand({ FunctionName: name }));
    const variables = config.Environment?.Variables ?? {};
    if (variables[FAULTS_IN_LAMBDA_ENV] !== 'enabled') continue;
    const step = variables[STEP_NAME_ENV];
    armable.push(step === undefined ? { name } : { name, step });
  }
  if (armable.length === 0)
    throw new CutpointError(
      'Gameday.LambdaFaultsDisabled',
      'gameday.lambda_faults_disabled',
      `none of the stack's ${names.length} functions may arm faults: deploy a game day stage (cutpoint:gamedayFaults true); nothing was changed`,
    );
  return armable;
}

/** Sets (or, with undefined, removes) CUTPOINT_FAULTS on each function, waiting for each update. */
export async function setFunctionFaults(
  lambda: LambdaClient,
  names: readonly string[],
  spec: string | undefined,
): Promise<void> {
  for (const name of names) {
    const config = await lambda.send(new GetFunctionConfigurationCommand({ FunctionName: name }));
    const variables = { ...(config.Environment?.Variables ?? {}) };
    if (spec === undefined) delete variables[FAULTS_ENV];
    else variables[FAULTS_ENV] = spec;
    await lambda.send(
      new UpdateFunctionConfigurationCommand({ FunctionName: name, Environment: { Variables: variables } }),
    );
    await waitUntilFunctionUpdatedV2({ client: lambda, maxWaitTime: WAIT_SECONDS }, { FunctionName: name });
  }
}
