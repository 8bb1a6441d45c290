import { configFromEnv } from '../../src/config.js';
import { faultsFromEnv } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import type { Ports } from '../../src/ports/index.js';
import { instrumentClient } from './telemetry.js';
import { observedFaults } from './telemetry-invocation.js';

let cached: Promise<Ports> | undefined;

/**
 * Ports for a deployed Lambda, built once per cold start. Configuration errors (and a
 * fault spec in a Lambda that was not enabled for a game day) fail the cold start. The
 * fault-injector port is observed (every cut point crossed is counted and logged) and the
 * SDK clients are traced by X-Ray (telemetry.ts).
 */
export function lambdaPorts(): Promise<Ports> {
  cached ??= Promise.resolve().then(() =>
    awsPorts(configFromEnv(process.env), observedFaults(faultsFromEnv(process.env)), undefined, {
      instrument: instrumentClient,
    }),
  );
  return cached;
}
