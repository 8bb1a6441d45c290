import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/local/asl.js';

/**
 * The real bin, spawned: which code it runs is the subject. The prebuilt bundle
 * (dist/cli/, `npm run build`, which `npm ci` runs as `prepare`) while it is fresh; the
 * TypeScript sources through tsx when it is absent, stale or CUTPOINT_CLI_FROM_SOURCE=1.
 * No timing is asserted: `npm run bench` measures the start.
 */
function bin(root: string, args: string[], env: Record<string, string> = {}) {
  const out = spawnSync(process.execPath, [join(root, 'bin/cutpoint.js'), ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, CUTPOINT_CLI_FROM_SOURCE: '', ...env },
    timeout: 120_000,
  });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}
const buildOf = (r: { stdout: string }) => (JSON.parse(r.stdout) as { build: string }).build;

let copy = '';
/** The layout `npm pack` ships (package.json `files`): bin/ and dist/cli/, no sources. */
let installed = '';
beforeAll(async () => {
  // The bundle of these sources: built here only when missing or stale (npm ci built it in CI).
  if (buildOf(bin(REPO_ROOT, ['--version', '--format', 'json'])) !== 'bundle') {
    const build = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/build-cli.mjs')], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(build.status, build.stderr).toBe(0);
  }
  // A second checkout whose bundle predates every source file: the bin must not use it.
  copy = await mkdtemp(join(tmpdir(), 'cutpoint-bin-'));
  await cp(join(REPO_ROOT, 'bin'), join(copy, 'bin'), { recursive: true });
  await cp(join(REPO_ROOT, 'dist'), join(copy, 'dist'), { recursive: true });
  await cp(join(REPO_ROOT, 'package.json'), join(copy, 'package.json'));
  for (const dir of ['src', 'functions', 'node_modules']) await symlink(join(REPO_ROOT, dir), join(copy, dir));
  const buildJson = join(copy, 'dist/cli/build.json');
  await writeFile(buildJson, JSON.stringify({ ...JSON.parse(await readFile(buildJson, 'utf8')), builtAt: 0 }));
  installed = await mkdtemp(join(tmpdir(), 'cutpoint-installed-'));
  for (const dir of ['bin', 'dist']) await cp(join(REPO_ROOT, dir), join(installed, dir), { recursive: true });
  await cp(join(REPO_ROOT, 'package.json'), join(installed, 'package.json'));
  await symlink(join(REPO_ROOT, 'node_modules'), join(installed, 'node_modules'));
  const installedJson = join(installed, 'dist/cli/build.json');
  await writeFile(installedJson, JSON.stringify({ ...JSON.parse(await readFile(installedJson, 'utf8')), builtAt: 0 }));
}, 240_000);

afterAll(async () => {
  for (const dir of [copy, installed]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('bin/cutpoint.js', () => {
  it('runs the fresh bundle: --version says so, help and a usage error behave as from the sources', () => {
    expect(buildOf(bin(REPO_ROOT, ['--version', '--format', 'json']))).toBe('bundle');
    const help = bin(REPO_ROOT, ['stream', 'append', '--help']);
    expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: '' });
    expect(help.stdout).toContain('--input-format lines|raw');
    const refused = bin(REPO_ROOT, ['stream', 'read', 'orders', '--partition', 'x', '--from', '0']);
    expect(refused).toEqual({
      code: 2,
      stdout: '',
      stderr: 'cli.usage: --partition must be a non-negative integer, got "x"\n',
    });
  }, 120_000);

  it('falls back to the sources through tsx with CUTPOINT_CLI_FROM_SOURCE=1, and when the bundle is older than a source file', () => {
    const forced = bin(REPO_ROOT, ['--version', '--format', 'json'], { CUTPOINT_CLI_FROM_SOURCE: '1' });
    expect(buildOf(forced)).toBe('source');
    expect(buildOf(bin(copy, ['--version', '--format', 'json']))).toBe('source');
    // The same grammar either way.
    const refused = bin(copy, ['stream', 'read', 'orders', '--partition', 'x', '--from', '0']);
    expect(refused).toEqual({
      code: 2,
      stdout: '',
      stderr: 'cli.usage: --partition must be a non-negative integer, got "x"\n',
    });
  }, 180_000); // spawns through tsx: 1.8 s at load ~10; one tsx spawn took 20-25 s at load 16

  it('an installed CLI (bin/ and dist/cli/, no sources) runs its bundle whatever the times of build.json', () => {
    expect(buildOf(bin(installed, ['--version', '--format', 'json']))).toBe('bundle');
    const refused = bin(installed, ['stream', 'read', 'orders', '--partition', 'x', '--from', '0']);
    expect(refused.code).toBe(2);
  }, 120_000);
});
