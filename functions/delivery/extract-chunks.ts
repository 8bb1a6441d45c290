import { extractChunks } from '../../src/delivery/steps/extract-chunks.js';
import { deliveryStep, lambdaSourceDeps } from '../lib/delivery-deps.js';

export const makeDeliveryHandler = deliveryStep(extractChunks);
export const handler = makeDeliveryHandler(lambdaSourceDeps);
