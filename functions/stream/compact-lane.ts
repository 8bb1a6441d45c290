import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { firstStep } from '../lib/step.js';

export const makeHandler = firstStep(compactLane);
export const handler = makeHandler({ ports: lambdaPorts });
