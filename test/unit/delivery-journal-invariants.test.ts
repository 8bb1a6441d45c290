import { describe, expect, it } from 'vitest';
import {
  custodyProblems,
  factProblems,
  headProblems,
  targetProblems,
  type RecordView,
} from '../../src/domain/delivery/journal-invariants.js';

const id = 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa';
const other = 'inv-bbbbbbbbbbbbbbbbbbbbbbbbbb';
const record = (state: RecordView['state'], facts: RecordView['facts'] = {}): RecordView => ({
  invocationId: id,
  state,
  custodyEpoch: 2,
  facts,
});
const table = { schema: 'dwh', table: 'cutpoint_stage_x' };
const stage = { table, objectId: '42' };
const full = {
  parts: {},
  publication: {},
  evidence: {},
  checkpoint: {},
  staging: stage,
  absence: { table, objectId: '42' },
};

describe('delivery journal invariants (read side)', () => {
  it('state ↔ facts: each state carries the proofs its transitions required (verified parts; publication; evidence and checkpoint; the proved absence of the stage)', () => {
    for (const state of ['VERIFIED_EOF', 'PUBLICATION_UNKNOWN', 'PUBLISHED'] as const)
      expect(factProblems(record(state, { publication: {} }))[0]).toContain(
        "VERIFIED_EOF needs the parts' verified receipts",
      );
    expect(factProblems(record('VERIFIED_EOF', { parts: {} }))).toEqual([]);
    expect(factProblems(record('PUBLICATION_UNKNOWN', { parts: {} }))).toEqual([]);
    expect(factProblems(record('PUBLISHED', { parts: {} }))).toEqual([
      `invocation ${id} is PUBLISHED, but PUBLISHED needs the publication receipt recorded in the same or an earlier transition`,
    ]);
    expect(factProblems(record('PUBLISHED', { parts: {}, publication: {} }))).toEqual([]);
    expect(factProblems(record('SUCCEEDED', { parts: {}, publication: {} }))[0]).toContain(
      'SUCCEEDED needs the evidence persisted and the checkpoint advanced',
    );
    expect(factProblems(record('CUSTODY_RELEASED', full))).toEqual([]);
    expect(factProblems(record('CUSTODY_RELEASED', { parts: {}, publication: {}, evidence: {} }))[0]).toContain(
      'checkpoint',
    );
    // Terminal states need the owned stage's proved absence, naming the recorded stage.
    const { absence, ...withoutAbsence } = full;
    expect(factProblems(record('CUSTODY_RELEASED', withoutAbsence))[0]).toContain('absence proved');
    expect(factProblems(record('RETIRED'))[0]).toContain('RETIRED needs');
    expect(factProblems(record('RETIRED', { absence }))).toEqual([]);
    expect(factProblems(record('RETIRED', { staging: stage, absence: { ...absence, objectId: '99' } }))[0]).toContain(
      'RETIRED needs',
    );
    for (const state of ['EMPTY_STAGING', 'WRITING_UNKNOWN', 'INCIDENT_RETAINED'] as const) {
      expect(factProblems(record(state))).toEqual([]);
    }
  });

  it('custody ↔ record: a retaining state holds custody at its epoch; a terminal one does not hold it', () => {
    const held = (invocationId: string, epoch = 2) => ({ state: 'HELD' as const, invocationId, epoch });
    expect(custodyProblems(record('PUBLICATION_UNKNOWN'), held(id))).toEqual([]);
    expect(custodyProblems(record('PUBLICATION_UNKNOWN'), held(id, 3))[0]).toContain('epoch');
    expect(custodyProblems(record('PUBLICATION_UNKNOWN'), held(other))[0]).toContain(`held by ${other}`);
    expect(
      custodyProblems(record('INCIDENT_RETAINED'), { state: 'RELEASED', invocationId: id, epoch: 2 })[0],
    ).toContain('released');
    expect(custodyProblems(record('RETIRED', full), { state: 'RELEASED', invocationId: id, epoch: 2 })).toEqual([]);
    expect(custodyProblems(record('RETIRED'), held(other, 3))).toEqual([]);
    expect(custodyProblems(record('CUSTODY_RELEASED', full), held(id))[0]).toContain('still holds');
    expect(custodyProblems(record('RETIRED'), undefined)[0]).toContain('no custody record');
  });

  it('custody ↔ records of a target: the holder (or last holder) must have a record', () => {
    expect(targetProblems('w.dwh.t', { state: 'HELD', invocationId: other, epoch: 1 }, [id])[0]).toContain(
      `custody of invocation ${other}, which has no journal record (orphaned custody)`,
    );
    expect(targetProblems('w.dwh.t', { state: 'RELEASED', invocationId: other, epoch: 1 }, [id])[0]).toContain(
      'last held',
    );
    expect(targetProblems('w.dwh.t', { state: 'HELD', invocationId: id, epoch: 1 }, [id])).toEqual([]);
    expect(targetProblems('w.dwh.t', undefined, [])).toEqual([]);
  });

  it('head ↔ journal records: the head record exists, names the last transition, and nothing follows it', () => {
    const r = { ...record('VERIFIED_EOF'), journalSeq: 3, lastTransitionId: 'eof' };
    expect(headProblems(r, { first: {}, head: { transitionId: 'eof' } })).toEqual([]);
    expect(headProblems(r, { first: {}, head: undefined })[0]).toContain('points past the last journal record');
    expect(headProblems(r, { first: {}, head: { transitionId: 'other' } })[0]).toContain('another transition');
    expect(headProblems(r, { first: {}, head: { transitionId: 'eof' }, next: {} })[0]).toContain('past its head');
    expect(headProblems(r, { first: undefined, head: { transitionId: 'eof' } })[0]).toContain(
      'no first journal record',
    );
  });
});
