import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultSwitch } from '../../src/adapters/fault-injector.js';
import type { LoadChunkRequest, StagingCreated, TargetPort } from '../../src/ports/target.js';
import type { ChunkReceipt, PublishRequest, TableRef, TargetRow } from '../../src/domain/delivery/target-types.js';
import { classifyRetirement, ownerMarker, publicationDigest } from '../../src/domain/delivery/target-rules.js';
import { sha256Hex } from '../../src/domain/digest.js';
import { decodeChunk, encodeChunk } from '../../src/delivery/chunk-codec.js';

/**
 * The one target contract every adapter passes: PostgreSQL always (embedded PGlite), SQL
 * Server when CUTPOINT_MSSQL_URL is set. The suite speaks only the port; everything it
 * needs to set up or inspect a table goes through `TargetAdmin`, which each adapter's test
 * file implements with its own driver and dialect.
 */
export type ContractColumnType = 'int' | 'text' | 'timestamp';

/** Value kinds of the typed-values case, as the source contract spells them (src/ports/source.ts). */
export type TypedKind =
  | 'int'
  | 'bigint'
  | 'decimal'
  | 'double'
  | 'boolean'
  | 'text'
  | 'date'
  | 'timestamp'
  | 'timestamptz'
  | 'json'
  | 'jsonb';

export interface TargetAdmin {
  /** The schema the suite works in (it exists; receipts live there too). */
  schema: string;
  createTable(
    table: string,
    columns: Array<{ name: string; type: ContractColumnType }>,
    primaryKey?: string[],
  ): Promise<TableRef>;
  insert(table: TableRef, rows: TargetRow[]): Promise<void>;
  /** All rows, ordered; int → number, text → string, timestamp → Date. */
  rows(table: TableRef, orderBy: string[]): Promise<TargetRow[]>;
  exists(table: TableRef): Promise<boolean>;
  /** Rewrites the owner marker the adapter keeps on a table (comment / extended property). */
  setMarker(table: TableRef, marker: string): Promise<void>;
  /**
   * A target acting as a principal that cannot see the schema's metadata, when this
   * environment can provide one.
   */
  restricted?: () => Promise<{ target: TargetPort; close(): Promise<void> }>;
  /** The typed-values case, where the engine provides it: its type per kind (kinds it lacks are left out). */
  typed?: {
    types: Partial<Record<TypedKind, string>>;
    createTable(table: string, columns: Array<{ name: string; type: string }>): Promise<TableRef>;
    /** The given columns of every row as the engine renders them as text (NULL as null), ordered. */
    textRows(table: TableRef, columns: string[], orderBy: string[]): Promise<Array<Record<string, string | null>>>;
  };
}

export interface ContractHandle {
  target: TargetPort;
  admin: TargetAdmin;
  /** The injector the target was built with. */
  faults: FaultSwitch;
  close(): Promise<void>;
}

const EVENT_COLUMNS = [
  { name: 'id', type: 'int' },
  { name: 'ts', type: 'timestamp' },
  { name: 'body', type: 'text' },
  { name: 'amount', type: 'int' },
] as const satisfies ReadonlyArray<{ name: string; type: ContractColumnType }>;
const COLUMNS = EVENT_COLUMNS.map((c) => c.name);

const at = (iso: string): Date => new Date(`2024-03-01T${iso}Z`);
const WINDOW = { start: at('10:00:00.000'), end: at('11:00:00.000') };

function event(id: number, ts: Date, body: string, amount: number | null = id * 10): TargetRow {
  return { id, ts, body, amount };
}

/** A row as the source hands it over: times as ISO-8601 text (src/ports/source.ts). */
function sourceRow(row: TargetRow): TargetRow {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v]));
}

/** A load request's chunk: the rows' canonical JSONL bytes (what the chunk object holds), their SHA-256 and count. */
export function chunkOf(
  rows: readonly TargetRow[],
  columns: readonly string[] = COLUMNS,
): Omit<LoadChunkRequest, 'staging' | 'seq'> {
  const jsonl = encodeChunk(rows.map(sourceRow), columns);
  return { columns: [...columns], jsonl, sha256: sha256Hex(jsonl), rows: rows.length };
}

/** A value as the old per-row load bound it: objects and arrays as their JSON text. */
function boundAsBefore(value: unknown): unknown {
  return value !== null && typeof value === 'object' ? JSON.stringify(value) : value;
}

export interface ContractOptions {
  /** Whether `admin.restricted` exists here (default true); without it the live test is not registered. */
  restrictedPrincipal?: boolean;
  /** Whether `admin.typed` exists here (default false); without it the typed-values test is not registered. */
  typedValues?: boolean;
}

