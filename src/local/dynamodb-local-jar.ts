import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { LocalRuntimeError } from './errors.js';

/**
 * Obtains the DynamoDB Local jar reproducibly, without making it a dependency.
 *
 * AWS only publishes DynamoDB Local as an unversioned S3 download, so we take the
 * copy that ships inside the npm package `amplify-dynamodb-simulator` (its
 * wrapper code and dependency tree are not used), pin the tarball by sha512 and
 * unpack `package/emulator/` into a per-user cache outside the repository.
 */

const execFileAsync = promisify(execFile);

const PACKAGE_VERSION = '2.9.30';
const PACKAGE_SPEC = `amplify-dynamodb-simulator@${PACKAGE_VERSION}`;
// Integrity of the registry tarball, as recorded by npm ("dist.integrity").
const PACKAGE_INTEGRITY =
  'sha512-xTeeRLvzEfqyd5lh3bH4c0kHvSHHmmhD5ZDsHFKAQ5g2Zl6JqlFdutaQhCLHzxEp6Ry1o7TB6niIoXuQAnSewQ==';
const JAR = 'DynamoDBLocal.jar';

/** Directory holding `DynamoDBLocal.jar` and `DynamoDBLocal_lib/` once fetched. */
export function dynamoDbLocalDir(): string {
  const cacheRoot =
    process.env.CUTPOINT_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'cutpoint');
  return join(cacheRoot, 'dynamodb-local', PACKAGE_VERSION);
}

// One download per process even if several emulators start concurrently.
let pending: Promise<string> | undefined;

/** Returns the emulator directory, downloading and unpacking it on first use. */
export function ensureDynamoDbLocal(): Promise<string> {
  pending ??= fetchIfMissing().catch((err: unknown) => {
    pending = undefined; // let a later call retry, e.g. after the network is back
    throw err;
  });
  return pending;
}

async function fetchIfMissing(): Promise<string> {
  const finalDir = dynamoDbLocalDir();
  if (await hasJar(finalDir)) return finalDir;

  // Stage next to the final directory so the closing rename stays on one
  // filesystem and is atomic: other processes (parallel test workers) see either
  // nothing or a complete emulator, never a half-extracted one.
  await mkdir(dirname(finalDir), { recursive: true });
  const workDir = await mkdtemp(join(dirname(finalDir), `.${basename(finalDir)}.tmp-`));
  try {
    process.stderr.write(`cutpoint: fetching DynamoDB Local ${PACKAGE_VERSION} (54 MiB, once)…\n`);
    const tarball = await npmPack(workDir);
    await verifyIntegrity(tarball);

    const stagedDir = join(workDir, 'emulator');
    await mkdir(stagedDir);
    await execFileAsync('tar', ['-xzf', tarball, '-C', stagedDir, '--strip-components=2', 'package/emulator/']);
    if (!(await hasJar(stagedDir))) {
      throw new LocalRuntimeError(`${PACKAGE_SPEC} did not contain package/emulator/${JAR}`);
    }

    try {
      await rename(stagedDir, finalDir);
    } catch (err) {
      // Another process won the race; its copy came from the same pinned tarball.
      if (!(await hasJar(finalDir))) throw err;
    }
    return finalDir;
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

async function npmPack(destination: string): Promise<string> {
  let stdout: string;
  try {
    // cwd is the scratch dir so npm never reads or touches the project itself.
    ({ stdout } = await execFileAsync(
      'npm',
      ['pack', PACKAGE_SPEC, '--pack-destination', destination, '--json', '--ignore-scripts'],
      { cwd: destination, maxBuffer: 16 * 1024 * 1024 },
    ));
  } catch (err) {
    throw new LocalRuntimeError(`could not download ${PACKAGE_SPEC} with npm pack`, { cause: err });
  }
  const packed = JSON.parse(stdout) as { filename?: unknown }[];
  const filename = packed[0]?.filename;
  if (typeof filename !== 'string') {
    throw new LocalRuntimeError(`npm pack ${PACKAGE_SPEC} printed no filename`);
  }
  return join(destination, filename);
}

async function verifyIntegrity(file: string): Promise<void> {
  const hash = createHash('sha512');
  await pipeline(createReadStream(file), hash);
  const actual = `sha512-${hash.digest('base64')}`;
  if (actual !== PACKAGE_INTEGRITY) {
    throw new LocalRuntimeError(
      `${PACKAGE_SPEC} tarball integrity mismatch: expected ${PACKAGE_INTEGRITY}, got ${actual}`,
    );
  }
}

async function hasJar(dir: string): Promise<boolean> {
  try {
    await access(join(dir, JAR));
    return true;
  } catch {
    return false;
  }
}
