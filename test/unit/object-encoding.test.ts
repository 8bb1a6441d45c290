import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodeChunk } from '../../src/delivery/chunk-codec.js';
import { encodedChunks } from '../../src/delivery/parts/encoded-chunks.js';
import { sha256Hex } from '../../src/domain/digest.js';
import { probeExact, putExact, readVerified } from '../../src/objects/exact-object.js';
import { encodeObject } from '../../src/objects/object-encoding.js';
import type { ObjectStore, StoredObject } from '../../src/ports/objects.js';
import type { SourceChunk } from '../../src/ports/source.js';

/** Create-only objects in a map: the store behaviour exact-object.ts relies on. */
function memoryStore(): ObjectStore & { items: Map<string, StoredObject> } {
  const items = new Map<string, StoredObject>();
  const put = async (_cut: string, key: string, bytes: Uint8Array, metadata: Record<string, string>) => {
    if (items.has(key)) return { status: 'EXISTS' as const };
    items.set(key, { key, size: bytes.byteLength, metadata, bytes });
    return { status: 'APPLIED' as const };
  };
  return {
    items,
    location: '/s3/memory',
    put,
    copy: () => Promise.reject(new Error('not used')),
    head: async (key) => items.get(key),
    get: async (key) => items.get(key),
    delete: async (_cut, key) => (items.delete(key), { status: 'APPLIED' }),
    deleteMany: () => Promise.reject(new Error('not used')),
    list: async (prefix) => [...items.keys()].filter((k) => k.startsWith(prefix)),
  };
}

const content = encodeChunk(
  Array.from({ length: 200 }, (_, i) => ({ t: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`, id: String(i) })),
  ['t', 'id'],
);
const sha256 = sha256Hex(content);
const metadata = { sha256, encoding: 'gzip' };

describe('gzip-encoded objects: the sha256 names the content', () => {
  it('gzip is deterministic and decodes to the content', async () => {
    const a = await encodeObject(content, 'gzip');
    expect(Buffer.from(a).equals(Buffer.from(await encodeObject(content, 'gzip')))).toBe(true);
    expect(a.byteLength).toBeLessThan(content.byteLength / 3);
  });

  it('readVerified returns the content; putExact of the same content in other gzip bytes is REUSED', async () => {
    const store = memoryStore();
    const stored = await encodeObject(content, 'gzip');
    expect(await putExact(store, 'test.put', 'k.jsonl.gz', stored, metadata)).toMatchObject({ status: 'WRITTEN' });
    const read = await readVerified(store, 'k.jsonl.gz', sha256);
    expect(Buffer.from(read.bytes).equals(Buffer.from(content))).toBe(true);
    expect(read.size).toBe(stored.byteLength);
    // Another zlib level (or build): other bytes, the same content, the same identity.
    const other = new Uint8Array(gzipSync(content, { level: 9 }));
    expect(Buffer.from(other).equals(Buffer.from(stored))).toBe(false);
    expect(await putExact(store, 'test.put', 'k.jsonl.gz', other, metadata)).toMatchObject({ status: 'REUSED' });
  });

  it('other content, bytes that are not gzip, or no encoding field are not the identity', async () => {
    const store = memoryStore();
    const otherContent = encodeChunk([{ t: 'x', id: '1' }], ['t', 'id']);
    await store.put('test.put', 'other', await encodeObject(otherContent, 'gzip'), metadata);
    await store.put('test.put', 'garbage', content, metadata);
    await store.put('test.put', 'plain-gz', await encodeObject(content, 'gzip'), { sha256 });
    expect(await probeExact(store, 'other', metadata)).toBe('CONFLICT');
    expect(await probeExact(store, 'garbage', metadata)).toBe('CONFLICT');
    expect(await probeExact(store, 'plain-gz', metadata)).toBe('CONFLICT');
    await expect(readVerified(store, 'other', sha256)).rejects.toMatchObject({ code: 'objects.checksum_mismatch' });
    await expect(readVerified(store, 'garbage', sha256)).rejects.toMatchObject({
      code: 'objects.checksum_mismatch',
      message: expect.stringContaining('not gzip'),
    });
    await expect(readVerified(store, 'plain-gz', sha256)).rejects.toMatchObject({ code: 'objects.checksum_mismatch' });
  });

  it('an object without an encoding is read as it is; an unknown encoding is refused', async () => {
    const store = memoryStore();
    await store.put('test.put', 'plain.jsonl', content, { sha256 });
    await store.put('test.put', 'zstd', content, { sha256, encoding: 'zstd' });
    expect((await readVerified(store, 'plain.jsonl', sha256)).bytes).toBe(store.items.get('plain.jsonl')!.bytes);
    await expect(readVerified(store, 'zstd', sha256)).rejects.toMatchObject({ code: 'objects.encoding_unsupported' });
  });

  it('encodedChunks hands on each chunk gzipped beside its JSONL', async () => {
    const chunk: SourceChunk = {
      seq: 0,
      columns: ['t', 'id'],
      rows: [{ t: 'a', id: '1' }],
      firstKey: ['a'],
      lastKey: ['a'],
    };
    const out = [];
    for await (const c of encodedChunks(
      (async function* () {
        yield chunk;
      })(),
    ))
      out.push(c);
    expect(out).toHaveLength(1);
    const [c] = out;
    expect(gunzipSync(await c!.stored).equals(Buffer.from(c!.bytes))).toBe(true);
    expect(c!.sha256).toBe(sha256Hex(c!.bytes));
  });
});
