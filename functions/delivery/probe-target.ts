import { probeInputFirst, probeTarget } from '../../src/delivery/recovery/probe-target.js';
import { deliveryStep, lambdaTargetDeps } from '../lib/delivery-deps.js';

/** The automatic reconcile's gate: is the route's target reachable (read-only)? Its input is checked before a secret is read. */
export const makeHandler = deliveryStep(probeTarget, probeInputFirst);
export const handler = makeHandler({ delivery: lambdaTargetDeps });
