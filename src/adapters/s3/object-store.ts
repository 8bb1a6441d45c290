import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { CutpointError, EffectFailedError, ObjectMissingError, OutcomeUnknownError } from '../../domain/errors.js';
import type { FaultInjector } from '../../ports/faults.js';
import type { RequestMeter } from '../request-meter.js';
import type {
  ObjectDeleteOutcome,
  ObjectHead,
  ObjectPutOutcome,
  ObjectStore,
  StoredObject,
} from '../../ports/objects.js';

export interface S3ObjectStoreOptions {
  bucket: string;
  client: S3Client;
  faults: FaultInjector;
  meter?: RequestMeter;
}

/** S3 DeleteObjects takes at most 1,000 keys a request. */
const MAX_DELETE_KEYS = 1000;

/** Object generations over S3: immutable keys, SHA-256 in metadata, effects at cut points. */
export class S3ObjectStore implements ObjectStore {
  readonly location: string;

  constructor(private readonly options: S3ObjectStoreOptions) {
    this.location = `/s3/${options.bucket}`;
  }

  put(cutPoint: string, key: string, bytes: Uint8Array, metadata: Record<string, string>): Promise<ObjectPutOutcome> {
    this.options.meter?.count('s3', 'PutObject');
    return this.createOnly(cutPoint, () =>
      this.options.client.send(
        new PutObjectCommand({
          Bucket: this.options.bucket,
          Key: key,
          Body: bytes,
          ContentLength: bytes.byteLength,
          Metadata: metadata,
          IfNoneMatch: '*',
        }),
      ),
    );
  }

  /**
   * CopyObject with the metadata replaced and `If-None-Match: *` on the target (S3 enforces
   * it on CopyObject: 412, or 409 for a concurrent one → EXISTS). A missing source is
   * ObjectMissing (nothing was copied).
   */
  copy(
    cutPoint: string,
    sourceKey: string,
    targetKey: string,
    metadata: Record<string, string>,
  ): Promise<ObjectPutOutcome> {
    this.options.meter?.count('s3', 'CopyObject');
    const source = `${this.options.bucket}/${sourceKey.split('/').map(encodeURIComponent).join('/')}`;
    const send = () =>
      this.options.client.send(
        new CopyObjectCommand({
          Bucket: this.options.bucket,
          Key: targetKey,
          CopySource: source,
          MetadataDirective: 'REPLACE',
          Metadata: metadata,
          IfNoneMatch: '*',
        }),
      );
    return this.createOnly(cutPoint, send, sourceKey);
  }

  /** A create-only write at its cut point: 412/409 is EXISTS; a lost answer UNKNOWN; a missing copy source ObjectMissing. */
  private async createOnly(
    cutPoint: string,
    send: () => Promise<unknown>,
    copySource?: string,
  ): Promise<ObjectPutOutcome> {
    try {
      await this.options.faults.at(cutPoint, send);
      return { status: 'APPLIED' };
    } catch (error) {
      const status = httpStatus(error);
      if (status === 412 || status === 409) return { status: 'EXISTS' };
      if (copySource !== undefined && isAbsent(error)) throw new ObjectMissingError(copySource);
      return this.unknownOrThrow(cutPoint, error);
    }
  }

  async head(key: string): Promise<ObjectHead | undefined> {
    this.options.meter?.count('s3', 'HeadObject');
    try {
      const out = await this.options.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: key }));
      return { key, size: out.ContentLength ?? 0, metadata: out.Metadata ?? {} };
    } catch (error) {
      if (isAbsent(error)) return undefined;
      throw error;
    }
  }

  async get(key: string, cutPoint?: string): Promise<StoredObject | undefined> {
    this.options.meter?.count('s3', 'GetObject');
    const read = async (): Promise<StoredObject> => {
      const out = await this.options.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }));
      const bytes = out.Body ? await out.Body.transformToByteArray() : new Uint8Array();
      return { key, size: bytes.byteLength, metadata: out.Metadata ?? {}, bytes };
    };
    try {
      return await (cutPoint ? this.options.faults.at(cutPoint, read) : read());
    } catch (error) {
      if (isAbsent(error)) return undefined;
      throw error;
    }
  }

  async delete(cutPoint: string, key: string): Promise<ObjectDeleteOutcome> {
    this.options.meter?.count('s3', 'DeleteObject');
    try {
      await this.options.faults.at(cutPoint, () =>
        this.options.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: key })),
      );
      return { status: 'APPLIED' };
    } catch (error) {
      return this.unknownOrThrow(cutPoint, error);
    }
  }

  async deleteMany(cutPoint: string, keys: readonly string[]): Promise<ObjectDeleteOutcome> {
    if (keys.length === 0) return { status: 'APPLIED' };
    if (keys.length > MAX_DELETE_KEYS)
      throw new RangeError(`deleteMany takes at most ${MAX_DELETE_KEYS} keys, not ${keys.length}`);
    this.options.meter?.count('s3', 'DeleteObjects');
    try {
      const out = await this.options.faults.at(cutPoint, () =>
        this.options.client.send(
          new DeleteObjectsCommand({
            Bucket: this.options.bucket,
            Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
          }),
        ),
      );
      const refused = out.Errors ?? [];
      if (refused.length > 0) {
        const codes = [...new Set(refused.map((e) => e.Code ?? 'unknown'))].join(', ');
        throw new EffectFailedError(
          cutPoint,
          `${cutPoint}: S3 refused to delete ${refused.length} of ${keys.length} objects (${codes})`,
        );
      }
      return { status: 'APPLIED' };
    } catch (error) {
      return this.unknownOrThrow(cutPoint, error);
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      this.options.meter?.count('s3', 'ListObjectsV2');
      const out = await this.options.client.send(
        new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const entry of out.Contents ?? []) if (entry.Key) keys.push(entry.Key);
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  async listPage(
    prefix: string,
    options: { startAfter?: string; limit: number },
  ): Promise<{ objects: Array<{ key: string; size: number }>; more: boolean }> {
    this.options.meter?.count('s3', 'ListObjectsV2');
    const out = await this.options.client.send(
      new ListObjectsV2Command({
        Bucket: this.options.bucket,
        Prefix: prefix,
        StartAfter: options.startAfter,
        MaxKeys: options.limit,
      }),
    );
    const objects = (out.Contents ?? []).flatMap((e) => (e.Key ? [{ key: e.Key, size: e.Size ?? 0 }] : []));
    return { objects, more: out.IsTruncated === true };
  }

  /** Timeouts, resets and 5xx may have applied: UNKNOWN. A 4xx proves nothing happened. */
  private unknownOrThrow(cutPoint: string, error: unknown): { status: 'UNKNOWN'; reason: string } {
    if (error instanceof OutcomeUnknownError) return { status: 'UNKNOWN', reason: error.message };
    if (error instanceof CutpointError) throw error;
    const status = httpStatus(error);
    if (status !== undefined && status >= 400 && status < 500) {
      throw new EffectFailedError(cutPoint, `${cutPoint}: S3 refused with HTTP ${status}`, { cause: error });
    }
    return { status: 'UNKNOWN', reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

function httpStatus(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

function isAbsent(error: unknown): boolean {
  const name = (error as { name?: string } | undefined)?.name;
  return name === 'NotFound' || name === 'NoSuchKey' || httpStatus(error) === 404;
}
