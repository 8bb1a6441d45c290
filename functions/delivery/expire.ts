import { expirePage } from '../../src/delivery/expiry/expire-page.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { firstStep } from '../lib/step.js';

/** delivery-expire's page: finished invocations past retention lose their work objects (chunks, plan, part results). */
export const makeHandler = firstStep(expirePage);
export const handler = makeHandler({ ports: lambdaPorts });