export function targetContract(name: string, open: () => Promise<ContractHandle>, options: ContractOptions = {}): void {
  describe(`target contract: ${name}`, () => {
    let h: ContractHandle;
    let target: TargetPort;
    let admin: TargetAdmin;
    let n = 0;
    const unique = (prefix: string): string => `${prefix}_${++n}_${randomUUID().slice(0, 8)}`;

    beforeAll(async () => {
      h = await open();
      target = h.target;
      admin = h.admin;
    });
    afterAll(async () => {
      h.faults.disarm();
      await h.close();
    });

    async function eventsTable(rows: TargetRow[] = []): Promise<TableRef> {
      const table = await admin.createTable(unique('events'), [...EVENT_COLUMNS], ['id']);
      if (rows.length > 0) await admin.insert(table, rows);
      return table;
    }

    async function stage(
      like: TableRef,
      invocationId = `inv-${randomUUID()}`,
      owner = `owner-${randomUUID()}`,
    ): Promise<StagingCreated> {
      return target.createStaging({
        invocationId,
        staging: { schema: admin.schema, table: unique('stg') },
        likeTable: like,
        ownerBinding: owner,
      });
    }

    async function staged(
      like: TableRef,
      chunks: TargetRow[][],
    ): Promise<{ stage: StagingCreated; receipts: ChunkReceipt[] }> {
      const s = await stage(like);
      const receipts: ChunkReceipt[] = [];
      for (const [seq, rows] of chunks.entries())
        receipts.push(await target.loadChunk({ staging: s, seq, ...chunkOf(rows) }));
      return { stage: s, receipts };
    }

    function publishRequest(
      table: TableRef,
      s: StagingCreated,
      receipts: ChunkReceipt[],
      mode: PublishRequest['mode'],
    ): PublishRequest {
      return {
        invocationId: s.invocationId,
        target: table,
        window: WINDOW,
        mode,
        keyColumns: ['id'],
        timeColumn: 'ts',
        staging: s,
        rows: receipts.reduce((sum, r) => sum + r.rows, 0),
        digest: publicationDigest(receipts),
      };
    }

    const allRows = (table: TableRef): Promise<TargetRow[]> => admin.rows(table, ['id']);

    describe('identity', () => {
      it('reports engine, database and principal, the same on every call, and never a credential', async () => {
        const first = await target.identity();
        expect(first).toMatchObject({
          engine: expect.any(String),
          database: expect.any(String),
          principal: expect.any(String),
        });
        expect(await target.identity()).toEqual(first);
        for (const [key, value] of Object.entries(first)) {
          expect(key).not.toMatch(/pass|pwd|secret|token|credential|conn|dsn|url|uri/i);
          expect(String(value)).not.toMatch(/password|:\/\//i);
        }
      });
    });

    describe('the target check (Begin, before custody)', () => {
      it('accepts a user table holding every named column; refuses a missing table, one named in another case, a missing column, the receipts table — read-only', async () => {
        const table = await eventsTable();
        const check = (t: TableRef, columns: string[]) =>
          target.checkTarget({ table: t, columns: columns.map((name) => ({ name, namedBy: 'target.key_columns' })) });
        await expect(check(table, ['id', 'ts', 'amount'])).resolves.toBeUndefined();
        await expect(check({ schema: admin.schema, table: unique('absent') }, ['id'])).rejects.toMatchObject({
          code: 'delivery.target_table_missing',
        });
        await expect(check({ schema: admin.schema, table: table.table.toUpperCase() }, ['id'])).rejects.toMatchObject({
          code: 'delivery.target_table_missing',
          message: expect.stringContaining('differs only in case'),
        });
        await expect(check(table, ['id', 'nosuch'])).rejects.toMatchObject({
          code: 'delivery.target_column_missing',
          message: expect.stringContaining('nosuch'),
        });
        await expect(check(table, ['ID'])).rejects.toMatchObject({ code: 'delivery.target_column_missing' });
        await expect(check({ schema: admin.schema, table: 'cutpoint_receipts' }, ['id'])).rejects.toMatchObject({
          code: 'delivery.target_not_user_table',
        });
        expect(await allRows(table)).toEqual([]);
      });
    });

    describe('staging', () => {
      it('creates the owned stage with the target columns, all nullable, and returns the same object on repeat', async () => {
        const table = await eventsTable();
        const invocationId = `inv-${randomUUID()}`;
        const request = {
          invocationId,
          staging: { schema: admin.schema, table: unique('stg') },
          likeTable: table,
          ownerBinding: 'owner-a',
        };
        const first = await target.createStaging(request);
        expect(first).toMatchObject({ created: true, invocationId, owner: 'owner-a', table: request.staging });
        expect(first.objectId).toMatch(/^\d+$/);
        const again = await target.createStaging(request);
        expect(again).toEqual({ ...first, created: false });
        const described = await target.describeTable(request.staging);
        expect(described.objectId).toBe(first.objectId);
        expect(described.columns.map((c) => c.name)).toEqual(COLUMNS);
        expect(described.columns.every((c) => c.nullable)).toBe(true);
      });

      it('refuses the same name for another owner or invocation (identity conflict)', async () => {
        const table = await eventsTable();
        const s = await stage(table, 'inv-a', 'owner-a');
        const other = { staging: s.table, likeTable: table };
        await expect(
          target.createStaging({ ...other, invocationId: 'inv-a', ownerBinding: 'owner-b' }),
        ).rejects.toMatchObject({
          name: 'Cutpoint.IdentityConflict',
          code: 'delivery.staging_identity_conflict',
        });
        await expect(
          target.createStaging({ ...other, invocationId: 'inv-b', ownerBinding: 'owner-a' }),
        ).rejects.toMatchObject({
          name: 'Cutpoint.IdentityConflict',
        });
        // Nor is a plain table under the name ours.
        const plain = await eventsTable();
        await expect(
          target.createStaging({ staging: plain, likeTable: table, invocationId: 'inv-a', ownerBinding: 'owner-a' }),
        ).rejects.toMatchObject({
          name: 'Cutpoint.IdentityConflict',
        });
      });

      it('lose-response at create-staging: the retry finds the exact stage', async () => {
        const table = await eventsTable();
        const request = {
          invocationId: `inv-${randomUUID()}`,
          staging: { schema: admin.schema, table: unique('stg') },
          likeTable: table,
          ownerBinding: 'o',
        };
        h.faults.arm('delivery.target.create-staging:lose-response');
        await expect(target.createStaging(request)).rejects.toMatchObject({ name: 'Cutpoint.OutcomeUnknown' });
        h.faults.disarm();
        expect(await admin.exists(request.staging)).toBe(true);
        const retry = await target.createStaging(request);
        expect(retry.created).toBe(false);
      });

      it('crash-before at create-staging leaves nothing behind', async () => {
        const table = await eventsTable();
        const request = {
          invocationId: `inv-${randomUUID()}`,
          staging: { schema: admin.schema, table: unique('stg') },
          likeTable: table,
          ownerBinding: 'o',
        };
        h.faults.arm('delivery.target.create-staging:crash-before');
        await expect(target.createStaging(request)).rejects.toMatchObject({ name: 'Cutpoint.WorkerCrashed' });
        h.faults.disarm();
        expect(await admin.exists(request.staging)).toBe(false);
      });
    });

    describe('chunk loads', () => {
      it('loads chunks with receipts (rows, the SHA-256 of the bytes); re-loading a seq replaces exactly that seq', async () => {
        const table = await eventsTable();
        const s = await stage(table);
        const chunk0 = [
          event(1, at('10:00:00.000'), 'a'),
          event(2, at('10:00:01.000'), 'b'),
          event(3, at('10:00:02.000'), 'c'),
        ];
        const chunk1 = [event(4, at('10:30:00.000'), 'd'), event(5, at('10:59:59.999'), 'e')];
        const r0 = await target.loadChunk({ staging: s, seq: 0, ...chunkOf(chunk0) });
        const r1 = await target.loadChunk({ staging: s, seq: 1, ...chunkOf(chunk1) });
        expect(r0).toEqual({ seq: 0, rows: 3, digest: chunkOf(chunk0).sha256 });
        expect(r1).toEqual({ seq: 1, rows: 2, digest: chunkOf(chunk1).sha256 });
        expect(await target.observeChunks(s)).toEqual([
          { seq: 0, rows: 3 },
          { seq: 1, rows: 2 },
        ]);
        const again = await target.loadChunk({ staging: s, seq: 1, ...chunkOf(chunk1) });
        expect(again).toEqual(r1);
        const replaced = await target.loadChunk({ staging: s, seq: 1, ...chunkOf([chunk1[0]!]) });
        expect(replaced.rows).toBe(1);
        expect(await target.observeChunks(s)).toEqual([
          { seq: 0, rows: 3 },
          { seq: 1, rows: 1 },
        ]);
        expect((await target.stagingFacts(s, { keyColumns: ['id'], notNull: [], assertions: [] })).rows).toBe(4);
        const empty = await target.loadChunk({ staging: s, seq: 2, ...chunkOf([]) });
        expect(empty).toEqual({ seq: 2, rows: 0, digest: sha256Hex(new Uint8Array()) });
      });

      it('observes one part: only the seqs in [from, to)', async () => {
        const table = await eventsTable();
        const s = await stage(table);
        const seqs = [0, 1, 100_000, 100_001, 100_002, 200_000];
        for (const [i, seq] of seqs.entries()) {
          await target.loadChunk({ staging: s, seq, ...chunkOf([event(i + 1, at('10:00:00.000'), `row ${i}`)]) });
        }
        expect(await target.observeChunks(s, { from: 100_000, to: 200_000 })).toEqual([
          { seq: 100_000, rows: 1 },
          { seq: 100_001, rows: 1 },
          { seq: 100_002, rows: 1 },
        ]);
        expect(await target.observeChunks(s, { from: 0, to: 1 })).toEqual([{ seq: 0, rows: 1 }]);
        expect(await target.observeChunks(s, { from: 100_003, to: 200_000 })).toEqual([]);
        expect(await target.observeChunks(s, { from: 5, to: 5 })).toEqual([]);
        expect((await target.observeChunks(s)).map((c) => c.seq)).toEqual(seqs);
        await expect(target.observeChunks(s, { from: 10, to: 5 })).rejects.toMatchObject({
          name: 'Cutpoint.ValidationError',
          code: 'delivery.invalid_request',
        });
      });

      it('refuses bytes that are not the declared SHA-256 before touching the stage', async () => {
        const table = await eventsTable();
        const s = await stage(table);
        const rows = [event(1, at('10:00:00.000'), 'a')];
        await target.loadChunk({ staging: s, seq: 0, ...chunkOf(rows) });
        const other = chunkOf([event(2, at('10:00:01.000'), 'b'), event(3, at('10:00:02.000'), 'c')]);
        await expect(
          target.loadChunk({ staging: s, seq: 0, ...other, sha256: chunkOf(rows).sha256 }),
        ).rejects.toMatchObject({
          name: 'Cutpoint.ValidationError',
          code: 'delivery.chunk_digest_mismatch',
        });
        expect(await target.observeChunks(s)).toEqual([{ seq: 0, rows: 1 }]);
        expect(await admin.rows(s.table, ['id'])).toMatchObject([{ id: 1, body: 'a' }]);
      });

      it('a chunk whose line count is not its declared rows is refused and rolled back: the seq keeps its rows', async () => {
        const table = await eventsTable();
        const s = await stage(table);
        const rows = [event(1, at('10:00:00.000'), 'a'), event(2, at('10:00:01.000'), 'b')];
        await target.loadChunk({ staging: s, seq: 0, ...chunkOf(rows) });
        const three = chunkOf([
          event(3, at('10:00:02.000'), 'c'),
          event(4, at('10:00:03.000'), 'd'),
          event(5, at('10:00:04.000'), 'e'),
        ]);
        for (const declared of [2, 4]) {
          await expect(target.loadChunk({ staging: s, seq: 0, ...three, rows: declared })).rejects.toMatchObject({
            name: 'Cutpoint.LoadCountMismatch',
            code: 'delivery.load_count_mismatch',
          });
        }
        expect(await target.observeChunks(s)).toEqual([{ seq: 0, rows: 2 }]);
        expect((await admin.rows(s.table, ['id'])).map((r) => r.id)).toEqual([1, 2]);
      });

      it('crash-before at load-chunk loads nothing; lose-response loads the chunk once and the re-load is idempotent', async () => {
        const table = await eventsTable();
        const s = await stage(table);
        const chunk = chunkOf([event(1, at('10:00:00.000'), 'a'), event(2, at('10:00:01.000'), 'b')]);
        h.faults.arm('delivery.target.load-chunk:crash-before');
        await expect(target.loadChunk({ staging: s, seq: 0, ...chunk })).rejects.toMatchObject({
          name: 'Cutpoint.WorkerCrashed',
        });
        expect(await target.observeChunks(s)).toEqual([]);
        h.faults.arm('delivery.target.load-chunk:lose-response');
        await expect(target.loadChunk({ staging: s, seq: 0, ...chunk })).rejects.toMatchObject({
          name: 'Cutpoint.OutcomeUnknown',
        });
        h.faults.disarm();
        expect(await target.observeChunks(s)).toEqual([{ seq: 0, rows: 2 }]);
        await target.loadChunk({ staging: s, seq: 0, ...chunk });
        expect(await target.observeChunks(s)).toEqual([{ seq: 0, rows: 2 }]);
      });

      it('refuses to load into a stage whose owner binding changed', async () => {
        const table = await eventsTable();
        const s = await stage(table);
        await expect(
          target.loadChunk({ staging: { ...s, owner: 'someone-else' }, seq: 0, ...chunkOf([]) }),
        ).rejects.toMatchObject({
          name: 'Cutpoint.StagingBindingChanged',
        });
        await expect(
          target.loadChunk({ staging: { ...s, objectId: '1' }, seq: 0, ...chunkOf([]) }),
        ).rejects.toMatchObject({
          name: 'Cutpoint.StagingBindingChanged',
        });
      });

      // Registered only where the admin provides typed tables: never a skipped test.
      if (options.typedValues)
        it('typed values land as the per-row load bound them: 64-bit and decimal text, microsecond times, json/jsonb, quotes and unicode, NULLs', async () => {
          const typed = admin.typed;
          if (!typed) throw new Error(`${name}: the admin provides no typed tables`);
          const kinds = Object.keys(typed.types) as TypedKind[];
          const columns = kinds.map((kind) => ({ name: `c_${kind}`, type: typed.types[kind]! }));
          const names = ['id', ...columns.map((c) => c.name)];
          const values: Record<TypedKind, unknown[]> = {
            int: [2147483647, -2147483648, 0],
            bigint: ['9223372036854775807', '-9223372036854775808', '18014398509481985'],
            decimal: ['12.5', '-0.0000000001', '123456789012345678901234567890.123456789'],
            double: [0.1, 1e300, 'nan', 'inf', '-inf', -2.5e-300],
            boolean: [true, false],
            text: [
              'O\'Brien "quoted" \\ back',
              'ünïcödé — 数据 🚀',
              'line\nbreak\ttab',
              '',
              "'); DROP TABLE x; --",
              '{"not":"json"}',
            ],
            date: ['2026-11-01', '1970-01-01', '2400-02-29'],
            timestamp: ['2026-11-01T10:00:00.123456Z', '2026-11-01T10:00:00Z', '1999-12-31T23:59:59.999999Z'],
            timestamptz: ['2026-11-01T10:00:00.123456Z', '1970-01-01T00:00:00.000001Z', '2026-11-01T10:00:00.5Z'],
            json: [{ b: [1, 2, { c: 'x"y' }], a: 'ü' }, [1, 'two', null, 2.5], 42, true],
            jsonb: [{ z: 1, a: { nested: ['é', 1.5] } }, [], {}, [{ k: 'v' }]],
          };
          const rows: TargetRow[] = [];
          for (let i = 0; i < 7; i++) {
            const row: TargetRow = { id: i + 1 };
            // The last row is all NULL; the others cycle through each kind's values.
            for (const c of columns)
              row[c.name] =
                i === 6 ? null : values[c.name.slice(2) as TypedKind][i % values[c.name.slice(2) as TypedKind].length]!;
            rows.push(row);
          }
          const table = await typed.createTable(unique('typed'), [
            { name: 'id', type: typed.types.int ?? 'int' },
            ...columns,
          ]);
          const s = await stage(table);
          const chunk = chunkOf(rows, names);
          const receipt = await target.loadChunk({ staging: s, seq: 0, ...chunk });
          expect(receipt).toEqual({ seq: 0, rows: rows.length, digest: chunk.sha256 });
          // The per-row load bound the values of the rows decoded from the same chunk bytes.
          const reference = await typed.createTable(unique('typed_ref'), [
            { name: 'id', type: typed.types.int ?? 'int' },
            ...columns,
          ]);
          const decoded = decodeChunk(chunk.jsonl, names);
          await admin.insert(
            reference,
            decoded.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, boundAsBefore(v)]))),
          );
          const loaded = await typed.textRows(s.table, names, ['id']);
          expect(loaded).toEqual(await typed.textRows(reference, names, ['id']));
          expect(loaded[6]).toEqual(Object.fromEntries(names.map((n) => [n, n === 'id' ? '7' : null])));
          if (typed.types.bigint) expect(loaded.map((r) => r.c_bigint).slice(0, 3)).toEqual(values.bigint);
          if (typed.types.timestamptz) expect(loaded[0]?.c_timestamptz).toMatch(/10:00:00\.123456/);
        });
    });

    describe('quality facts', () => {
      it('counts rows, duplicate keys, nulls per column and each assertion on the exact stage', async () => {
        const table = await eventsTable();
        const { stage: s } = await staged(table, [
          [
            event(1, at('10:00:00.000'), 'a'),
            event(1, at('10:00:01.000'), 'dup'),
            event(2, at('10:00:02.000'), 'b', null),
          ],
          [
            event(3, at('10:00:03.000'), 'c', -5),
            event(3, at('10:00:04.000'), 'dup'),
            event(3, at('10:00:05.000'), 'dup again'),
          ],
        ]);
        const facts = await target.stagingFacts(s, {
          keyColumns: ['id'],
          notNull: ['amount', 'body'],
          assertions: [
            { name: 'negative_amounts', sql: 'SELECT count(*) FROM {staging} WHERE amount < 0' },
            { name: 'max_id', sql: 'SELECT max(id) FROM {staging}' },
            { name: 'nothing', sql: 'SELECT max(id) FROM {staging} WHERE id > 1000' },
          ],
        });
        expect(facts).toEqual({
          rows: 6,
          duplicateKeys: 2,
          nulls: { amount: 1, body: 0 },
          assertions: { negative_amounts: 1, max_id: 3, nothing: null },
        });
      });

      it("over a seq range (one part) counts only those chunks' rows, and refuses assertions there", async () => {
        const table = await eventsTable();
        const { stage: s } = await staged(table, [
          [event(1, at('10:00:00.000'), 'a'), event(1, at('10:00:01.000'), 'dup in chunk 0')],
          [event(1, at('10:00:02.000'), 'dup of chunk 0 in chunk 1', null), event(2, at('10:00:03.000'), 'b')],
        ]);
        const request = { keyColumns: ['id'], notNull: ['amount'], assertions: [] };
        expect(await target.stagingFacts(s, { ...request, range: { from: 1, to: 2 } })).toEqual({
          rows: 2,
          duplicateKeys: 0,
          nulls: { amount: 1 },
          assertions: {},
        });
        expect(await target.stagingFacts(s, { ...request, range: { from: 0, to: 1 } })).toEqual({
          rows: 2,
          duplicateKeys: 1,
          nulls: { amount: 0 },
          assertions: {},
        });
        expect(await target.stagingFacts(s, request)).toMatchObject({
          rows: 4,
          duplicateKeys: 1,
          nulls: { amount: 1 },
        });
        await expect(
          target.stagingFacts(s, {
            ...request,
            range: { from: 0, to: 2 },
            assertions: [{ name: 'n', sql: 'SELECT count(*) FROM {staging}' }],
          }),
        ).rejects.toMatchObject({ code: 'delivery.invalid_request' });
        await expect(target.stagingFacts(s, { ...request, range: { from: 2, to: 1 } })).rejects.toMatchObject({
          code: 'delivery.invalid_request',
        });
      });
    });

    describe('publication', () => {
      it('replace_window deletes the window and inserts the stage, in one transaction with a receipt', async () => {
        const before = event(1, at('09:59:59.999'), 'before window');
        const inside = event(2, at('10:15:00.000'), 'old, replaced');
        const atEnd = event(3, at('11:00:00.000'), 'at end: outside');
        const table = await eventsTable([before, inside, atEnd]);
        const fresh = [event(10, at('10:00:00.000'), 'new at start'), event(11, at('10:59:59.999'), 'new last')];
        const { stage: s, receipts } = await staged(table, [fresh]);
        const request = publishRequest(table, s, receipts, 'replace_window');
        expect(await target.probeReceipt(s.invocationId)).toBeUndefined();
        const result = await target.publish(request);
        expect(result.applied).toBe(true);
        expect(result.receipt).toMatchObject({
          invocationId: s.invocationId,
          target: table,
          mode: 'replace_window',
          window: WINDOW,
          rows: 2,
          digest: request.digest,
          stagingObjectId: s.objectId,
        });
        expect(result.receipt.publishedAt).toBeInstanceOf(Date);
        expect(await allRows(table)).toEqual([before, atEnd, ...fresh]);
        expect(await target.probeReceipt(s.invocationId)).toEqual(result.receipt);
      });

      it('merge updates matching keys and inserts new ones', async () => {
        const table = await eventsTable([
          event(1, at('10:00:00.000'), 'one'),
          event(2, at('10:01:00.000'), 'two'),
          event(3, at('10:02:00.000'), 'three'),
        ]);
        const { stage: s, receipts } = await staged(table, [
          [event(2, at('10:05:00.000'), 'two v2', 222), event(4, at('10:06:00.000'), 'four')],
        ]);
        const result = await target.publish(publishRequest(table, s, receipts, 'merge'));
        expect(result.applied).toBe(true);
        expect(await allRows(table)).toEqual([
          event(1, at('10:00:00.000'), 'one'),
          event(2, at('10:05:00.000'), 'two v2', 222),
          event(3, at('10:02:00.000'), 'three'),
          event(4, at('10:06:00.000'), 'four'),
        ]);
      });

      it('publishing twice writes one receipt and the rows once', async () => {
        const table = await eventsTable();
        const { stage: s, receipts } = await staged(table, [
          [event(1, at('10:00:00.000'), 'a')],
          [event(2, at('10:10:00.000'), 'b')],
        ]);
        const request = publishRequest(table, s, receipts, 'merge');
        const first = await target.publish(request);
        const second = await target.publish(request);
        expect(second).toEqual({ receipt: first.receipt, applied: false });
        expect(await allRows(table)).toHaveLength(2);
        // The same invocation with other facts is not "already published": it is a conflict.
        await expect(target.publish({ ...request, rows: 3 })).rejects.toMatchObject({
          name: 'Cutpoint.IdentityConflict',
        });
      });

      it('lose-response at delivery.publish.commit: OutcomeUnknown, the receipt proves publication, a second publish is a no-op', async () => {
        const table = await eventsTable([event(1, at('10:20:00.000'), 'old')]);
        const { stage: s, receipts } = await staged(table, [[event(5, at('10:30:00.000'), 'new')]]);
        const request = publishRequest(table, s, receipts, 'replace_window');
        h.faults.arm('delivery.publish.commit:lose-response');
        await expect(target.publish(request)).rejects.toMatchObject({
          name: 'Cutpoint.OutcomeUnknown',
          cutPoint: 'delivery.publish.commit',
        });
        h.faults.disarm();
        const receipt = await target.probeReceipt(s.invocationId);
        expect(receipt).toMatchObject({ invocationId: s.invocationId, rows: 1, digest: request.digest });
        expect(await target.publish(request)).toEqual({ receipt, applied: false });
        expect(await allRows(table)).toEqual([event(5, at('10:30:00.000'), 'new')]);
      });

      it('crash-before at delivery.publish.commit publishes nothing; the next attempt publishes once', async () => {
        const old = event(1, at('10:20:00.000'), 'old');
        const table = await eventsTable([old]);
        const { stage: s, receipts } = await staged(table, [[event(5, at('10:30:00.000'), 'new')]]);
        const request = publishRequest(table, s, receipts, 'replace_window');
        h.faults.arm('delivery.publish.commit:crash-before');
        await expect(target.publish(request)).rejects.toMatchObject({ name: 'Cutpoint.WorkerCrashed' });
        h.faults.disarm();
        expect(await target.probeReceipt(s.invocationId)).toBeUndefined();
        expect(await allRows(table)).toEqual([old]);
        expect((await target.publish(request)).applied).toBe(true);
        expect(await allRows(table)).toEqual([event(5, at('10:30:00.000'), 'new')]);
      });

      it('refuses a stage whose count differs from the journal, rows outside the window, a changed stage binding', async () => {
        const old = event(1, at('10:20:00.000'), 'old');
        const table = await eventsTable([old]);
        const { stage: s, receipts } = await staged(table, [[event(5, at('10:30:00.000'), 'new')]]);
        const request = publishRequest(table, s, receipts, 'replace_window');
        await expect(target.publish({ ...request, rows: 2 })).rejects.toMatchObject({
          name: 'Cutpoint.PublicationRefused',
        });
        await expect(target.publish({ ...request, staging: { ...s, owner: 'other' } })).rejects.toMatchObject({
          name: 'Cutpoint.StagingBindingChanged',
        });
        const outside = await staged(table, [[event(6, at('11:00:00.000'), 'at end')]]);
        await expect(
          target.publish(publishRequest(table, outside.stage, outside.receipts, 'replace_window')),
        ).rejects.toMatchObject({
          name: 'Cutpoint.PublicationRefused',
        });
        const dup = await staged(table, [[event(7, at('10:01:00.000'), 'x'), event(7, at('10:02:00.000'), 'y')]]);
        await expect(target.publish(publishRequest(table, dup.stage, dup.receipts, 'merge'))).rejects.toMatchObject({
          name: 'Cutpoint.PublicationRefused',
        });
        for (const invocationId of [s.invocationId, outside.stage.invocationId, dup.stage.invocationId]) {
          expect(await target.probeReceipt(invocationId)).toBeUndefined();
        }
        expect(await allRows(table)).toEqual([old]);
      });
    });

    describe('retirement', () => {
      it('drops the exact owned stage and proves its absence; repeating is safe', async () => {
        const table = await eventsTable();
        const { stage: s } = await staged(table, [[event(1, at('10:00:00.000'), 'a')]]);
        expect(await target.dropStaging(s)).toEqual({ status: 'ABSENT_PROVED', dropped: true });
        expect(await admin.exists(s.table)).toBe(false);
        expect(await target.dropStaging(s)).toEqual({ status: 'ABSENT_PROVED', dropped: false });
      });

      it('leaves a table whose owner binding or object id differs untouched: NOT_OURS', async () => {
        const table = await eventsTable();
        const { stage: s } = await staged(table, [[event(1, at('10:00:00.000'), 'a')]]);
        await admin.setMarker(s.table, ownerMarker(s.invocationId, 'another-owner'));
        expect(await target.dropStaging(s)).toEqual({ status: 'NOT_OURS', dropped: false });
        expect(await admin.exists(s.table)).toBe(true);
        await admin.setMarker(s.table, ownerMarker(s.invocationId, s.owner));
        expect(await target.dropStaging({ ...s, objectId: '1' })).toEqual({ status: 'NOT_OURS', dropped: false });
        expect(await target.observeChunks(s)).toEqual([{ seq: 0, rows: 1 }]);
      });

      it('lose-response at drop-staging: the repeat proves absence', async () => {
        const table = await eventsTable();
        const s = await stage(table);
        h.faults.arm('delivery.target.drop-staging:lose-response');
        await expect(target.dropStaging(s)).rejects.toMatchObject({ name: 'Cutpoint.OutcomeUnknown' });
        h.faults.disarm();
        expect(await target.dropStaging(s)).toEqual({ status: 'ABSENT_PROVED', dropped: false });
      });

      it('unlessPublished (retirement): a receipt found under the publication lock → PUBLISHED with the receipt, nothing dropped; without one the stage is dropped and a later publication publishes nothing', async () => {
        const table = await eventsTable();
        const { stage: s, receipts } = await staged(table, [[event(1, at('10:00:00.000'), 'a')]]);
        const request = publishRequest(table, s, receipts, 'replace_window');
        const published = await target.publish(request);
        expect(await target.dropStaging(s, { unlessPublished: true })).toEqual({
          status: 'PUBLISHED',
          dropped: false,
          receipt: published.receipt,
        });
        expect(await admin.exists(s.table)).toBe(true);
        // Cleanup after a publication drops as before.
        expect(await target.dropStaging(s)).toEqual({ status: 'ABSENT_PROVED', dropped: true });

        const other = await staged(table, [[event(2, at('10:10:00.000'), 'b')]]);
        expect(await target.dropStaging(other.stage, { unlessPublished: true })).toEqual({
          status: 'ABSENT_PROVED',
          dropped: true,
        });
        await expect(
          target.publish(publishRequest(table, other.stage, other.receipts, 'replace_window')),
        ).rejects.toMatchObject({ name: 'Cutpoint.StagingBindingChanged' });
        expect(await target.probeReceipt(other.stage.invocationId)).toBeUndefined();
        expect(await allRows(table)).toEqual([event(1, at('10:00:00.000'), 'a')]);
      });

      it('observes a stage by its name and owner marker: OURS with its object id, NOT_OURS, or ABSENT with visible metadata', async () => {
        const table = await eventsTable();
        const s = await stage(table);
        expect(await target.observeStaging(s.table, s)).toEqual({ status: 'OURS', objectId: s.objectId });
        expect(await target.observeStaging(s.table, { invocationId: s.invocationId, owner: 'another-owner' })).toEqual({
          status: 'NOT_OURS',
        });
        expect(await target.dropStaging(s)).toMatchObject({ status: 'ABSENT_PROVED' });
        expect(await target.observeStaging(s.table, s)).toEqual({ status: 'ABSENT', metadataVisible: true });
      });

      it('an absent object counts as proved only when absence is distinguishable from metadata denial', () => {
        expect(classifyRetirement('ALREADY_ABSENT', { metadataVisible: false, exactObjectExists: false })).toBe(
          'ABSENCE_UNPROVABLE',
        );
        expect(classifyRetirement('DROPPED', { metadataVisible: false, exactObjectExists: false })).toBe(
          'ABSENCE_UNPROVABLE',
        );
        expect(classifyRetirement('ALREADY_ABSENT', { metadataVisible: true, exactObjectExists: true })).toBe(
          'ABSENCE_UNPROVABLE',
        );
        expect(classifyRetirement('ALREADY_ABSENT', { metadataVisible: true, exactObjectExists: false })).toBe(
          'ABSENT_PROVED',
        );
        expect(classifyRetirement('NOT_OURS', { metadataVisible: true, exactObjectExists: true })).toBe('NOT_OURS');
      });
    });

    describe('a principal that cannot see the schema', () => {
      // Registered only where the environment provides such a principal: never a skipped test.
      if (options.restrictedPrincipal ?? true) {
        it('gets ABSENCE_UNPROVABLE for an absent stage, cannot claim "no receipt", and never drops what it cannot see', async () => {
          if (!admin.restricted) throw new Error(`${name}: the admin provides no restricted principal`);
          const table = await eventsTable();
          const { stage: s, receipts } = await staged(table, [[event(1, at('10:00:00.000'), 'a')]]);
          await target.publish(publishRequest(table, s, receipts, 'merge'));
          const live = await stage(table);
          const restricted = await admin.restricted();
          try {
            const gone = { ...live, table: { schema: admin.schema, table: unique('never_created') } };
            expect(await restricted.target.dropStaging(gone)).toEqual({ status: 'ABSENCE_UNPROVABLE', dropped: false });
            await expect(restricted.target.probeReceipt(s.invocationId)).rejects.toMatchObject({
              name: 'Cutpoint.TargetUnobservable',
            });
            await expect(restricted.target.probeReceipt(`inv-${randomUUID()}`)).rejects.toMatchObject({
              name: 'Cutpoint.TargetUnobservable',
            });
            const outcome = await restricted.target.dropStaging(live).then(
              (r) => r.status,
              (e: Error) => e.name,
            );
            expect(['ABSENCE_UNPROVABLE', 'Cutpoint.TargetUnobservable']).toContain(outcome);
            expect(await admin.exists(live.table)).toBe(true);
          } finally {
            await restricted.close();
          }
        });
      }
    });

    describe('values and identifiers', () => {
      it('round-trips quotes and SQL-injection strings as data, through load, facts and publish', async () => {
        const nasty = [
          "'); DROP TABLE events; --",
          'Robert"); DROP TABLE students;--',
          "O'Brien ]] [x] `y` $1 $$ :p @p",
          '{staging} ; SELECT 1',
          'line\nbreak\ttab \\ backslash',
          'ünïcödé — 数据 🚀',
        ];
        const table = await eventsTable();
        const rows = nasty.map((body, i) => event(i + 1, at(`10:0${i}:00.000`), body));
        const { stage: s, receipts } = await staged(table, [rows]);
        expect(receipts[0]?.digest).toBe(chunkOf(rows).sha256);
        await target.publish(publishRequest(table, s, receipts, 'replace_window'));
        expect(await allRows(table)).toEqual(rows);
        expect(await admin.exists(table)).toBe(true);
      });

      it('refuses identifiers with bad characters before touching the database', async () => {
        const table = await eventsTable();
        const bad = ['bad"name', 'x; DROP TABLE y', '[x]', 'a b', '', '1abc', 'a'.repeat(64), 'x]', "o'k", 'a.b'];
        for (const name of bad) {
          await expect(
            target.createStaging({
              invocationId: 'inv',
              staging: { schema: admin.schema, table: name },
              likeTable: table,
              ownerBinding: 'o',
            }),
          ).rejects.toMatchObject({ name: 'Cutpoint.ValidationError', code: 'delivery.invalid_identifier' });
          await expect(target.describeTable({ schema: name, table: 'x' })).rejects.toMatchObject({
            code: 'delivery.invalid_identifier',
          });
        }
        const s = await stage(table);
        await expect(
          target.loadChunk({ staging: s, seq: 0, ...chunkOf([]), columns: ['id', 'amount; DELETE'] }),
        ).rejects.toMatchObject({
          code: 'delivery.invalid_identifier',
        });
        await expect(
          target.loadChunk({ staging: s, seq: 0, ...chunkOf([]), columns: ['_cutpoint_seq'] }),
        ).rejects.toMatchObject({
          code: 'delivery.invalid_identifier',
        });
        await expect(
          target.stagingFacts(s, { keyColumns: ['id"--'], notNull: [], assertions: [] }),
        ).rejects.toMatchObject({
          code: 'delivery.invalid_identifier',
        });
        const request = publishRequest(table, s, [], 'replace_window');
        await expect(target.publish({ ...request, timeColumn: 'ts); DROP' })).rejects.toMatchObject({
          code: 'delivery.invalid_identifier',
        });
        await expect(target.publish({ ...request, keyColumns: ['id]'], mode: 'merge' })).rejects.toMatchObject({
          code: 'delivery.invalid_identifier',
        });
        expect(await target.probeReceipt(s.invocationId)).toBeUndefined();
      });
    });
  });
}
