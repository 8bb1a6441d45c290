import { begin, beginInputFirst, type BeginInput } from '../../src/delivery/steps/begin.js';
import { executionInputFirst } from '../../src/engine/flow-input.js';
import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { refusingOtherRoutes } from '../../src/publication/flow-route.js';
import { deliveryStep, lambdaSourceDeps } from '../lib/delivery-deps.js';

/**
 * The execution input is checked against the flow's fields first (executionInputFirst,
 * docs/deploy.md "Flow inputs"); begin validates its input itself (Cutpoint.ValidationError on a
 * malformed one), before the deps provider parses the manifest or reads a secret, and
 * checks the source read-only before custody. Shared by deliver-window and publish-clickhouse: a route of the
 * other flow's kind is refused first (src/publication/flow-route.ts).
 */
export const makeHandler = deliveryStep(
  flowStep(refusingOtherRoutes((input, d) => begin(input as BeginInput, d))),
  (deps) => executionInputFirst(beginInputFirst(deps)),
);
export const handler = makeHandler({ delivery: lambdaSourceDeps });
