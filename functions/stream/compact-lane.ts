import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { step } from '../lib/step.js';

export const makeHandler = step(compactLane);
export const handler = makeHandler(lambdaPorts);
