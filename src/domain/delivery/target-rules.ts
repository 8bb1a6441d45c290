// Over ~300 lines since the formatter wrapped it at 120 columns (288 lines before), kept whole:
// one job: the pure rules every target adapter shares (identifiers, windows, owner markers,
// receipt checks), so both SQL adapters cite one place.
import { createHash } from 'node:crypto';
import type {
  ChunkReceipt,
  DropStatus,
  PublicationReceipt,
  PublishRequest,
  SeqRange,
  StagingFactsRequest,
  StagingRef,
  TableRef,
  TargetRow,
  TimeWindow,
} from './target-types.js';
import { canonicalJson } from '../digest.js';
import { ValidationError } from '../errors.js';

/**
 * The pure parts of the delivery target's contract (src/ports/target.ts) that every adapter
 * shares: cut points and reserved names, identifier and request checks, the stage's owner
 * marker, chunk and publication digests, receipt matching. No I/O.
 */

export const TARGET_CUT_POINTS = {
  createStaging: 'delivery.target.create-staging',
  loadChunk: 'delivery.target.load-chunk',
  publishCommit: 'delivery.publish.commit',
  dropStaging: 'delivery.target.drop-staging',
} as const;

/** The adapter's bookkeeping column in every stage: the chunk seq of each row. */
export const CHUNK_COLUMN = '_cutpoint_seq';
/** Name of the receipt table when the adapter is not told otherwise. */
export const RECEIPT_TABLE = 'cutpoint_receipts';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** PostgreSQL's limit (NAMEDATALEN - 1); SQL Server allows 128, the contract uses the smaller. */
export const MAX_IDENTIFIER_LENGTH = 63;

/**
 * Letters, digits and underscore, not starting with a digit, at most 63 characters. The
 * adapters quote every identifier anyway; this refuses anything that would need escaping.
 */
export function assertIdentifier(name: string, what = 'identifier'): string {
  if (typeof name !== 'string' || name.length > MAX_IDENTIFIER_LENGTH || !IDENTIFIER.test(name)) {
    throw new ValidationError(
      'delivery.invalid_identifier',
      `invalid ${what} ${JSON.stringify(String(name).slice(0, 80))}: expected [A-Za-z_][A-Za-z0-9_]* of at most ${MAX_IDENTIFIER_LENGTH} characters`,
    );
  }
  return name;
}

export function assertTableRef(ref: TableRef, what = 'table'): TableRef {
  assertIdentifier(ref.schema, `${what} schema`);
  assertIdentifier(ref.table, `${what} name`);
  return ref;
}

/** User columns may not use the adapter's reserved prefix. */
export function assertUserColumn(name: string): string {
  assertIdentifier(name, 'column');
  if (name.toLowerCase().startsWith('_cutpoint')) {
    throw new ValidationError('delivery.invalid_identifier', `column ${name} uses the reserved _cutpoint prefix`);
  }
  return name;
}

export function assertColumns(columns: readonly string[], what = 'columns'): string[] {
  if (columns.length === 0)
    throw new ValidationError('delivery.invalid_request', `${what}: at least one column is required`);
  const seen = new Set<string>();
  for (const c of columns) {
    assertUserColumn(c);
    if (seen.has(c)) throw new ValidationError('delivery.invalid_request', `${what}: column ${c} is listed twice`);
    seen.add(c);
  }
  return [...columns];
}

export function assertWindow(window: TimeWindow): void {
  const { start, end } = window;
  if (
    !(start instanceof Date) ||
    !(end instanceof Date) ||
    Number.isNaN(start.getTime()) ||
    Number.isNaN(end.getTime())
  ) {
    throw new ValidationError('delivery.invalid_window', 'window bounds must be valid Dates');
  }
  if (start.getTime() >= end.getTime())
    throw new ValidationError('delivery.invalid_window', 'window start must be before its end');
}

export function assertSeq(seq: number): void {
  if (!Number.isSafeInteger(seq) || seq < 0 || seq > 2_147_483_647) {
    throw new ValidationError('delivery.invalid_request', `chunk seq must be an integer in [0, 2^31): ${String(seq)}`);
  }
}

const MARKER_KIND = 'cutpoint.staging.v1';

/**
 * The owner marker stored on the stage itself: canonical JSON of the invocation and the
 * owner binding. Rechecks compare the parsed marker, never a "similar" object.
 */
