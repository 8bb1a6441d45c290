import { sha256Hex } from '../domain/digest.js';
import { LOCAL_CUT_POINTS } from './cut-points.js';
import type { ObjectStore } from '../ports/objects.js';
import { MapRunError } from './distributed-map-spec.js';

/**
 * The Map Run's S3 effects, through the object store port (the same bucket the flow's steps
 * use): ItemReader `s3:getObject` (InputType JSON) and ResultWriter `s3:putObject`, in the
 * shapes AWS reads and writes. A Bucket other than the store's is refused (locally there is
 * no other bucket to read or write).
 */

/** The ResultWriter's effect, a named cut point like every effect (armable in tests through the FaultSwitch). */
export const RESULT_WRITE_CUT_POINT = LOCAL_CUT_POINTS.mapRunResultWrite;

/** A child execution as AWS records it (ResultWriter's `NONE` transformation). */
export interface ChildRecord {
  ExecutionArn: string;
  Name: string;
  StateMachineArn: string;
  Status: 'SUCCEEDED' | 'FAILED';
  StartDate: string;
  StopDate: string;
  Input: string;
  InputDetails: { Included: true };
  Output?: string;
  OutputDetails?: { Included: true };
  Error?: string;
  Cause?: string;
}

function bucketOf(objects: ObjectStore): string | undefined {
  return /^\/s3\/([^/]+)$/.exec(objects.location)?.[1];
}

function checkBucket(
  objects: ObjectStore,
  bucket: unknown,
  name: 'States.ItemReaderFailed' | 'States.ResultWriterFailed',
  where: string,
): void {
  const own = bucketOf(objects);
  if (typeof bucket !== 'string' || bucket !== own) {
    throw new MapRunError(
      name,
      `${where}: bucket ${JSON.stringify(bucket)} is not the object store's bucket${own ? ` (${own})` : ''}`,
    );
  }
}

/** ItemReader s3:getObject, InputType JSON: the object must hold a JSON array. */
export async function readItems(
  objects: ObjectStore,
  state: string,
  parameters: { Bucket?: unknown; Key?: unknown },
): Promise<unknown[]> {
  const where = `Map state ${state}: ItemReader`;
  checkBucket(objects, parameters.Bucket, 'States.ItemReaderFailed', where);
  if (typeof parameters.Key !== 'string' || parameters.Key === '')
    throw new MapRunError(
      'States.ItemReaderFailed',
      `${where}: Key ${JSON.stringify(parameters.Key)} is not an object key`,
    );
  let stored;
  try {
    stored = await objects.get(parameters.Key);
  } catch (error) {
    throw new MapRunError(
      'States.ItemReaderFailed',
      `${where}: reading ${parameters.Key} failed: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (!stored)
    throw new MapRunError(
      'States.ItemReaderFailed',
      `${where}: no object ${parameters.Key} in ${String(parameters.Bucket)}`,
    );
  let items: unknown;
  try {
    items = JSON.parse(Buffer.from(stored.bytes).toString('utf8'));
  } catch (error) {
    throw new MapRunError('States.ItemReaderFailed', `${where}: ${parameters.Key} is not JSON`, { cause: error });
  }
  if (!Array.isArray(items))
    throw new MapRunError('States.ItemReaderFailed', `${where}: ${parameters.Key} holds JSON that is not an array`);
  return items;
}

export interface ResultWriterDetails {
  MapRunArn: string;
  ResultWriterDetails: { Bucket: string; Key: string };
}

/**
 * ResultWriter s3:putObject: `<Prefix>/<map run id>/SUCCEEDED_0.json` and `FAILED_0.json`
 * (JSON arrays of child records, written when non-empty), then `manifest.json` listing
 * them. Returns what the Map state outputs instead of the child results.
 */
export async function writeResults(
  objects: ObjectStore,
  state: string,
  parameters: { Bucket?: unknown; Prefix?: unknown },
  mapRunArn: string,
  records: ChildRecord[],
): Promise<ResultWriterDetails> {
  const where = `Map state ${state}: ResultWriter`;
  checkBucket(objects, parameters.Bucket, 'States.ResultWriterFailed', where);
  const bucket = parameters.Bucket as string;
  if (parameters.Prefix !== undefined && typeof parameters.Prefix !== 'string') {
    throw new MapRunError(
      'States.ResultWriterFailed',
      `${where}: Prefix ${JSON.stringify(parameters.Prefix)} is not a string`,
    );
  }
  const prefix = (parameters.Prefix ?? '').replace(/\/+$/, '');
  const runId = mapRunArn.slice(mapRunArn.lastIndexOf(':') + 1);
  const base = prefix ? `${prefix}/${runId}` : runId;
  const files: Record<'SUCCEEDED' | 'FAILED' | 'PENDING', Array<{ Key: string; Size: number }>> = {
    FAILED: [],
    PENDING: [],
    SUCCEEDED: [],
  };
  for (const status of ['SUCCEEDED', 'FAILED'] as const) {
    const group = records.filter((r) => r.Status === status);
    if (group.length === 0) continue;
    const key = `${base}/${status}_0.json`;
    const size = await putJson(objects, where, key, group);
    files[status].push({ Key: key, Size: size });
  }
  const manifestKey = `${base}/manifest.json`;
  await putJson(objects, where, manifestKey, { DestinationBucket: bucket, MapRunArn: mapRunArn, ResultFiles: files });
  return { MapRunArn: mapRunArn, ResultWriterDetails: { Bucket: bucket, Key: manifestKey } };
}

/** Writes once; an EXISTS or UNKNOWN outcome is settled by reading the exact key back. */
async function putJson(objects: ObjectStore, where: string, key: string, value: unknown): Promise<number> {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  try {
    const outcome = await objects.put(RESULT_WRITE_CUT_POINT, key, bytes, { sha256: sha256Hex(bytes) });
    if (outcome.status !== 'APPLIED') {
      const stored = await objects.get(key);
      if (!stored || sha256Hex(stored.bytes) !== sha256Hex(bytes))
        throw new Error(`put ${key} was ${outcome.status} and the key does not hold these results`);
    }
  } catch (error) {
    throw new MapRunError('States.ResultWriterFailed', `${where}: ${(error as Error).message}`, { cause: error });
  }
  return bytes.byteLength;
}
