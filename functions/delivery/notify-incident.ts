import { notifyGovernanceIncident } from '../../src/quality/observe-incident.js';
import { lambdaNotifier } from '../lib/lambda-notifier.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { notifyStep } from '../lib/notify-step.js';

// A delivery incident (INCIDENT_RETAINED) and, for a governed operation, a FAILED or INCOMPLETE governance.
export const makeHandler = notifyStep(notifyGovernanceIncident);
export const handler = makeHandler({ ports: lambdaPorts, notifier: lambdaNotifier });
