import { begin, type BeginInput } from '../../src/delivery/steps/begin.js';
import { deliveryStep, lambdaSourceDeps } from '../lib/delivery-deps.js';

/** begin validates its input itself (Cutpoint.ValidationError on a malformed one) and checks the source read-only before custody. */
export const makeDeliveryHandler = deliveryStep((input, deps) => begin(input as BeginInput, deps));
export const handler = makeDeliveryHandler(lambdaSourceDeps);
