import { loadChunks } from '../../src/delivery/steps/load-chunks.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(loadChunks);
export const handler = makeDeliveryHandler(lambdaTargetDeps);
