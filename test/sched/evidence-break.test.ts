import { describe, expect, it, vi } from 'vitest';
import { COMPLETION_KIND } from '../../src/domain/quality/evidence.js';
import type * as Evidence from '../../src/quality/evidence.js';
import { firstBreak, scenarioWorld } from '../support/sched/vitest-schedules.js';
import { publicationScenario } from './scenarios/publication.js';

/*
 * COMPLETE WITHOUT ITS EVIDENCE: the completion record names a completion.json that was
 * never written (its put skipped, the fact recorded as if it had been). A governance is
 * COMPLETE only with its evidence: the publication scenario's checker must catch it on its
 * CI seeds — the governance invariants (I9: recorded evidence exists and verifies), or the
 * settle check, since inspect then never lets the operation finish (completion evidence
 * pending, resume offered, and resume cannot repair what the record says is there).
 */
vi.mock('../../src/quality/evidence.js', async (importOriginal) => {
  const actual = await importOriginal<typeof Evidence>();
  return {
    ...actual,
    putEvidence: async (...args: Parameters<typeof Evidence.putEvidence>) => {
      const [, , key, document] = args;
      if (document.kind !== COMPLETION_KIND) return actual.putEvidence(...args);
      const { bytes, sha256 } = actual.evidenceBytes(document);
      return { status: 'WRITTEN' as const, key, sha256, size: bytes.byteLength };
    },
  };
});

const CI_SEEDS = 20;

describe('COMPLETE without its evidence: the governance checker catches it', () => {
  const world = scenarioWorld(publicationScenario);

  it('a CI seed of the publication scenario fails: the evidence is missing (I9) or the governance never settles without it', async () => {
    const found = await firstBreak(publicationScenario, world(), CI_SEEDS, 'a COMPLETE without its evidence');
    expect(found.error).toMatchObject({
      name: 'Sched.InvariantViolation',
      message: expect.stringMatching(/I9|completion_evidence/),
    });
  }, 600_000);
});
