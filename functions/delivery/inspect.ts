import { inspectForFlow } from '../../src/delivery/recovery/flow-steps.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

/** Read-only: the recovery projection of one invocation. Opens no database connection. */
export const makeHandler = step(inspectForFlow);
export const handler = makeHandler(lambdaPorts);
