import { extractLoadPart } from '../../src/delivery/parts/extract-load-part.js';
import { deliveryStep, lambdaSourceDeps } from '../lib/delivery-deps.js';

export const makeHandler = deliveryStep(extractLoadPart);
export const handler = makeHandler({ delivery: lambdaSourceDeps });
