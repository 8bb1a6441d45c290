import { IdentityConflictError } from '../../domain/errors.js';
import {
  assertInvocationId,
  assertOwner,
  assertStagingRef,
  assertTableRef,
  classifyRetirement,
  markerMatches,
  ownerMarker,
  publicationLockOf,
  receiptOfRecord as toReceipt,
  TARGET_CUT_POINTS,
  type ReceiptRecord,
} from '../../domain/delivery/target-rules.js';
import { TargetObjectMissingError, TargetUnobservableError } from '../../domain/delivery/target-errors.js';
import type { PublicationReceipt, StagingRef, TableRef } from '../../domain/delivery/target-types.js';
import type { CreateStagingRequest, DropOptions, DropResult, StagingCreated } from '../../ports/target.js';
import { advisoryLock, lookup, type Client } from './locks.js';
import { attachedPartitionOf } from './partition-swap.js';
import { ABSENCE_PROOF, FORMAT_COMMENT, QUOTED_CHUNK, quoteTable, RECEIPT_COLUMNS } from './sql.js';
import type { PgTransactions } from './transactions.js';

/**
 * A stage's life on the target: created once under an advisory lock (CREATE TABLE AS the
 * target's columns, the chunk column and its index, the owner marker as a comment),
 * dropped only when it is exactly ours and not published, and the catalog proofs both
 * lean on (the receipt as a transaction sees it; whether an absence is provable).
 */

export async function createStagingIn(tx: PgTransactions, request: CreateStagingRequest): Promise<StagingCreated> {
  assertInvocationId(request.invocationId);
  assertOwner(request.ownerBinding);
  assertTableRef(request.staging, 'staging');
  assertTableRef(request.likeTable, 'like table');
  const identity = { invocationId: request.invocationId, owner: request.ownerBinding };
  return tx.run<StagingCreated>({ cutPoint: TARGET_CUT_POINTS.createStaging }, async (client) => {
    await advisoryLock(client, `cutpoint.stage:${request.staging.schema}.${request.staging.table}`);
    const existing = await lookup(client, request.staging);
    if (existing) {
      if (!markerMatches(existing.marker, identity)) {
        throw new IdentityConflictError(
          'delivery.staging_identity_conflict',
          `${request.staging.schema}.${request.staging.table} exists and is not this invocation's stage`,
        );
      }
      return {
        commit: false,
        value: { table: request.staging, objectId: existing.objectId, ...identity, created: false },
      };
    }
    const like = await lookup(client, request.likeTable);
    if (!like) throw new TargetObjectMissingError(`table ${request.likeTable.schema}.${request.likeTable.table}`);
    const stage = quoteTable(request.staging);
    // CREATE TABLE AS copies column names and types but no NOT NULL, default or constraint:
    // the stage accepts whatever arrives, and the quality probes report it.
    await client.query(`CREATE TABLE ${stage} AS SELECT l.* FROM ${quoteTable(request.likeTable)} l WITH NO DATA`);
    await client.query(`ALTER TABLE ${stage} ADD COLUMN ${QUOTED_CHUNK} integer NOT NULL`);
    // A chunk's re-load deletes by seq and a part's observation reads a seq range: both
    // are index range scans, never a scan of the whole stage.
    await client.query(`CREATE INDEX ON ${stage} (${QUOTED_CHUNK})`);
    const comment = await client.query<{ statement: string }>(FORMAT_COMMENT, [
      request.staging.schema,
      request.staging.table,
      ownerMarker(request.invocationId, request.ownerBinding),
    ]);
    await client.query(comment.rows[0]!.statement);
    const created = await lookup(client, request.staging);
    if (!created)
      throw new TargetObjectMissingError(`created stage ${request.staging.schema}.${request.staging.table}`);
    return {
      commit: true,
      value: { table: request.staging, objectId: created.objectId, ...identity, created: true },
    };
  });
}

