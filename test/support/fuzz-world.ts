import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { awsClients } from '../../src/adapters/aws-clients.js';
import { runDeliverySteps } from '../../src/delivery/deliver-in-process.js';
import { begin } from '../../src/delivery/steps/begin.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { runCutpointInProcess, startCliRuntime, type CliRuntime } from './cli-runtime.js';
import { scanTable, targetSnapshot } from './delivery-snapshot.js';
import { clickhouseCatalogue, closedPort, fileTree, historiesNotFailed, sessionIds } from './fuzz-snapshot.js';
import {
  generateEvents,
  newInvocationId,
  openEventSource,
  openWarehouse,
  type EventSource,
  type Warehouse,
} from './delivery-world.js';
import { TRANSACTION_MODE } from '../../src/delivery/transaction-mode.js';

/**
 * The world the fuzz suite (test/fuzz/) tries to damage: a persistent local runtime of
 * its own (`cutpoint local up`, CUTPOINT_STATE_DIR), seeded through the CLI itself with a
 * real stream (created, taken over, a few committed appends), committed objects, and two
 * delivered invocations on embedded PostgreSQL — one CUSTODY_RELEASED, one stopped in
 * PUBLICATION_UNKNOWN (permitted: reconcile) — plus a lane whose stored session is forged.
 * `snapshot()` is the evidence for "nothing mutated": the authority table (full Scan),
 * the bucket listing with ETags, the target's rows, receipts and stages, and every local
 * file under the runtime's root except the emulators' own data (`local/`).
 */

export const PG_ENV = 'FUZZ_PG_URL';
export const CH_ENV = 'FUZZ_CH_URL';
/** The exchange route's ClickHouse target: a loopback port nothing listens on (a case that reached it fails to connect). */
export const CH_PUB_ENV = 'FUZZ_CH_PUB_URL';
export const PG_PASSWORD_ENV = 'FUZZ_PG_PASSWORD';
export const STREAM = 'orders';
/** Lane (STREAM, 1) carries a session file whose session id the authority never issued. */
export const FORGED_PARTITION = 1;
export const OWNER = 'fuzz-owner';

export const MANIFEST_TEXT = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: ${CH_ENV} }
  warehouse: { kind: postgres, url_env: ${PG_ENV}, password_env: ${PG_PASSWORD_ENV} }
  pub_ch: { kind: clickhouse, url_env: ${CH_PUB_ENV} }
routes:
  daily:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: warehouse, table: dwh.events, key_columns: [event_id], mode: replace_window }
    quality: { unique_keys: true, not_null: [event_id, event_time] }
    chunk_rows: 400
  lossy:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: warehouse, table: dwh.events_lossy, key_columns: [event_id], mode: replace_window }
    chunk_rows: 400
  lake:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: pub_ch, table: pub.events, key_columns: [event_id], mode: exchange }
    quality:
      capsule: v2
      unique_keys: true
      not_null: [event_id, event_time]
    chunk_rows: 400
    part_rows: 800
