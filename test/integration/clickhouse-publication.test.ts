import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouse, type ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';
import { effectFailure } from '../../src/adapters/clickhouse/publication-sql.js';
import { createClickHouseExchangeTarget } from '../../src/adapters/clickhouse/publication-target.js';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import {
  candidateMarkerOf,
  candidateUuidOf,
  exchangeNamesOf,
  type ExchangeNames,
} from '../../src/domain/publication/candidate.js';
import type { ExchangeTargetPort, ObservedTable } from '../../src/ports/exchange-target.js';

/**
 * The ExchangeTargetPort contract against embedded ClickHouse (chdb 26.7.2.1), including
 * the ClickHouse facts docs/rules.md#exchange-publication relies on, each observed here:
 * - a database made by `CREATE DATABASE` is Atomic (chdb's own `default` is Overlay);
 * - `CREATE TABLE … UUID '<C>' AS … COMMENT …` keeps the UUID and the comment, and both
 *   move with the table through EXCHANGE; a second identical EXCHANGE swaps them back (T6);
 * - EXCHANGE in a Memory database is Code 48 NOT_IMPLEMENTED; after the fence RENAME an
 *   EXCHANGE naming the candidate is Code 60 UNKNOWN_TABLE;
 * - a second CREATE with a UUID in use is Code 57 (the UUID cannot be taken twice);
 * - readonly = 2 in a statement's SETTINGS refuses writes (Code 164) and does not outlive
 *   the statement, whereas a client setting becomes a session `SET` on chdb (last test).
 */
let ch: ClickHouseHandle;
const faults = new FaultSwitch();
let port: ExchangeTargetPort;

const ID = 'inv-le7t2qsoe354i7c2xbzrvjgola';
const OWNER = 'c'.repeat(64);
const C = candidateUuidOf(ID);
const MARKER = candidateMarkerOf(ID, OWNER);
let names: ExchangeNames;
let P: string;

async function sql(query: string): Promise<void> {
  await ch.client.command({ query });
}
async function rows<T>(query: string): Promise<T[]> {
  return (await ch.client.query({ query, format: 'JSONEachRow' })).json<T>();
}
async function uuidOf(database: string, name: string): Promise<string | undefined> {
  return (
    await rows<{ u: string }>(
      `SELECT toString(uuid) AS u FROM system.tables WHERE database = '${database}' AND name = '${name}'`,
    )
  )[0]?.u;
}
async function count(table: string): Promise<number> {
  return Number((await rows<{ n: string | number }>(`SELECT count() AS n FROM ${table}`))[0]?.n);
}
function byName(observed: ObservedTable[]): Record<string, { uuid: string; comment: string }> {
  return Object.fromEntries(observed.map((t) => [t.name, { uuid: t.uuid, comment: t.comment }]));
}
async function rejection(promise: Promise<unknown>): Promise<{ name: string; code: string; cause?: unknown }> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: { name: string; code: string; cause?: unknown }) => e,
  );
}

beforeAll(async () => {
  ch = await openClickHouse({ kind: 'embedded' });
  port = createClickHouseExchangeTarget(ch, faults);
  await sql('CREATE DATABASE dwh');
  await sql(
    "CREATE TABLE dwh.events (id UInt64, ts DateTime64(3, 'UTC'), body Nullable(String), twice UInt64 MATERIALIZED id * 2) ENGINE = MergeTree ORDER BY id",
  );
  await sql("INSERT INTO dwh.events (id, ts, body) VALUES (1, '2026-01-01 00:00:00', 'old')");
  names = exchangeNamesOf(ID, { database: 'dwh', table: 'events' });
  // The stage as TargetPort.createStaging makes it (tested in clickhouse-publication-stage.test.ts).
  await sql(
    `CREATE TABLE dwh.${names.stage} (id Nullable(UInt64), ts Nullable(DateTime64(3, 'UTC')), body Nullable(String), _cutpoint_seq UInt32, _cutpoint_chunk String) ENGINE = MergeTree ORDER BY _cutpoint_seq`,
  );
  await sql(
    `INSERT INTO dwh.${names.stage} VALUES (10, '2026-01-02 00:00:00', 'new', 0, 'x'), (11, '2026-01-02 00:00:01', NULL, 0, 'x'), (12, '2026-01-02 00:00:02', 'z', 1, 'y')`,
  );
  P = (await uuidOf('dwh', 'events'))!;
});

