import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { deliveryKeys } from '../../src/delivery/journal/keys.js';
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import { extractLoadPart } from '../../src/delivery/parts/extract-load-part.js';
import { listHeads, listReceipts } from '../../src/delivery/parts/part-store.js';
import { begin } from '../../src/delivery/steps/begin.js';
import { forRerun } from '../../src/delivery/steps/common.js';
import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { planPartsStep, readPlan } from '../../src/delivery/steps/plan-parts.js';
import { sha256Hex } from '../../src/domain/digest.js';
import { stagingTableNameOf } from '../../src/domain/delivery/identifiers.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { RECEIPTS_PER_BATCH } from '../../src/domain/delivery/part-receipts.js';
import { readVerified } from '../../src/objects/exact-object.js';
import { newInvocationId, type DeliveryWorld } from '../support/delivery-world.js';
import { beginInput, manifestText, openWindowWorld } from '../support/deliver-window-fixture.js';

/**
 * Chunk objects as stored (src/objects/object-encoding.ts): gzip under `.jsonl.gz`, the
 * receipt's SHA-256 and sizes those of the JSONL the stage loaded; and a part whose
 * journaled chunk object is gone (deleted; later also expired by chunk retention)
 * refuses to resume with Delivery.EvidenceExpired, writing nothing. Real DynamoDB Local, the
 * S3 emulator, chdb and embedded PostgreSQL (test/support/delivery-world.ts).
 */

let world: DeliveryWorld;
let deps: DeliveryDeps;

// 20-row chunks: a 600-row part is 30 chunks, so its first receipt batch (16) is journaled before its EOF.
const expiringText = manifestText
  .replace('daily:', 'expiring:')
  .replace('table: dwh.events,', 'table: dwh.events_expiring,')
  .replace('chunk_rows: 50', 'chunk_rows: 20');
const selector = '/config/expiring.yaml#expiring';
const input = (invocationId: string) => ({ ...beginInput(invocationId), manifestText: expiringText, selector });

beforeAll(async () => {
  let base: DeliveryDeps;
  ({ world, deps: base } = await openWindowWorld());
  await world.admin.query('CREATE TABLE dwh.events_expiring (LIKE dwh.events INCLUDING ALL)');
  deps = { ...base, route: selectRoute(parseManifest(expiringText, '/config/expiring.yaml'), 'expiring') };
});

afterAll(() => world?.close());

/** Everything a part step can change, as one comparable text. */
async function snapshot(invocationId: string): Promise<string> {
  const a = world.stores.ports.authority;
  const record = await loadInvocation(world.stores.ports, invocationId);
  const parts = await Promise.all([
    a.query(`target#${record.targetId}`, 'c'),
    a.query(deliveryKeys.journal(invocationId), 'seq#'),
    a.query(deliveryKeys.partsOf(invocationId), 'part#'),
    a.query(deliveryKeys.partsOf(invocationId), 'batch#'),
    world.stores.ports.objects.list(`delivery/expiring/${invocationId}/`),
  ]);
  const staged = (await world.admin.query(`SELECT count(*)::int AS n FROM dwh.${stagingTableNameOf(invocationId)}`))
    .rows;
  return JSON.stringify([record, ...parts, staged]);
}

describe('chunk objects: compressed, and expired evidence', () => {
  it('a part stores gzip chunks whose receipts name the JSONL; a chunk gone before its part resumes is Delivery.EvidenceExpired and nothing is written', async () => {
    const invocationId = newInvocationId();
    const begun = await begin(input(invocationId), deps);
    await createStaging(begun, deps);
    await planPartsStep(begun, deps);
    const record = await loadInvocation(world.stores.ports, invocationId);
    const [part] = await readPlan(deps, record);

    // The part's second receipt batch (its EOF) crashes before it is journaled: the head holds 16 chunks.
    world.stores.faults.arm('delivery.part.receipt:crash-before@2');
    try {
      await expect(extractLoadPart({ ...begun, part }, deps)).rejects.toMatchObject({ name: 'Cutpoint.WorkerCrashed' });
    } finally {
      world.stores.faults.disarm();
    }
    const [head] = await listHeads(world.stores.ports, invocationId);
    expect(head).toMatchObject({ part: 0, chunks: RECEIPTS_PER_BATCH, eof: false });

    // Stored gzip; the receipt's sha256 and bytes are the JSONL's, which readVerified returns.
    const receipts = await listReceipts(world.stores.ports, invocationId);
    expect(receipts).toHaveLength(RECEIPTS_PER_BATCH);
    for (const r of receipts) {
      expect(r.key).toMatch(/\/chunk-\d{10}\.jsonl\.gz$/);
      const raw = await world.stores.ports.objects.get(r.key);
      expect(raw?.metadata).toMatchObject({ encoding: 'gzip', sha256: r.sha256 });
      const jsonl = gunzipSync(raw!.bytes);
      expect(sha256Hex(jsonl)).toBe(r.sha256);
      expect(jsonl.byteLength).toBe(r.bytes);
      expect(raw!.bytes.byteLength).toBeLessThan(r.bytes);
      const verified = await readVerified(world.stores.ports.objects, r.key, r.sha256);
      expect(Buffer.from(verified.bytes).equals(jsonl)).toBe(true);
    }

    // The head's last chunk expires; the retry needs it to find where to resume.
    expect((await world.stores.ports.objects.delete('test.chunk.expire', head!.last!.key)).status).toBe('APPLIED');
    const before = await snapshot(invocationId);
    await expect(extractLoadPart({ ...forRerun(begun), part }, deps)).rejects.toMatchObject({
      name: 'Delivery.EvidenceExpired',
      code: 'delivery.chunk_expired',
      message: expect.stringContaining(`invocation ${invocationId}`),
    });
    await expect(extractLoadPart({ ...forRerun(begun), part }, deps)).rejects.toMatchObject({
      message: expect.stringContaining('retire the invocation, then run the window again'),
    });
    expect(await snapshot(invocationId)).toBe(before);
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'HELD', invocationId });
  });
});
