import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { ChecksumMismatchError, ValidationError } from '../domain/errors.js';
import type { StoredObject } from '../ports/objects.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/**
 * How an object's bytes are stored, when not as they are: the `encoding` metadata field.
 * An object's `sha256` always names its CONTENT (the decoded bytes), so the exact identity
 * (exact-object.ts) is the content's: a retry that compresses the same content into other
 * bytes (another zlib build) still finds its object, and a reader verifies what it uses.
 * Only `gzip` exists; an object without the field holds its content as is.
 */
export const OBJECT_ENCODING_FIELD = 'encoding';
export type ObjectEncoding = 'gzip';

/**
 * Compression level of gzip-encoded objects: 1. On 50,000 rows of delivery-like JSONL,
 * level 1 made it 7.7x smaller in ~0.6 µs a row, level 6 10.9x in ~2.6 µs (the chunk encode
 * itself is ~1 µs a row); `npm run bench` prints the ratio on the bench window's chunks
 * (bench/chunk-compression.ts).
 */
export const GZIP_LEVEL = 1;

/**
 * Gzip of `content`, deterministic for one zlib build: a fixed level, no file name, mtime 0
 * (node:zlib writes neither a name nor a time). Runs on the thread pool, off the event loop.
 */
export async function encodeObject(content: Uint8Array, encoding: ObjectEncoding): Promise<Uint8Array> {
  if (encoding !== 'gzip') throw unsupported(encoding);
  return new Uint8Array(await gzipAsync(content, { level: GZIP_LEVEL }));
}

/**
 * The content of a stored object: its bytes decoded as its `encoding` metadata says.
 * Bytes that do not decode are a checksum mismatch against `sha256` (the content the
 * referencing record names cannot be read from them); an encoding this build does not know
 * is refused (`objects.encoding_unsupported`).
 */
export async function contentOf(stored: StoredObject, sha256: string): Promise<Uint8Array> {
  const encoding = stored.metadata[OBJECT_ENCODING_FIELD];
  if (encoding === undefined) return stored.bytes;
  if (encoding !== 'gzip') throw unsupported(encoding);
  try {
    return new Uint8Array(await gunzipAsync(stored.bytes));
  } catch {
    throw new ChecksumMismatchError(stored.key, sha256, 'bytes that are not gzip');
  }
}

function unsupported(encoding: string): ValidationError {
  return new ValidationError(
    'objects.encoding_unsupported',
    `object encoding ${JSON.stringify(encoding.slice(0, 32))} is not supported (only gzip)`,
  );
}
