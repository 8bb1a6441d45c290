import { notifyIncident } from '../../src/delivery/recovery/incident-notice.js';
import { lambdaNotifier } from '../lib/lambda-notifier.js';
import { lambdaPorts } from '../lib/lambda-ports.js';
import { notifyStep } from '../lib/notify-step.js';

export const makeNotifyHandler = notifyStep(notifyIncident);
export const handler = makeNotifyHandler(lambdaPorts, lambdaNotifier);
