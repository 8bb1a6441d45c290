import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  assertUuidText,
  candidateMarkerOf,
  candidateUuidOf,
  exchangeNamesOf,
  isOurMarker,
} from '../../src/domain/publication/candidate.js';
import { PUBLICATION_CUT_POINTS } from '../../src/domain/publication/cut-points.js';
import { assertExchangeEngine } from '../../src/domain/publication/errors.js';
import { stagingTableNameOf } from '../../src/domain/delivery/identifiers.js';

const ID = 'inv-le7t2qsoe354i7c2xbzrvjgola';
const OWNER = 'a'.repeat(64);

describe('candidate identity', () => {
  it('derives the candidate UUID as UUIDv8 of SHA-256("cutpoint.candidate.v1\\0" + id) (golden, cross-checked with Python uuid)', () => {
    expect(candidateUuidOf(ID)).toBe('b7a05acc-a32f-8431-ac9d-0e6a7d160958');
    // The same bytes as the hash, but the version nibble (8) and the variant bits (10xx).
    const hash = createHash('sha256').update(`cutpoint.candidate.v1\0${ID}`).digest('hex');
    expect(hash.slice(0, 32)).toBe('b7a05acca32f74316c9d0e6a7d160958');
    expect(candidateUuidOf(ID)).toBe(candidateUuidOf(ID));
  });

  it('sets version 8 and variant 10 for every id, and differs between ids', () => {
    const seen = new Set<string>();
    for (const c of 'abcdefghijklmnopqrstuvwxyz234567') {
      const uuid = candidateUuidOf(`inv-${c.repeat(25)}a`);
      expect(assertUuidText(uuid)).toBe(uuid);
      expect(uuid[14]).toBe('8');
      expect(['8', '9', 'a', 'b']).toContain(uuid[19]);
      seen.add(uuid);
    }
    expect(seen.size).toBe(32);
  });

  it('refuses an id that is not an invocation id, without echoing it', () => {
    for (const bad of ['', 'inv-short', "inv-le7t2qsoe354i7c2xbzrvjgol'", 'INV-LE7T2QSOE354I7C2XBZRVJGOLA']) {
      expect(() => candidateUuidOf(bad)).toThrow(expect.objectContaining({ code: 'delivery.invocation_id_invalid' }));
    }
  });

  it('names the stage, candidate and tombstone from the id, in the target database', () => {
    const stage = stagingTableNameOf(ID);
    expect(exchangeNamesOf(ID, { database: 'dwh', table: 'events' })).toEqual({
      database: 'dwh',
      target: 'events',
      stage,
      candidate: `${stage}_c`,
      tombstone: `${stage}_x`,
    });
    expect(stage).toBe('cutpoint_stg_le7t2qsoe354i7c2xbzr');
  });

  it('refuses names that would need quoting and a target under the owned prefix', () => {
    for (const target of [
      { database: 'd-w', table: 'e' },
      { database: 'd', table: 'e`x' },
      { database: '', table: 'e' },
      { database: 'd', table: 'a'.repeat(64) },
    ]) {
      expect(() => exchangeNamesOf(ID, target)).toThrow(
        expect.objectContaining({ code: 'publication.invalid_identifier' }),
      );
    }
    expect(() => exchangeNamesOf(ID, { database: 'd', table: 'cutpoint_stg_x' })).toThrow(
      expect.objectContaining({ code: 'publication.invalid_identifier' }),
    );
  });

  it('writes the owner marker as canonical JSON of validated ids, and recognises only it', () => {
    const marker = candidateMarkerOf(ID, OWNER);
    expect(marker).toBe(`{"invocationId":"${ID}","kind":"cutpoint.clickhouse-candidate.v1","owner":"${OWNER}"}`);
    expect(isOurMarker(marker, ID, OWNER)).toBe(true);
    expect(isOurMarker(marker, ID, 'b'.repeat(64))).toBe(false);
    expect(isOurMarker(marker, 'inv-' + 'a'.repeat(26), OWNER)).toBe(false);
    expect(isOurMarker(` ${marker}`, ID, OWNER)).toBe(false);
    expect(
      isOurMarker(
        JSON.stringify({ kind: 'cutpoint.clickhouse-candidate.v1', invocationId: ID, owner: OWNER }),
        ID,
        OWNER,
      ),
    ).toBe(false);
    expect(isOurMarker(null, ID, OWNER)).toBe(false);
    expect(isOurMarker(marker, 'not-an-id', OWNER)).toBe(false);
    expect(() => candidateMarkerOf(ID, "x'); DROP TABLE t; --")).toThrow(
      expect.objectContaining({ code: 'publication.invalid_owner' }),
    );
  });

  it('lists the publication cut points by their shared names', () => {
    expect(Object.values(PUBLICATION_CUT_POINTS).sort()).toEqual([
      'publication.candidate.create',
      'publication.candidate.fill',
      'publication.commit.record',
      'publication.dispatch.intent',
      'publication.exchange',
      'publication.fence.rename',
      'publication.load.insert',
      'publication.observe',
      'publication.predecessor.drop',
    ]);
  });

  it('accepts only Atomic and Shared databases for EXCHANGE (publication.exchange_unsupported otherwise)', () => {
    expect(() => assertExchangeEngine('dwh', 'Atomic')).not.toThrow();
    expect(() => assertExchangeEngine('dwh', 'Shared')).not.toThrow();
    for (const engine of ['Memory', 'Overlay', 'Ordinary', 'Replicated', 'Lazy', undefined]) {
      expect(() => assertExchangeEngine('dwh', engine)).toThrow(
        expect.objectContaining({ name: 'Publication.ExchangeUnsupported', code: 'publication.exchange_unsupported' }),
      );
    }
  });
});