export function ownerMarker(invocationId: string, owner: string): string {
  return canonicalJson({ kind: MARKER_KIND, invocationId, owner });
}

export function parseOwnerMarker(text: string | null | undefined): { invocationId: string; owner: string } | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const value = JSON.parse(text) as { kind?: unknown; invocationId?: unknown; owner?: unknown };
    if (value.kind !== MARKER_KIND || typeof value.invocationId !== 'string' || typeof value.owner !== 'string')
      return undefined;
    return { invocationId: value.invocationId, owner: value.owner };
  } catch {
    return undefined;
  }
}

/** The lock resource every publication of an invocation takes, and a retirement's drop too. */
export function publicationLockOf(invocationId: string): string {
  return `cutpoint.publish:${invocationId}`;
}

export function markerMatches(
  text: string | null | undefined,
  staging: Pick<StagingRef, 'invocationId' | 'owner'>,
): boolean {
  const marker = parseOwnerMarker(text);
  return marker !== undefined && marker.invocationId === staging.invocationId && marker.owner === staging.owner;
}

/** One row as digest input: JSON of the values in column order, Dates as ISO-8601. */
function rowDigestLine(columns: readonly string[], row: TargetRow): string {
  return canonicalJson(columns.map((c) => digestValue(row[c]))) + '\n';
}

function digestValue(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (value instanceof Date) return { date: value.toISOString() };
  if (typeof value === 'bigint') return { bigint: value.toString() };
  if (value instanceof Uint8Array) return { bytes: Buffer.from(value).toString('base64') };
  return value;
}

