import type { BuildAppOptions } from 'fauxqs';
import { mkdir } from 'node:fs/promises';
import { findPackageJSON } from 'node:module';
import { pathToFileURL } from 'node:url';
import { engine } from '../adapters/local-engines.js';
import { enforceCreateOnly } from './s3-create-only.js';

/**
 * Runs the fauxqs S3 emulator in-process, on loopback only.
 *
 * fauxqs' own `startFauxqs()` always listens on 0.0.0.0 (its `host` option only
 * changes generated SQS queue URLs) and is the only public entry point that
 * wires up persistence. So we do the same wiring ourselves around the public
 * `buildApp({ stores })` and call `listen()` with 127.0.0.1. The store and
 * persistence classes are not exported from the package root, so they are
 * loaded from fauxqs' dist files (pinned to fauxqs 2.4.1 in package.json; an
 * upgrade that moves them fails loudly here on import).
 */

export interface S3Emulator {
  endpoint: string;
  port: number;
  stop(): Promise<void>;
}

export interface S3EmulatorOptions {
  /** Defaults to a free port chosen by the OS. */
  port?: number;
  /** Persist buckets and objects (SQLite) in this directory; omitted means in-memory. */
  dataDir?: string;
}

type Stores = NonNullable<BuildAppOptions['stores']>;
type PersistenceManager = NonNullable<Stores['sqsStore']['persistence']>;

interface FauxqsInternals {
  SqsStore: new () => Stores['sqsStore'];
  SnsStore: new () => Stores['snsStore'];
  S3Store: new () => Stores['s3Store'];
  PersistenceManager: new (dataDir: string) => PersistenceManager;
}

export async function startS3Emulator(opts: S3EmulatorOptions = {}): Promise<S3Emulator> {
  const { stores, persistence } = await createStores(opts.dataDir);
  // Loaded here, not at import: a CLI command that never starts the emulator never loads it.
  const { buildApp } = await engine('fauxqs', () => import('fauxqs'));
  const app = buildApp({ logger: false, stores });
  enforceCreateOnly(app, stores.s3Store);
  if (persistence) app.addHook('preClose', () => persistence.close());
  try {
    await app.listen({ port: opts.port ?? 0, host: '127.0.0.1' });
  } catch (err) {
    await app.close(); // releases the SQLite handle
    throw err;
  }
  const address = app.server.address();
  if (address === null || typeof address === 'string') {
    await app.close();
    throw new Error(`fauxqs reported an unexpected address: ${String(address)}`);
  }
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    port: address.port,
    stop: () => app.close(),
  };
}

/** True when the emulator answers an S3 ListBuckets request. */
export async function s3Answers(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(endpoint, { signal: AbortSignal.timeout(2_000) });
    return response.ok && (await response.text()).includes('ListAllMyBucketsResult');
  } catch {
    return false;
  }
}

// Mirrors what startFauxqs() does for `dataDir` in fauxqs 2.4.1.
async function createStores(
  dataDir: string | undefined,
): Promise<{ stores: Stores; persistence?: PersistenceManager }> {
  const fauxqs = await loadInternals();
  const stores: Stores = {
    sqsStore: new fauxqs.SqsStore(),
    snsStore: new fauxqs.SnsStore(),
    s3Store: new fauxqs.S3Store(),
  };
  if (dataDir === undefined) return { stores };

  await mkdir(dataDir, { recursive: true });
  const persistence = new fauxqs.PersistenceManager(dataDir);
  // Load before attaching persistence, as fauxqs does: attaching first would
  // write every loaded row straight back and trip ON DELETE CASCADE.
  persistence.load(stores.sqsStore, stores.snsStore, stores.s3Store);
  stores.sqsStore.persistence = persistence;
  stores.snsStore.persistence = persistence;
  stores.s3Store.persistence = persistence;
  for (const queue of stores.sqsStore.allQueues()) queue.persistence = persistence;
  return { stores, persistence };
}

async function loadInternals(): Promise<FauxqsInternals> {
  // Located via the package.json rather than import.meta.resolve, which the
  // vite module runner (vitest globalSetup) does not support. Importing by file
  // URL bypasses the "exports" map, which only exposes the package root; the
  // files are the same ones buildApp itself imports.
  const packageJson = findPackageJSON('fauxqs', import.meta.url);
  if (packageJson === undefined) throw new Error('fauxqs is not installed');
  const dist = new URL('./dist/', pathToFileURL(packageJson));
  const load = (path: string): Promise<Record<string, unknown>> =>
    import(new URL(path, dist).href) as Promise<Record<string, unknown>>;
  const [sqs, sns, s3, persistence] = await Promise.all([
    load('./sqs/sqsStore.js'),
    load('./sns/snsStore.js'),
    load('./s3/s3Store.js'),
    load('./persistence.js'),
  ]);
  const internals = {
    SqsStore: sqs.SqsStore,
    SnsStore: sns.SnsStore,
    S3Store: s3.S3Store,
    PersistenceManager: persistence.PersistenceManager,
  };
  for (const [name, value] of Object.entries(internals)) {
    if (typeof value !== 'function') {
      throw new Error(`fauxqs internals moved: ${name} not found; check the fauxqs version`);
    }
  }
  return internals as FauxqsInternals;
}