`;
/** The SQL routes (delivered on embedded PostgreSQL). */
export const ROUTES = ['daily', 'lossy'] as const;
/** The ClickHouse exchange route (quality-governed; its target is never reachable). */
export const LAKE = 'lake';
/** The consumer group with a committed cursor on (STREAM, 0), named by the stream's retention policy. */
export const GROUP = 'billing';
export const GROUP_POSITION = 2;
const TABLES = ['events', 'events_lossy'];
const RECEIPTS = { schema: 'public', table: 'cutpoint_receipts' };

export interface Snapshot {
  authority: string;
  bucket: string;
  target: string;
  /** The CLI's owner sessions (`sessions/`). */
  sessions: string;
  /**
   * Local execution histories (`executions/`) of anything but a FAILED execution. Like
   * Step Functions, the local runner keeps the history of every execution; a refused
   * command may leave the history of its failed execution (an audit record, not state),
   * never one that succeeded.
   */
  executions: string;
  /** Every other file under the runtime's root (manifest, a created chdb directory, …). */
  files: string;
  /** The embedded ClickHouse's catalogue: every table outside the system databases, with its engine and rows. */
  clickhouse: string;
}

export interface FuzzWorld {
  runtime: CliRuntime;
  /** Where a case's own input files go (outside the snapshot). */
  inputs: string;
  manifestFile: string;
  /** CUSTODY_RELEASED on route daily. */
  deliveredId: string;
  /** PUBLICATION_UNKNOWN on route lossy (permitted: reconcile). */
  unknownId: string;
  /** Attempt ids committed on (STREAM, 0), with the text of their records. */
  committed: Array<{ attemptId: string; text: string }>;
  /** Every object key in the bucket after seeding (WAL, generation 0, index, evidence, chunks, plain objects). */
  objectKeys: string[];
  committedEnd: number;
  /** The stored (real) session of lane (STREAM, 0), as a flow input takes it. */
  laneSession(): Promise<{ owner: string; session: string; epoch: number }>;
  snapshot(): Promise<Snapshot>;
  /** Strings no output may contain: connection strings, endpoints, secret values, session ids (current ones, from the snapshot). */
  secrets(snap: Snapshot): string[];
  close(): Promise<void>;
}

export async function openFuzzWorld(): Promise<FuzzWorld> {
  // Embedded ClickHouse and PostgreSQL start while the runtime does.
  const sourceStarting = openEventSource(generateEvents(2000, 144_000));
  const warehouseStarting = openWarehouse({ tables: TABLES, receiptTable: 'adapter default' });
  const [runtimeStarted, sourceStarted, warehouseStarted] = await Promise.allSettled([
    startCliRuntime('fuzz', MANIFEST_TEXT),
    sourceStarting,
    warehouseStarting,
  ]);
  if (
    runtimeStarted.status === 'rejected' ||
    sourceStarted.status === 'rejected' ||
    warehouseStarted.status === 'rejected'
  ) {
    if (warehouseStarted.status === 'fulfilled') await warehouseStarted.value.close();
    if (sourceStarted.status === 'fulfilled') await sourceStarted.value.close();
    if (runtimeStarted.status === 'fulfilled') await runtimeStarted.value.stop();
    throw [runtimeStarted, sourceStarted, warehouseStarted].flatMap((r) =>
      r.status === 'rejected' ? [r.reason as unknown] : [],
    )[0];
  }
  const runtime = runtimeStarted.value;
  const { root, config } = runtime;
  const inputs = await mkdtemp(join(tmpdir(), 'cutpoint-fuzz-inputs-'));
  const envBefore = {
    pg: process.env[PG_ENV],
    ch: process.env[CH_ENV],
    pw: process.env[PG_PASSWORD_ENV],
    pub: process.env[CH_PUB_ENV],
    faults: process.env.CUTPOINT_FAULTS,
  };
  const source: EventSource = sourceStarted.value;
  const warehouse: Warehouse = warehouseStarted.value;
  const s3 = awsClients(config).s3;
  try {
    process.env.CUTPOINT_FAULTS = '';
    // Stream: created, taken over, three committed appends on partition 0; partition 1 taken over, then its session forged.
    const cli = async (args: string[]) => {
      const r = await runCutpointInProcess(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      return JSON.parse(r.stdout) as Record<string, unknown>;
    };
    await cli(['stream', 'create', STREAM, '--partitions', '2']);
    await cli(['stream', 'takeover', STREAM, '--partition', '0', '--owner', OWNER]);
    await cli(['stream', 'takeover', STREAM, '--partition', String(FORGED_PARTITION), '--owner', OWNER]);
    const committed: FuzzWorld['committed'] = [];
    for (const [attemptId, text] of [
      ['seed-1', 'alpha\nbeta\n'],
      ['seed-2', 'gamma\n'],
      ['seed-3', 'delta\nepsilon\nzeta\n'],
    ] as const) {
      const file = join(inputs, `${attemptId}.txt`);
      await writeFile(file, text);
      await cli(['stream', 'append', STREAM, '--partition', '0', '--attempt', attemptId, '--file', file]);
      committed.push({ attemptId, text });
    }
    await cli([
      'stream',
      'append',
      STREAM,
      '--partition',
      String(FORGED_PARTITION),
      '--attempt',
      'seed-p1',
      '--file',
      join(inputs, 'seed-2.txt'),
    ]);
    // A consumer group's cursor (and its stored session) on (STREAM, 0), protected by the retention policy.
    const consumed = await runCutpointInProcess([
      'stream',
      'consume',
      STREAM,
      '--partition',
      '0',
      '--group',
      GROUP,
      '--max',
      String(GROUP_POSITION),
      '--owner',
      OWNER,
    ]);
    expect(consumed.code, consumed.stderr).toBe(0);
    await cli(['stream', 'policy', STREAM, '--groups', GROUP]);
    const forged = join(root, 'sessions', `${STREAM}-${FORGED_PARTITION}.json`);
    const stored = JSON.parse(await readFile(forged, 'utf8')) as { active: { session: string } };
    stored.active.session = '00000000-0000-4000-8000-00000000f0f0';
    await writeFile(forged, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
    // Plain committed objects.
    for (const [key, text] of [
      ['docs/readme.txt', 'hello'],
      ['data/part-0001.bin', 'payload-1'],
      ['data/part-0002.bin', 'payload-2'],
    ] as const) {
      const file = join(inputs, `object-${key.replace(/\W/g, '_')}`);
      await writeFile(file, text);
      await cli(['object', 'put', key, '--file', file]);
    }
    // Delivery: embedded ClickHouse (in this process) as the source, embedded PostgreSQL as the target.
    process.env[PG_ENV] = warehouse.pgServer.connectionString;
    process.env[PG_PASSWORD_ENV] = `fuzz-pg-password-${createHash('sha256').update(root).digest('hex').slice(0, 12)}`;
    // A refused `delivery run` must not get as far as creating this directory.
    process.env[CH_ENV] = `chdb:${join(root, 'chdb-never-created')}`;
    process.env[CH_PUB_ENV] = `http://127.0.0.1:${await closedPort()}`;
    const manifest = parseManifest(MANIFEST_TEXT, runtime.manifestFile);
    const deps = (route: string) => ({
      ports: runtime.ports,
      target: warehouse.target,
      mode: TRANSACTION_MODE,
      source: source.source,
      route: selectRoute(manifest, route),
    });
    const input = (invocationId: string, route: string) => ({
      invocationId,
      session: `run-${invocationId.slice(4, 18)}`,
      manifestText: MANIFEST_TEXT,
      selector: `${runtime.manifestFile}#${route}`,
    });
    const deliveredId = newInvocationId();
    const delivered = await runDeliverySteps(await begin(input(deliveredId, 'daily'), deps('daily')), deps('daily'));
    expect(delivered.state).toBe('CUSTODY_RELEASED');
    const unknownId = newInvocationId();
    const lossy = await begin(input(unknownId, 'lossy'), deps('lossy'));
    warehouse.targetFaults.arm('delivery.publish.commit:lose-response*');
    try {
      expect((await runDeliverySteps(lossy, deps('lossy'))).state).toBe('PUBLICATION_UNKNOWN');
    } finally {
      warehouse.targetFaults.disarm();
    }
    const wh = warehouse;
    const listBucket = async () => {
      const out: string[] = [];
      let token: string | undefined;
      do {
        const page = await s3.send(new ListObjectsV2Command({ Bucket: config.bucketName, ContinuationToken: token }));
        for (const o of page.Contents ?? []) out.push(`${o.Key ?? ''} ${o.ETag ?? ''} ${o.Size ?? ''}`);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return out.sort();
    };
    const objectKeys = (await listBucket()).map((line) => line.split(' ')[0] as string);
    const snapshot = async (): Promise<Snapshot> => {
      const [authority, bucket, target, sessions, executions, files, clickhouse] = await Promise.all([
        // One item (one table, receipt, stage) per line, so a difference names the item that changed.
        scanTable(config).then((scan) =>
          (JSON.parse(scan) as unknown[]).map((item) => JSON.stringify(item)).join('\n'),
        ),
        listBucket().then((l) => l.join('\n')),
        targetSnapshot(wh.admin, 'dwh', TABLES, RECEIPTS).then((t) =>
          [...Object.entries(t.tables), ...t.receipts, ...t.stages].map((x) => JSON.stringify(x)).join('\n'),
        ),
        fileTree(join(root, 'sessions'), [], { contents: true }).then((l) => l.join('\n')),
        historiesNotFailed(join(root, 'executions')).then((l) => l.join('\n')),
        fileTree(root, ['local', 'sessions', 'executions'], { contents: true }).then((l) => l.join('\n')),
        clickhouseCatalogue(source),
      ]);
      return { authority, bucket, target, sessions, executions, files, clickhouse };
    };
    const fixed = [
      wh.pgServer.connectionString,
      process.env[PG_PASSWORD_ENV] as string,
      process.env[CH_ENV] as string,
      process.env[CH_PUB_ENV] as string,
      config.endpoints.dynamodb ?? '',
      config.endpoints.s3 ?? '',
    ].filter((s) => s.length > 0);
    return {
      runtime,
      inputs,
      manifestFile: runtime.manifestFile,
      deliveredId,
      unknownId,
      committed,
      objectKeys,
      committedEnd: 6,
      async laneSession() {
        const stored = JSON.parse(await readFile(join(root, 'sessions', `${STREAM}-0.json`), 'utf8')) as {
          active: { owner: string; session: string; epoch: number };
        };
        return { owner: stored.active.owner, session: stored.active.session, epoch: stored.active.epoch };
      },
      snapshot,
      secrets: (snap) => [...fixed, ...sessionIds(snap)],
      async close() {
        s3.destroy();
        await wh.close();
        await source.close();
        restoreEnv(envBefore);
        await runtime.stop();
        await rm(inputs, { recursive: true, force: true });
      },
    };
  } catch (error) {
    s3.destroy();
    await warehouse.close();
    await source.close();
    restoreEnv(envBefore);
    await runtime.stop();
    throw error;
  }
}

function restoreEnv(before: { pg?: string; ch?: string; pw?: string; pub?: string; faults?: string }): void {
  const set = (name: string, value: string | undefined) =>
    value === undefined ? delete process.env[name] : (process.env[name] = value);
  set(PG_ENV, before.pg);
  set(CH_ENV, before.ch);
  set(PG_PASSWORD_ENV, before.pw);
  set(CH_PUB_ENV, before.pub);
  set('CUTPOINT_FAULTS', before.faults);
}
