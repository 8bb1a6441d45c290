import { configFromEnv } from '../../src/config.js';
import { faultsFromEnv } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import type { Ports } from '../../src/ports/index.js';

let cached: Promise<Ports> | undefined;

/**
 * Ports for a deployed Lambda, built once per cold start. Configuration errors (and a
 * fault spec in a Lambda that was not enabled for a game day) fail the cold start.
 */
export function lambdaPorts(): Promise<Ports> {
  cached ??= Promise.resolve().then(() => awsPorts(configFromEnv(process.env), faultsFromEnv(process.env)));
  return cached;
}
