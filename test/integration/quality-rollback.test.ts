import { DynamoDBClient, GetItemCommand, PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import type { CapsuleV2 } from '../../src/domain/quality/capsule.js';
import { qualityKeys, readCapsule } from '../../src/quality/capsule-store.js';
import { openObserveWorld, type ObserveWorld } from '../fixtures/quality/observe-world.js';
import { runCutpointInProcess, startCliRuntime, type CliRun, type CliRuntime } from '../support/cli-runtime.js';
import { scanTable } from '../support/delivery-snapshot.js';
import { publicationManifest } from '../support/publication-world.js';

/**
 * A rolled-back quality capsule is seen on every path (src/quality/capsule-continuity.ts),
 * through the CLI and the local flows, as an operator meets it: a ClickHouse exchange
 * operation is published and observed COMPLETE for real; then its capsule item is put back
 * as a restore of the authority table would leave it — (a) the COMPLETE item below its
 * completion version, (b) the item as it was at PREPARED, before the observation — with a
 * plain DynamoDB PutItem (no cutpoint writer does this). Every live path refuses with
 * quality.authority_version_rollback and the world is unchanged: every item of the
 * authority table (a Scan), every object of the bucket, every table on the target. The
 * read-only paths show it: quality and delivery inspect (and inspect-all) with no permitted
 * action, diagnose `continuity: rollback`.
 * Put back as it was (the same version), resume finishes the operation — and a successor's
 * begin on the released slot refuses a retired capsule rolled back the same way.
 */

let runtime: CliRuntime;
let host: ObserveWorld;
let dynamo: DynamoDBClient;
let op: { ref: { targetId: string; invocationId: string }; selector: string; manifestText: string; table: string };
/** The capsule item as DynamoDB held it after dispatch (PREPARED) and after the observation (COMPLETE, evidence recorded). */
let preparedItem: Record<string, AttributeValue>;
let completeItem: Record<string, AttributeValue>;

beforeAll(async () => {
  [runtime, host] = await Promise.all([startCliRuntime('quality-rollback', publicationManifest()), openObserveWorld()]);
  const { config } = runtime;
  dynamo = new DynamoDBClient({
    region: config.region,
    endpoint: config.endpoints.dynamodb,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const published = await host.published({ table: 'rolled_1', ports: runtime.ports, manifestDir: runtime.root });
  op = {
    ref: published.ref,
    selector: published.selector,
    manifestText: published.manifestText,
    table: published.table,
  };
  const invocationId = published.ref.invocationId;
  preparedItem = await rawCapsule();
  const observed = await cli(['quality', 'observe', invocationId, '--manifest', op.selector, '--yes']);
  expect(observed.code, observed.stderr).toBe(0);
  completeItem = await rawCapsule();
  expect(completeItem.state?.S).toBe('COMPLETE');
}, 240_000);

afterAll(async () => {
  dynamo?.destroy();
  await host?.close();
  await runtime?.stop();
});

const cli = (argv: string[]): Promise<CliRun> =>
  runCutpointInProcess(argv, {
    cwd: runtime.root,
    env: { CUTPOINT_STATE_DIR: runtime.stateDir, CH_PUB_URL: host.host.url, CH_URL: host.host.url },
  });

const capsuleKey = () => {
  const key = qualityKeys.capsule(op.ref.targetId, op.ref.invocationId);
  return { pk: { S: key.pk }, sk: { S: key.sk } };
};

async function rawCapsule(): Promise<Record<string, AttributeValue>> {
  const out = await dynamo.send(
    new GetItemCommand({ TableName: runtime.config.tableName, Key: capsuleKey(), ConsistentRead: true }),
  );
  if (!out.Item) throw new Error('test bug: no capsule item');
  return out.Item;
}

/** TEST SEAM: the item written back as a restore leaves it (attributes and version as given). */
async function restore(item: Record<string, AttributeValue>, version?: number): Promise<void> {
  await dynamo.send(
    new PutItemCommand({
      TableName: runtime.config.tableName,
      Item: { ...item, ...(version === undefined ? {} : { version: { N: String(version) } }) },
    }),
  );
}

/** Everything an action could change: every authority item, every object, every target table (name, UUID, rows). */
async function world(): Promise<string> {
  const objects = await runtime.ports.objects.list('');
  const tables = await host.ch.client.query({
    query: "SELECT name, toString(uuid) AS uuid, total_rows FROM system.tables WHERE database = 'pub' ORDER BY name",
    format: 'JSONEachRow',
  });
  return JSON.stringify({ items: await scanTable(runtime.config), objects, tables: await tables.json() });
}

/** Exit 1, empty stdout, the last diagnostic line names `code`. */
function refusedWith(r: CliRun, code: string): void {
  expect({ exit: r.code, stdout: r.stdout }, r.stderr).toEqual({ exit: 1, stdout: '' });
  expect(r.stderr.trim().split('\n').at(-1), r.stderr).toContain(code);
}

const ROLLBACK = 'quality.authority_version_rollback';

/** Every path against the capsule as it now stands: each live one refused, nothing changed; the read-only ones name it. */
async function everyPathRefuses(): Promise<void> {
  const id = op.ref.invocationId;
  const before = await world();
  refusedWith(await cli(['delivery', 'resume', id, '--manifest', op.selector, '--yes']), ROLLBACK);
  expect(await world()).toBe(before);
  refusedWith(await cli(['quality', 'observe', id, '--manifest', op.selector, '--yes']), ROLLBACK);
  expect(await world()).toBe(before);
  refusedWith(await cli(['quality', 'replay', id, '--manifest', op.selector]), ROLLBACK);
  expect(await world()).toBe(before);
  // The flows on the local runner: resume and the operator's observe end failed, naming the rollback.
  const flowInput = JSON.stringify({
    invocationId: id,
    manifestText: op.manifestText,
    selector: op.selector,
    yes: true,
  });
  for (const flow of ['delivery-resume', 'quality-observe']) {
    const r = await cli(['flow', 'run', flow, '--input', flowInput]);
    expect({ exit: r.code, stdout: r.stdout }, r.stderr).toEqual({ exit: 1, stdout: '' });
    expect(r.stderr, flow).toMatch(/Quality\.AuthorityRollback|quality\.authority_version_rollback/);
    expect(await world(), flow).toBe(before);
  }

  const inspect = await cli(['quality', 'inspect', id]);
  expect(inspect.code, inspect.stderr).toBe(0);
  expect(JSON.parse(inspect.stdout)).toMatchObject({ diagnostic_code: ROLLBACK, permitted_actions: [] });
  const all = await cli(['quality', 'inspect-all']);
  expect(all.code, all.stderr).toBe(0);
  const items = (JSON.parse(all.stdout) as { items: Array<Record<string, unknown>> }).items;
  expect(items.find((i) => i.invocation_id === id)).toMatchObject({ diagnostic_code: ROLLBACK, permitted_actions: [] });
  // delivery inspect runs the same continuity check for the exchange operation: no action, the rollback's code.
  const delivery = await cli(['delivery', 'inspect', id, '--format', 'json']);
  expect(delivery.code, delivery.stderr).toBe(0);
  expect(JSON.parse(delivery.stdout)).toMatchObject({
    invocation_id: id,
    diagnostic_code: ROLLBACK,
    permitted_actions: [],
  });
  const deliveryAll = await cli(['delivery', 'inspect-all', '--format', 'json']);
  expect(deliveryAll.code, deliveryAll.stderr).toBe(0);
  const deliveryItems = (JSON.parse(deliveryAll.stdout) as { items: Array<Record<string, unknown>> }).items;
  expect(deliveryItems.find((i) => i.invocation_id === id)).toMatchObject({
    diagnostic_code: ROLLBACK,
    permitted_actions: [],
  });
  const diagnose = await cli(['quality', 'diagnose', id, '--manifest', op.selector]);
  expect(diagnose.code, diagnose.stderr).toBe(0);
  expect(JSON.parse(diagnose.stdout)).toMatchObject({
    authority: { continuity: 'rollback' },
    last_error_code: ROLLBACK,
  });
  expect(await world()).toBe(before);
}

describe('a rolled-back capsule is refused on every path and nothing is written (docs/publication.md: what the rollback check detects)', () => {
  it('the COMPLETE item put back below its completion version', async () => {
    const completion = Number(completeItem.completion?.M?.version?.N);
    expect(completion).toBeGreaterThan(1);
    await restore(completeItem, completion - 1);
    await everyPathRefuses();
  }, 300_000);

  it('the item as it was at PREPARED, before the observation (completion.json stays)', async () => {
    expect(preparedItem.state?.S).toBe('PREPARED');
    await restore(preparedItem);
    await everyPathRefuses();
  }, 300_000);

  it('put back exactly as it was, resume finishes; a successor then refuses the retired capsule rolled back', async () => {
    await restore(completeItem);
    // Continuous again: delivery inspect offers the journal's action.
    const inspected = await cli(['delivery', 'inspect', op.ref.invocationId, '--format', 'json']);
    expect(inspected.code, inspected.stderr).toBe(0);
    expect(JSON.parse(inspected.stdout)).toMatchObject({ permitted_actions: ['resume'] });
    const resumed = await cli(['delivery', 'resume', op.ref.invocationId, '--manifest', op.selector, '--yes']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((await loadInvocation(runtime.ports, op.ref.invocationId)).state).toBe('CUSTODY_RELEASED');
    const retired = (await readCapsule(runtime.ports, op.ref)) as CapsuleV2;
    expect(retired.retiredAt).toBeDefined();

    // The retired item put back below its completion version: the next run of the route takes
    // the released slot only through the previous operation's capsule, and refuses it.
    await restore(await rawCapsule(), (retired.completion?.version ?? 2) - 1);
    const before = await world();
    const run = await cli([
      'flow',
      'run',
      'publish-clickhouse',
      '--input',
      JSON.stringify({ manifestText: op.manifestText, selector: op.selector }),
    ]);
    expect({ exit: run.code, stdout: run.stdout }, run.stderr).toEqual({ exit: 1, stdout: '' });
    expect(run.stderr).toMatch(/Quality\.AuthorityRollback|quality\.authority_version_rollback/);
    expect(await world()).toBe(before);
  }, 300_000);
});
