import type { Notifier } from '../../src/ports/notifier.js';
import { incidentNotifier } from './incident-topic.js';
import { instrumentClient } from './telemetry.js';

let cached: Promise<Notifier> | undefined;

/** The incident topic's notifier for a step, built once per cold start; an unset topic fails the cold start. */
export function lambdaNotifier(): Promise<Notifier> {
  cached ??= Promise.resolve().then(() => incidentNotifier(process.env, instrumentClient));
  return cached;
}
