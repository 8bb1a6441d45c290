import { describe, expect, it } from 'vitest';
import {
  chunkObjectKeyOf,
  evidenceObjectKeyOf,
  invocationObjectsPrefixOf,
  mapResultsPrefixOf,
  planObjectKeyOf,
  qualityEvidenceKeyOf,
} from '../../src/domain/delivery/identifiers.js';
import {
  expiryCutoffOf,
  isWorkObjectKey,
  validateRetentionDays,
  WORK_OBJECT_GRANTS,
} from '../../src/domain/delivery/work-objects.js';
import { expireRunOf } from '../../src/delivery/expiry/expire-run.js';

/** Chunk retention's pure rules (docs/delivery.md "Chunk retention"): which keys are work objects, the cutoff, the input. */

const ID = 'inv-eydeqyom7svszgy7z5w5q75dtm';
const prefix = invocationObjectsPrefixOf('daily', ID);

describe('work objects', () => {
  it('are the chunks (compressed or not), the plan and the part results; never the evidence', () => {
    expect(isWorkObjectKey(prefix, chunkObjectKeyOf('daily', ID, 0))).toBe(true);
    expect(isWorkObjectKey(prefix, chunkObjectKeyOf('daily', ID, 42).replace(/\.gz$/, ''))).toBe(true);
    expect(isWorkObjectKey(prefix, planObjectKeyOf('daily', ID))).toBe(true);
    expect(isWorkObjectKey(prefix, `${mapResultsPrefixOf('daily', ID)}/run-1/SUCCEEDED_0.json`)).toBe(true);
    expect(isWorkObjectKey(prefix, evidenceObjectKeyOf('daily', ID))).toBe(false);
    expect(isWorkObjectKey(prefix, qualityEvidenceKeyOf('daily', ID, 'prepared'))).toBe(false);
    expect(isWorkObjectKey(prefix, qualityEvidenceKeyOf('daily', ID, 'completion'))).toBe(false);
    // Another invocation's chunk, a near miss, and something an operator put there.
    expect(isWorkObjectKey(prefix, chunkObjectKeyOf('daily', 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa', 0))).toBe(false);
    expect(isWorkObjectKey(prefix, `${prefix}chunk-1.jsonl.gz`)).toBe(false);
    expect(isWorkObjectKey(prefix, `${prefix}notes/chunk-0000000000.jsonl`)).toBe(false);
  });

  it('the IAM grants cover every work object key and no evidence key', () => {
    const granted = (key: string) =>
      WORK_OBJECT_GRANTS.some((g) => new RegExp(`^${g.replace(/[.]/g, '\\.').replace(/\*/g, '.*')}.*$`).test(key));
    for (const key of [
      chunkObjectKeyOf('daily', ID, 7),
      planObjectKeyOf('daily', ID),
      `${mapResultsPrefixOf('daily', ID)}/x`,
    ])
      expect(granted(key), key).toBe(true);
    for (const key of [evidenceObjectKeyOf('daily', ID), qualityEvidenceKeyOf('daily', ID, 'completion')])
      expect(granted(key), key).toBe(false);
  });
});

describe('retention', () => {
  it('is a whole number of days from 1 to 3650, always given', () => {
    for (const days of [1, 7, 3650]) expect(validateRetentionDays(days)).toBe(days);
    for (const bad of [undefined, 0, -1, 1.5, 3651, '7', null, Number.NaN])
      expect(() => validateRetentionDays(bad)).toThrow(expect.objectContaining({ code: 'delivery.retention_invalid' }));
  });

  it('the cutoff is that many days before now', () => {
    expect(expiryCutoffOf(new Date('2026-12-08T10:00:00.000Z'), 7)).toBe('2026-12-01T10:00:00.000Z');
  });
});

describe('an expire run', () => {
  const now = () => new Date('2026-12-08T10:00:00.000Z');

  it('starts from the input, with its cutoff fixed by the first page', () => {
    expect(expireRunOf({ retentionDays: 2, dryRun: true, pagesPerExecution: 5 }, now)).toEqual({
      retentionDays: 2,
      cutoff: '2026-12-06T10:00:00.000Z',
      dryRun: true,
      done: false,
      pagesPerExecution: 5,
      pages: 0,
      spent: false,
      totals: { invocations: 0, objects: 0, bytes: 0, elsewhere: 0 },
    });
  });

  it('goes on from a run as given, without reading the clock again', () => {
    const run = expireRunOf({ retentionDays: 2 }, now);
    const later = expireRunOf({ ...run, pages: 3 }, () => {
      throw new Error('the clock is read once');
    });
    expect(later).toMatchObject({ cutoff: run.cutoff, pages: 3 });
  });

  it('refuses a bad input before reading the clock', () => {
    const clock = () => {
      throw new Error('read the clock');
    };
    for (const input of [{}, { retentionDays: 7, dryRun: 1 }, { retentionDays: 7, pagesPerExecution: 101 }, []])
      expect(() => expireRunOf(input, clock)).toThrow(expect.objectContaining({ name: 'Cutpoint.ValidationError' }));
  });
});
