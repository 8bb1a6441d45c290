import { createHash } from 'node:crypto';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { refusal, type ConformanceCase } from './case.js';
import type { ConformanceTarget } from './target.js';

/** The S3 behaviours the object store (src/adapters/s3/object-store.ts) is built on. */

const DOCS = 'https://docs.aws.amazon.com/AmazonS3/latest';
const put = (
  t: ConformanceTarget,
  key: string,
  body: string,
  condition: { IfNoneMatch?: string; IfMatch?: string } = {},
) => t.s3.send(new PutObjectCommand({ Bucket: t.bucket, Key: key, Body: body, ...condition }));

export const S3_CASES: readonly ConformanceCase[] = [
  {
    name: 's3: PutObject If-None-Match * on an existing key is 412 PreconditionFailed, the object unchanged',
    reliedOnBy: 'src/adapters/s3/object-store.ts put (create-only: EXISTS)',
    documented: `${DOCS}/userguide/conditional-writes.html`,
    expect: { refused: { name: 'PreconditionFailed', status: 412 }, body: 'first' },
    async run(t, key) {
      await put(t, key, 'first', { IfNoneMatch: '*' });
      const refused = await refusal(put(t, key, 'second', { IfNoneMatch: '*' }));
      const body = await (
        await t.s3.send(new GetObjectCommand({ Bucket: t.bucket, Key: key }))
      ).Body!.transformToString();
      return { refused, body };
    },
  },
  {
    name: 's3: CopyObject If-None-Match * onto an existing key is 412 PreconditionFailed',
    reliedOnBy: 'src/adapters/s3/object-store.ts copy (create-only: EXISTS)',
    documented: `${DOCS}/API/API_CopyObject.html`,
    expect: { name: 'PreconditionFailed', status: 412 },
    async run(t, key) {
      await put(t, `${key}/src`, 'source');
      await put(t, `${key}/dst`, 'there');
      return refusal(
        t.s3.send(
          new CopyObjectCommand({
            Bucket: t.bucket,
            Key: `${key}/dst`,
            CopySource: `${t.bucket}/${key}/src`,
            IfNoneMatch: '*',
          }),
        ),
      );
    },
  },
  {
    name: 's3: PutObject If-Match with a stale ETag is 412; with the current one it replaces',
    reliedOnBy: 'none yet (the code writes create-only); kept because a compare-and-swap on an object would lean on it',
    documented: `${DOCS}/userguide/conditional-writes.html`,
    expect: { stale: { name: 'PreconditionFailed', status: 412 }, current: 'accepted' },
    emulator: {
      observed: { stale: 'accepted', current: 'accepted' },
      note: 'The S3 emulator ignores If-Match on PutObject (it replaces on a stale ETag). The code never sends If-Match: every object write is create-only (If-None-Match *).',
    },
    async run(t, key) {
      const first = await put(t, key, 'one');
      await put(t, key, 'two');
      const stale = await refusal(put(t, key, 'three', { IfMatch: first.ETag! }));
      const head = await t.s3.send(new HeadObjectCommand({ Bucket: t.bucket, Key: key }));
      return { stale, current: await refusal(put(t, key, 'four', { IfMatch: head.ETag! })) };
    },
  },
  {
    name: 's3: the ETag of a single PUT is the quoted MD5 of its bytes',
    reliedOnBy: 'src/adapters/s3/object-store.ts (an object is identified by its own sha256 metadata, never the ETag)',
    documented: `${DOCS}/API/API_Object.html`,
    expect: true,
    async run(t, key) {
      const out = await put(t, key, 'etag bytes');
      return out.ETag === `"${createHash('md5').update('etag bytes').digest('hex')}"`;
    },
  },
  {
    name: 's3: a PUT is listed and read at once (strong read-after-write and list-after-write)',
    reliedOnBy: 'src/stream/ GC and src/delivery/expiry/ (a list names every object written before it)',
    documented: `${DOCS}/userguide/Welcome.html#ConsistencyModel`,
    expect: { listed: true, read: 'now' },
    async run(t, key) {
      await put(t, `${key}/a`, 'now');
      const listed = await t.s3.send(new ListObjectsV2Command({ Bucket: t.bucket, Prefix: `${key}/` }));
      const read = await (
        await t.s3.send(new GetObjectCommand({ Bucket: t.bucket, Key: `${key}/a` }))
      ).Body!.transformToString();
      return { listed: (listed.Contents ?? []).some((c) => c.Key === `${key}/a`), read };
    },
  },
  {
    name: 's3: a missing key is NoSuchKey (404) to GetObject and NotFound (404) to HeadObject; deleting it succeeds',
    reliedOnBy: 'src/adapters/s3/object-store.ts get/head (absent, not an error) and delete (idempotent)',
    documented: `${DOCS}/API/API_GetObject.html`,
    expect: {
      get: { name: 'NoSuchKey', status: 404 },
      head: { name: 'NotFound', status: 404 },
      delete: 'accepted',
    },
    async run(t, key) {
      return {
        get: await refusal(t.s3.send(new GetObjectCommand({ Bucket: t.bucket, Key: key }))),
        head: await refusal(t.s3.send(new HeadObjectCommand({ Bucket: t.bucket, Key: key }))),
        delete: await refusal(t.s3.send(new DeleteObjectCommand({ Bucket: t.bucket, Key: key }))),
      };
    },
  },
  {
    name: 's3: user metadata round-trips, its names lower-cased',
    reliedOnBy: 'src/adapters/s3/object-store.ts (sha256 and encoding as object metadata)',
    documented: `${DOCS}/userguide/UsingMetadata.html`,
    expect: { sha256: 'abc', encoding: 'gzip' },
    async run(t, key) {
      await t.s3.send(
        new PutObjectCommand({ Bucket: t.bucket, Key: key, Body: 'm', Metadata: { SHA256: 'abc', encoding: 'gzip' } }),
      );
      const head = await t.s3.send(new HeadObjectCommand({ Bucket: t.bucket, Key: key }));
      return head.Metadata;
    },
  },
];