/** Incremental SHA-256 over a chunk's rows, as adapters compute it while loading. */
export class ChunkDigest {
  private readonly hash = createHash('sha256');
  private count = 0;
  constructor(private readonly columns: readonly string[]) {
    this.hash.update(canonicalJson(columns) + '\n');
  }
  add(row: TargetRow): void {
    this.hash.update(rowDigestLine(this.columns, row));
    this.count++;
  }
  get rows(): number {
    return this.count;
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}

/** The digest a chunk receipt carries for these rows (same as an adapter computes). */
export function chunkDigest(columns: readonly string[], rows: Iterable<TargetRow>): string {
  const d = new ChunkDigest(columns);
  for (const row of rows) d.add(row);
  return d.digest();
}

/** The load digest a publication records: over the chunk receipts in seq order. */
export function publicationDigest(receipts: readonly ChunkReceipt[]): string {
  const sorted = [...receipts].sort((a, b) => a.seq - b.seq);
  return createHash('sha256')
    .update(canonicalJson(sorted.map((r) => [r.seq, r.rows, r.digest])))
    .digest('hex');
}

/**
 * What the retirement observed, and what it may conclude. `visible` is whether the
 * principal can see the schema's metadata (so an absent object is really absent).
 */
export function classifyRetirement(
  outcome: 'DROPPED' | 'ALREADY_ABSENT' | 'NOT_OURS' | 'PUBLISHED' | 'ATTACHED',
  proof: { metadataVisible: boolean; exactObjectExists: boolean },
): DropStatus {
  // ATTACHED is a positive proof (the exact object found as the receipt's partition), not an absence.
  if (outcome === 'NOT_OURS' || outcome === 'PUBLISHED' || outcome === 'ATTACHED') return outcome;
  if (!proof.metadataVisible || proof.exactObjectExists) return 'ABSENCE_UNPROVABLE';
  return 'ABSENT_PROVED';
}

/** The receipt's identity must match the request exactly; anything else is a conflict. */
export function receiptMatches(receipt: PublicationReceipt, request: PublishRequest): boolean {
  return (
    receipt.invocationId === request.invocationId &&
    receipt.target.schema === request.target.schema &&
    receipt.target.table === request.target.table &&
    receipt.mode === request.mode &&
    receipt.window.start.getTime() === request.window.start.getTime() &&
    receipt.window.end.getTime() === request.window.end.getTime() &&
    receipt.rows === request.rows &&
    receipt.digest === request.digest
  );
}

/** Validates a publish request's shape before any I/O. */
export function assertPublishRequest(request: PublishRequest): void {
  if (
    typeof request.invocationId !== 'string' ||
    request.invocationId.length === 0 ||
    request.invocationId.length > 200
  ) {
    throw new ValidationError('delivery.invalid_request', 'invocationId must be 1..200 characters');
  }
  assertTableRef(request.target, 'target');
  assertTableRef(request.staging.table, 'staging');
  assertWindow(request.window);
  if (request.mode !== 'replace_window' && request.mode !== 'merge') {
    throw new ValidationError('delivery.invalid_request', `unknown publish mode ${String(request.mode)}`);
  }
  if (request.mode === 'merge') assertColumns(request.keyColumns, 'keyColumns');
  assertUserColumn(request.timeColumn);
  if (!Number.isSafeInteger(request.rows) || request.rows < 0) {
    throw new ValidationError('delivery.invalid_request', 'rows must be a non-negative integer');
  }
  if (typeof request.digest !== 'string' || !/^[0-9a-f]{64}$/.test(request.digest)) {
    throw new ValidationError('delivery.invalid_request', 'digest must be 64 lower-case hex characters');
  }
}

export function assertInvocationId(id: string): void {
  if (typeof id !== 'string' || id.length === 0 || id.length > 200) {
    throw new ValidationError('delivery.invalid_request', 'invocationId must be 1..200 characters');
  }
}

export function assertOwner(owner: string): void {
  if (typeof owner !== 'string' || owner.length === 0 || owner.length > 512) {
    throw new ValidationError('delivery.invalid_request', 'ownerBinding must be 1..512 characters');
  }
}

export function assertStagingRef(staging: StagingRef): void {
  assertTableRef(staging.table, 'staging');
  assertInvocationId(staging.invocationId);
  assertOwner(staging.owner);
  if (typeof staging.objectId !== 'string' || !/^\d{1,10}$/.test(staging.objectId)) {
    throw new ValidationError('delivery.invalid_request', 'staging objectId must be a decimal object id');
  }
}

/** Iterates rows given as an array, an iterable or an async iterable. */
export async function* eachRow(rows: AsyncIterable<TargetRow> | Iterable<TargetRow>): AsyncGenerator<TargetRow> {
  for await (const row of rows as AsyncIterable<TargetRow>) yield row;
}

/** A publication receipt row as both adapters select it (snake_case columns; the count as text or number). */
export interface ReceiptRecord {
  invocation_id: string;
  target_schema: string;
  target_table: string;
  mode: string;
  window_start: Date;
  window_end: Date;
  row_count: string | number;
  digest: string;
  staging_object_id: string;
  published_at: Date;
  /** Null on receipts written before the method was recorded. */
  method?: string | null;
}

/** The receipt row as the port returns it. */
export function receiptOfRecord(row: ReceiptRecord): PublicationReceipt {
  return {
    invocationId: row.invocation_id,
    target: { schema: row.target_schema, table: row.target_table },
    mode: row.mode as PublicationReceipt['mode'],
    window: { start: new Date(row.window_start), end: new Date(row.window_end) },
    rows: Number(row.row_count),
    digest: row.digest,
    stagingObjectId: row.staging_object_id,
    publishedAt: new Date(row.published_at),
    ...(row.method === 'partition_swap' || row.method === 'set_based' ? { method: row.method } : {}),
  };
}

/** A part's seqs [from, to): integers 0 <= from <= to <= 2^31 (`observeChunks`' range). */
export function assertSeqRange(range: SeqRange): void {
  const ok = (n: number) => Number.isSafeInteger(n) && n >= 0 && n <= 2 ** 31;
  if (!ok(range.from) || !ok(range.to) || range.from > range.to) {
    throw new ValidationError(
      'delivery.invalid_request',
      `chunk seq range must be integers 0 <= from <= to <= 2^31: [${String(range.from)}, ${String(range.to)})`,
    );
  }
}

/** A quality request's part range, checked: with a range, no assertions (they are SQL over the whole stage). */
export function factsRange(facts: StagingFactsRequest): SeqRange | undefined {
  if (facts.range === undefined) return undefined;
  assertSeqRange(facts.range);
  if (facts.assertions.length > 0)
    throw new ValidationError(
      'delivery.invalid_request',
      'quality assertions run over the whole stage, never over a part range',
    );
  return facts.range;
}

/** A quality assertion's scalar as `StagingFacts` reports it: numbers as numbers (exact ones only), anything else as text, NULL as null. */
export function scalarOf(value: unknown): number | string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  const text = value instanceof Date ? value.toISOString() : String(value);
  if (
    /^-?\d+(\.\d+)?$/.test(text) &&
    Number.isFinite(Number(text)) &&
    Math.abs(Number(text)) <= Number.MAX_SAFE_INTEGER
  )
    return Number(text);
  return text;
}
