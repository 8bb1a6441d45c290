import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { processEntry } from '../../src/local/process-entry.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the file a forked process runs (processEntry)', () => {
  it('compiled code forks its sibling in the bundle, whatever the freshness', () => {
    expect(processEntry('file:///opt/app/dist/cli/chunk-AB12.js', 'child', () => true)).toBe(
      '/opt/app/dist/cli/child.js',
    );
    expect(processEntry('file:///opt/app/dist/cli/chunk-AB12.js', 'child', () => false)).toBe(
      '/opt/app/dist/cli/child.js',
    );
  });

  it('TypeScript sources fork the fresh bundle, else the source beside the caller', () => {
    const caller = new URL('../../src/adapters/reader-process/runner.ts', import.meta.url).href;
    expect(processEntry(caller, 'child', () => true)).toBe(`${ROOT}dist/cli/child.js`);
    expect(processEntry(caller, 'child', () => false)).toBe(`${ROOT}src/adapters/reader-process/child.ts`);
  });
});
