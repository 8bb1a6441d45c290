import type { CutpointConfig } from '../config.js';
import { ConfigError } from '../domain/errors.js';
import { readRuntimeEndpoints } from '../local/runtime.js';
import { configForRuntime, localRetryMsFromEnv } from '../local/runtime-config.js';

/** Table and bucket name the persistent local runtime uses (unless its runtime.json names another). */
export const LOCAL_NAME = 'cutpoint-local';

/** Config for the persistent local runtime started by `cutpoint local up`. */
export async function localRuntimeConfig(): Promise<CutpointConfig> {
  // The local runtime's own knobs are checked by every command that uses it, never ignored.
  localRetryMsFromEnv(process.env);
  const endpoints = await readRuntimeEndpoints();
  if (!endpoints) {
    throw new ConfigError('local.runtime_down', 'the local runtime is not running; start it with `cutpoint local up`');
  }
  return configForRuntime(endpoints, endpoints.name ?? LOCAL_NAME);
}