afterAll(async () => {
  await ch?.close();
});

describe('ClickHouse exchange target', () => {
  it('reports the database engine: CREATE DATABASE makes Atomic; Memory and an absent database are told apart', async () => {
    expect(await port.databaseEngine('dwh')).toBe('Atomic');
    expect(await port.databaseEngine('default')).toBe('Overlay');
    await sql('CREATE DATABASE mem ENGINE = Memory');
    expect(await port.databaseEngine('mem')).toBe('Memory');
    expect(await port.databaseEngine('nowhere')).toBeUndefined();
  });

  it('creates the candidate with the derived UUID and the marker; a lost response is resolved by exact identity, never a second CREATE', async () => {
    faults.arm('publication.candidate.create:lose-response');
    expect(await rejection(port.createCandidate({ names, uuid: C, marker: MARKER }))).toMatchObject({
      name: 'Cutpoint.OutcomeUnknown',
    });
    faults.disarm();
    expect(await port.createCandidate({ names, uuid: C, marker: MARKER })).toEqual({ created: false });
    const observed = byName(await port.observeTables(names));
    expect(observed[names.candidate]).toEqual({ uuid: C, comment: MARKER });
    expect(await port.inventory('dwh', names.candidate)).toMatchObject({
      uuid: C,
      engine: 'MergeTree',
      sortingKey: 'id',
      columns: [{ name: 'id' }, { name: 'ts' }, { name: 'body' }, { name: 'twice' }],
    });
  });

  it('refuses another table under the candidate name, another marker, or the UUID under another name (IdentityConflict), and a UUID in use cannot be created twice (Code 57)', async () => {
    const other = candidateMarkerOf(ID, 'd'.repeat(64));
    expect(await rejection(port.createCandidate({ names, uuid: C, marker: other }))).toMatchObject({
      name: 'Cutpoint.IdentityConflict',
      code: 'publication.candidate_identity_conflict',
    });
    const elsewhere = { ...names, candidate: 'elsewhere_c' };
    expect(await rejection(port.createCandidate({ names: elsewhere, uuid: C, marker: MARKER }))).toMatchObject({
      code: 'publication.candidate_identity_conflict',
    });
    const raw = await rejection(ch.client.command({ query: `CREATE TABLE dwh.elsewhere_c UUID '${C}' AS dwh.events` }));
    expect(raw).toMatchObject({ code: '57', type: 'TABLE_ALREADY_EXISTS' });
    // A crash before the CREATE leaves nothing: the same step creates.
    const id2 = 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaq';
    const names2 = exchangeNamesOf(id2, { database: 'dwh', table: 'events' });
    faults.arm('publication.candidate.create:crash-before');
    expect(
      await rejection(
        port.createCandidate({ names: names2, uuid: candidateUuidOf(id2), marker: candidateMarkerOf(id2, OWNER) }),
      ),
    ).toMatchObject({ name: 'Cutpoint.WorkerCrashed' });
    faults.disarm();
    expect(await uuidOf('dwh', names2.candidate)).toBeUndefined();
    await sql(`CREATE TABLE dwh.${names2.candidate} (k UInt8) ENGINE = Memory`);
    expect(
      await rejection(
        port.createCandidate({ names: names2, uuid: candidateUuidOf(id2), marker: candidateMarkerOf(id2, OWNER) }),
      ),
    ).toMatchObject({ code: 'publication.candidate_identity_conflict' });
    await sql(`DROP TABLE dwh.${names2.candidate} SYNC`);
  });

  it('fills the candidate from the stage once; a lost response and a foreign or partial fill converge on exactly the stage rows', async () => {
    const request = { names, uuid: C, marker: MARKER, expectedRows: 3, token: `${ID}:fill:abc` };
    expect(await rejection(port.fillCandidate({ ...request, expectedRows: 4 }))).toMatchObject({
      name: 'Publication.CandidateMismatch',
      code: 'publication.candidate_mismatch',
    });
    faults.arm('publication.candidate.fill:lose-response');
    expect(await rejection(port.fillCandidate(request))).toMatchObject({ name: 'Cutpoint.OutcomeUnknown' });
    faults.disarm();
    const first = await port.fillCandidate(request);
    expect(first).toMatchObject({ rows: 3, filled: false });
    expect(first.digest).toMatch(/^\d+$/);
    // Something else wrote into our unpublished candidate: truncated and refilled with the same token.
    await sql(`INSERT INTO dwh.${names.candidate} (id, ts, body) VALUES (99, '2026-01-01 00:00:00', 'stray')`);
    expect(await port.fillCandidate(request)).toEqual({ ...first, filled: true });
    expect(await rows(`SELECT id, body, twice FROM dwh.${names.candidate} ORDER BY id`)).toEqual([
      { id: 10, body: 'new', twice: 20 },
      { id: 11, body: null, twice: 22 },
      { id: 12, body: 'z', twice: 24 },
    ]);
  });

  it('a duplicate fill that read the candidate empty before the first one filled it lands nothing: the candidate keeps a deduplication log, and the contents read is the fill measure', async () => {
    const id = 'inv-bbbbbbbbbbbbbbbbbbbbbbbbbq';
    const n = exchangeNamesOf(id, { database: 'dwh', table: 'events' });
    const candidate = { names: n, uuid: candidateUuidOf(id), marker: candidateMarkerOf(id, OWNER) };
    await sql(`CREATE TABLE dwh.${n.stage} AS dwh.${names.stage}`);
    await sql(`INSERT INTO dwh.${n.stage} SELECT * FROM dwh.${names.stage}`);
    await port.createCandidate(candidate);
    expect(
      (
        await rows<{ e: string }>(
          `SELECT engine_full AS e FROM system.tables WHERE database = 'dwh' AND name = '${n.candidate}'`,
        )
      )[0]?.e,
    ).toContain('non_replicated_deduplication_window');
    // The zombie reads the candidate empty, then waits at the fill's cut point while the first fill completes.
    let release!: () => void;
    const parked = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const atFill = new Promise<void>((resolve) => (reached = resolve));
    const zombiePort = createClickHouseExchangeTarget(ch, {
      at: async (cutPoint, effect) => {
        if (cutPoint === 'publication.candidate.fill') {
          reached();
          await parked;
        }
        return effect();
      },
    });
    const request = { ...candidate, expectedRows: 3, token: `${id}:fill:abc` };
    const zombie = zombiePort.fillCandidate(request).then(
      (r) => r,
      (e: Error) => e,
    );
    await atFill;
    const first = await port.fillCandidate(request);
    expect(first).toMatchObject({ rows: 3, filled: true });
    release();
    expect(await zombie).toEqual({ ...first, filled: true });
    expect(await count(`dwh.${n.candidate}`)).toBe(3);
    expect(await port.candidateContents(candidate)).toEqual({ rows: first.rows, digest: first.digest });
    await sql(`DROP TABLE dwh.${n.candidate} SYNC`);
    await sql(`DROP TABLE dwh.${n.stage} SYNC`);
  });

  it('observes the target, candidate and tombstone names in one read; an injected read failure is not a conclusion', async () => {
    expect(byName(await port.observeTables(names))).toEqual({
      events: { uuid: P, comment: '' },
      [names.candidate]: { uuid: C, comment: MARKER },
    });
    faults.arm('publication.observe:fail');
    expect(await rejection(port.observeTables(names))).toMatchObject({ name: 'Cutpoint.EffectFailed' });
    faults.disarm();
  });

  it('T6: EXCHANGE swaps the UUIDs and the comments move with the tables; a second identical EXCHANGE swaps them back', async () => {
    faults.arm('publication.exchange:lose-response');
    expect(await rejection(port.exchange(names))).toMatchObject({
      name: 'Cutpoint.OutcomeUnknown',
      code: 'cutpoint.outcome_unknown',
    });
    faults.disarm();
    // Applied although the answer was lost: proved by UUID.
    expect(byName(await port.observeTables(names))).toEqual({
      events: { uuid: C, comment: MARKER },
      [names.candidate]: { uuid: P, comment: '' },
    });
    expect(await count('dwh.events')).toBe(3);
    // Not applied (injected fail / lost request): the target keeps P.
    for (const kind of ['fail', 'lose-request', 'crash-before']) {
      faults.arm(`publication.exchange:${kind}`);
      await rejection(port.exchange({ ...names, target: names.candidate, candidate: 'never_c' }));
      faults.disarm();
    }
    expect(byName(await port.observeTables(names))).toEqual({
      events: { uuid: C, comment: MARKER },
      [names.candidate]: { uuid: P, comment: '' },
    });
    // The replay the use case must never send: it unpublishes.
    await port.exchange(names);
    expect(byName(await port.observeTables(names))).toEqual({
      events: { uuid: P, comment: '' },
      [names.candidate]: { uuid: C, comment: MARKER },
    });
    expect(await rows('SELECT id FROM dwh.events')).toEqual([{ id: 1 }]);
    // Definite refusals are definite: no such table, Memory database.
    const unknown = await rejection(port.exchange({ ...names, candidate: 'missing_c' }));
    expect(unknown).toMatchObject({ name: 'Cutpoint.EffectFailed', cause: { code: 60, type: 'UNKNOWN_TABLE' } });
    await sql('CREATE TABLE mem.a (k UInt8) ENGINE = Memory');
    await sql('CREATE TABLE mem.b (k UInt8) ENGINE = Memory');
    const memory = await rejection(
      port.exchange({ database: 'mem', target: 'a', candidate: 'b', stage: 's', tombstone: 'x' }),
    );
    expect(memory).toMatchObject({ name: 'Cutpoint.EffectFailed', cause: { code: 48, type: 'NOT_IMPLEMENTED' } });
  });

  it('fences by RENAME: the tombstone holds C, and a late EXCHANGE naming the candidate fails UNKNOWN_TABLE', async () => {
    faults.arm('publication.fence.rename:lose-response');
    expect(await rejection(port.fenceRename(names))).toMatchObject({ name: 'Cutpoint.OutcomeUnknown' });
    faults.disarm();
    expect(byName(await port.observeTables(names))).toEqual({
      events: { uuid: P, comment: '' },
      [names.tombstone]: { uuid: C, comment: MARKER },
    });
    const late = await rejection(port.exchange(names));
    expect(late).toMatchObject({ name: 'Cutpoint.EffectFailed', cause: { code: 60, type: 'UNKNOWN_TABLE' } });
    expect(await uuidOf('dwh', 'events')).toBe(P);
    // The fenced candidate can no longer be filled: its name is empty.
    expect(
      await rejection(port.fillCandidate({ names, uuid: C, marker: MARKER, expectedRows: 3, token: 't' })),
    ).toMatchObject({ code: 'publication.candidate_missing' });
  });

  it('drops by exact UUID (recheck under the name, DROP SYNC) and proves absence by UUID', async () => {
    expect(await port.dropByUuid({ database: 'dwh', name: names.tombstone, uuid: P })).toBe('NOT_OURS');
    faults.arm('publication.predecessor.drop:lose-response');
    expect(await rejection(port.dropByUuid({ database: 'dwh', name: names.tombstone, uuid: C }))).toMatchObject({
      name: 'Cutpoint.OutcomeUnknown',
    });
    faults.disarm();
    expect(await port.dropByUuid({ database: 'dwh', name: names.tombstone, uuid: C })).toBe('ALREADY_ABSENT');
    expect(await port.uuidAbsence('dwh', C)).toEqual({ absent: true, metadataVisible: true });
    expect(await port.uuidAbsence('dwh', P)).toEqual({ absent: false, metadataVisible: true });
    expect(await port.uuidAbsence('nowhere', C)).toEqual({ absent: true, metadataVisible: false });
    // SYNC freed the UUID at once: the same CREATE works again (a plain DROP keeps it for the Atomic delay).
    expect(await port.createCandidate({ names, uuid: C, marker: MARKER })).toEqual({ created: true });
  });

  it('inventories columns, engine and sorting key; a missing table is TargetObjectMissing', async () => {
    expect(await port.inventory('dwh', 'events')).toEqual({
      database: 'dwh',
      table: 'events',
      uuid: P,
      engine: 'MergeTree',
      sortingKey: 'id',
      columns: [
        { name: 'id', type: 'UInt64', position: 1 },
        { name: 'ts', type: "DateTime64(3, 'UTC')", position: 2 },
        { name: 'body', type: 'Nullable(String)', position: 3 },
        { name: 'twice', type: 'UInt64', position: 4 },
      ],
    });
    expect(await rejection(port.inventory('dwh', 'nope'))).toMatchObject({ code: 'delivery.target_object_missing' });
  });

  it('runs scalars read-only: one number each, a write never parses, readonly = 2 holds per statement only', async () => {
    const scalars = await port.scalars([
      { name: 'rows', sql: `SELECT count() FROM dwh.${names.stage}` },
      { name: 'nulls', sql: `SELECT countIf(body IS NULL) FROM dwh.${names.stage}` },
      { name: 'big', sql: 'SELECT toUInt64(18446744073709551615)' },
      { name: 'none', sql: 'SELECT NULL' },
    ]);
    expect(scalars).toEqual({ rows: 3, nulls: 1, big: '18446744073709551615', none: null });
    expect(await rejection(port.scalars([{ name: 'w', sql: 'INSERT INTO dwh.events (id) VALUES (5)' }]))).toMatchObject(
      { name: 'Publication.ObservationFailed', code: 'publication.observation_failed' },
    );
    // chdb runs ';'-separated statements in one call: a statement that closes the wrapper
    // early is refused before anything runs (this one dropped the table before the check).
    for (const sneaky of [
      'SELECT 1) ; DROP TABLE dwh.events; SELECT (1',
      'SELECT 1) SETTINGS readonly = 0 --',
      'SELECT 1 /* x',
      "SELECT ')' )",
      'SELECT 1; DROP TABLE dwh.events',
    ]) {
      expect(await rejection(port.scalars([{ name: 'w', sql: sneaky }]))).toMatchObject({
        name: 'Cutpoint.ValidationError',
        code: 'publication.invalid_statement',
      });
    }
    expect(await port.scalars([{ name: 'quoted', sql: "SELECT length(')(;--#\\'') AS \"a;b\"" }])).toEqual({
      quoted: 7,
    });
    expect(await uuidOf('dwh', 'events')).toBe(P);
    // readonly = 2 in a statement's SETTINGS: chdb refuses the write (164) and the next statement may write.
    expect(
      await rejection(
        ch.client.command({
          query: "INSERT INTO dwh.events (id, ts) SETTINGS readonly = 2 VALUES (7, '2026-01-01 00:00:00')",
        }),
      ),
    ).toMatchObject({ code: '164', type: 'READONLY' });
    await sql("INSERT INTO dwh.events (id, ts) VALUES (8, '2026-01-01 00:00:00')");
    expect(await count('dwh.events')).toBe(2);
  });

  it('classifies a failed effect: a refusal the server answered is definite; timeout, Keeper 999, transport or no answer is unknown', () => {
    const server = (code: string, type: string) => Object.assign(new Error(`${type} password=hunter2`), { code, type });
    for (const [error, name] of [
      [server('60', 'UNKNOWN_TABLE'), 'Cutpoint.EffectFailed'],
      [server('48', 'NOT_IMPLEMENTED'), 'Cutpoint.EffectFailed'],
      [server('57', 'TABLE_ALREADY_EXISTS'), 'Cutpoint.EffectFailed'],
      [server('159', 'TIMEOUT_EXCEEDED'), 'Cutpoint.OutcomeUnknown'],
      [server('999', 'KEEPER_EXCEPTION'), 'Cutpoint.OutcomeUnknown'],
      [server('394', 'QUERY_WAS_CANCELLED'), 'Cutpoint.OutcomeUnknown'],
      [Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), 'Cutpoint.OutcomeUnknown'],
      [new Error('Timeout error.'), 'Cutpoint.OutcomeUnknown'],
    ] as const) {
      const sorted = effectFailure('publication.exchange', error);
      expect([error.message, sorted.name]).toEqual([error.message, name]);
      expect(sorted.message).not.toContain('hunter2');
    }
  });

  it('measured: on chdb a client setting becomes a session SET that outlives its query (why no call here passes one)', async () => {
    await ch.client
      .query({ query: 'SELECT 1', format: 'JSONEachRow', clickhouse_settings: { readonly: '2' } })
      .then((r) => r.json());
    expect(
      await rejection(
        ch.client.command({ query: "INSERT INTO dwh.events (id, ts) VALUES (9, '2026-01-01 00:00:00')" }),
      ),
    ).toMatchObject({ code: '164', type: 'READONLY' });
  });
});
