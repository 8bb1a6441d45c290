import { findPackageJSON } from 'node:module';
import localRuntime from '../../packages/local/package.json' with { type: 'json' };
import { ConfigError } from '../domain/errors.js';

/**
 * The local runtime's engines (embedded ClickHouse, embedded PostgreSQL and PGlite, the S3
 * and Step Functions emulators) are the dependencies of the workspace package
 * packages/local (`@cutpoint/local`), not of cutpoint itself: a clone's `npm ci` installs
 * them, an installed CLI (production dependencies only) does not, and every `--aws` command
 * runs without them. Local code loads an engine only through `engine()` (a dynamic import),
 * and the local runtime checks them all (`assertLocalEngines`) before it starts anything,
 * so a missing one is `local.runtime_missing` (exit 2, nothing ran) saying how to install
 * it, never a bare ERR_MODULE_NOT_FOUND.
 */
export const LOCAL_ENGINES: Readonly<Record<string, string>> = localRuntime.dependencies;

export const RUNTIME_MISSING = 'local.runtime_missing';

/** `local.runtime_missing`: `missing` (package names) are not installed. */
export function runtimeMissing(missing: readonly string[]): ConfigError {
  const install = Object.entries(LOCAL_ENGINES)
    .map(([name, version]) => `${name}@${version}`)
    .join(' ');
  return new ConfigError(
    RUNTIME_MISSING,
    `the local runtime is not installed (missing: ${missing.join(', ')}); local commands need it, --aws commands ` +
      `do not. In a clone of the repository run \`npm ci\`; beside an installed cutpoint run \`npm install ${install}\``,
  );
}

/** The engines (package names) that cannot be found from here. */
export function missingEngines(names: readonly string[] = Object.keys(LOCAL_ENGINES)): string[] {
  return names.filter((name) => {
    try {
      return findPackageJSON(name, import.meta.url) === undefined;
    } catch {
      return true;
    }
  });
}

/** Throws `local.runtime_missing` unless every engine of the local runtime is installed. */
export function assertLocalEngines(): void {
  const missing = missingEngines();
  if (missing.length) throw runtimeMissing(missing);
}

function moduleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

/**
 * `load()` (a literal `import('<engine>')`, so the bundle keeps it external and lazy), with
 * a missing engine `name` reported as `local.runtime_missing`.
 */
export async function engine<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (!moduleNotFound(error)) throw error;
    const missing = missingEngines();
    throw runtimeMissing(missing.length ? missing : [name]);
  }
}

/** Whether `error` says the local runtime is not installed (the CLI exits 2: nothing ran). */
export function isRuntimeMissing(error: unknown): boolean {
  return error instanceof ConfigError && error.code === RUNTIME_MISSING;
}