export async function dropStagingIn(
  tx: PgTransactions,
  receipts: TableRef,
  staging: StagingRef,
  options: DropOptions,
): Promise<DropResult> {
  assertStagingRef(staging);
  let receipt: PublicationReceipt | undefined;
  let partition: TableRef | undefined;
  const outcome = await tx.run<'DROPPED' | 'ALREADY_ABSENT' | 'NOT_OURS' | 'PUBLISHED' | 'ATTACHED'>(
    { cutPoint: TARGET_CUT_POINTS.dropStaging },
    async (client) => {
      await advisoryLock(client, `cutpoint.retire:${staging.table.schema}.${staging.table.table}`);
      // Serialized with every publication of the invocation (publishBody takes the same
      // lock first); READ COMMITTED gives the next statement a snapshot taken after it.
      await advisoryLock(client, publicationLockOf(staging.invocationId));
      if (options.unlessPublished) {
        receipt = await receiptIn(client, receipts, staging.invocationId);
        if (receipt) return { commit: false, value: 'PUBLISHED' };
      }
      const before = await lookup(client, staging.table);
      if (!before) {
        // Gone from its name: maybe swapped in as the receipt's partition (published data, never dropped).
        partition = await attachedPartitionOf(client, staging.objectId, staging.invocationId, () =>
          receiptIn(client, receipts, staging.invocationId),
        );
        return { commit: false, value: partition ? 'ATTACHED' : 'ALREADY_ABSENT' };
      }
      if (before.objectId !== staging.objectId || !markerMatches(before.marker, staging))
        return { commit: false, value: 'NOT_OURS' };
      await client.query(`LOCK TABLE ${quoteTable(staging.table)} IN ACCESS EXCLUSIVE MODE`);
      const locked = await lookup(client, staging.table);
      if (!locked || locked.objectId !== staging.objectId || !markerMatches(locked.marker, staging)) {
        return { commit: false, value: 'NOT_OURS' };
      }
      await client.query(`DROP TABLE ${quoteTable(staging.table)}`);
      return { commit: true, value: 'DROPPED' };
    },
  );
  const proof = await tx.run({ readOnly: true }, async (client) => ({
    commit: false,
    value: await absenceProof(client, staging.table.schema, staging.objectId),
  }));
  return {
    status: classifyRetirement(outcome, proof),
    dropped: outcome === 'DROPPED',
    ...(receipt ? { receipt } : {}),
    ...(partition ? { partition } : {}),
  };
}

/** The receipt as this transaction sees it; a receipt table the principal cannot see is unobservable. */
export async function receiptIn(
  client: Client,
  receipts: TableRef,
  invocationId: string,
): Promise<PublicationReceipt | undefined> {
  const table = await lookup(client, receipts);
  if (!table) {
    const proof = await absenceProof(client, receipts.schema, '0');
    if (!proof.metadataVisible) {
      throw new TargetUnobservableError(
        'the receipt table is not visible to this principal: absence of a receipt cannot be proved',
      );
    }
    return undefined;
  }
  const result = await client.query<ReceiptRecord>(
    `SELECT ${RECEIPT_COLUMNS} FROM ${quoteTable(receipts)} AS r WHERE invocation_id = $1`,
    [invocationId],
  );
  const row = result.rows[0];
  return row ? toReceipt(row) : undefined;
}

export async function absenceProof(
  client: Client,
  schema: string,
  objectId: string,
): Promise<{ metadataVisible: boolean; exactObjectExists: boolean }> {
  const result = await client.query<{
    catalog_readable: boolean;
    namespace_readable: boolean;
    schema_usage: boolean | null;
    exact_exists: boolean;
  }>(ABSENCE_PROOF, [schema, objectId]);
  const row = result.rows[0];
  if (!row) return { metadataVisible: false, exactObjectExists: false };
  // schema_usage is NULL when the schema does not exist: then readable catalogs prove it.
  const schemaVisible = row.schema_usage === null ? row.namespace_readable : row.schema_usage;
  return { metadataVisible: row.catalog_readable && schemaVisible, exactObjectExists: row.exact_exists };
}
