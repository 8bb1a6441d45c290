import { describe, expect, it } from 'vitest';
import { inertFaults } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import { qualityEvidenceKeyOf } from '../../src/domain/delivery/identifiers.js';
import { completionDocument, completionWitnessOf } from '../../src/domain/quality/evidence.js';
import { freePort } from '../../src/local/free-port.js';
import { evidenceBytes, fetchEvidence, putEvidence } from '../../src/quality/evidence.js';
import { freshStores } from '../support/emulators.js';

const ID = 'inv-abcdefghijklmnopqrstuvwx2a';
const CORE = 'c'.repeat(64);
const completion = completionDocument({
  invocationId: ID,
  coreDigest: CORE,
  candidateUuid: '0e6f5b1c-2d3a-8b4c-9d5e-6f708192a3b4',
  version: 7,
  at: '2026-12-01T00:00:00.000Z',
  runId: 'run-x',
  results: [{ name: 'row_count_matches_receipts', result: 'PASSED' }],
});

describe('quality evidence in S3: found, absent or unreadable — then verified by the domain, never a default pass', () => {
  it('a written document is found with the same bytes (a re-put writes the same SHA-256) and verifies as the witness of its version', async () => {
    const { ports } = await freshStores();
    const key = qualityEvidenceKeyOf('daily', ID, 'completion');
    const first = await putEvidence(ports.objects, 'quality.completion.put', key, completion.document, ID);
    expect(first.sha256).toBe(completion.sha256);
    expect(evidenceBytes(completion.document).sha256).toBe(completion.sha256);
    // The key is taken (If-None-Match refuses it): the exact reload finds the same bytes, REUSED.
    expect((await putEvidence(ports.objects, 'quality.completion.put', key, completion.document, ID)).sha256).toBe(
      first.sha256,
    );
    const read = await fetchEvidence(ports.objects, key);
    expect(read).toEqual({ status: 'found', bytes: completion.bytes });
    expect(completionWitnessOf(read, completion.sha256, CORE)).toEqual({ evidence: 'valid', version: 7 });
  });

  it('absent → missing; other bytes than recorded → malformed; never valid', async () => {
    const { ports } = await freshStores();
    const key = qualityEvidenceKeyOf('daily', ID, 'completion');
    const absent = await fetchEvidence(ports.objects, key);
    expect(absent).toEqual({ status: 'absent' });
    expect(completionWitnessOf(absent, completion.sha256, CORE)).toEqual({ evidence: 'missing' });
    await ports.objects.put('test.raw', key, Buffer.from(completion.bytes.replace('"version":7', '"version":9')), {
      sha256: completion.sha256,
    });
    expect(completionWitnessOf(await fetchEvidence(ports.objects, key), completion.sha256, CORE)).toEqual({
      evidence: 'malformed',
    });
  });

  it('a store that cannot be read → unreadable (no endpoint, bucket or key in what comes back)', async () => {
    const { config } = await freshStores();
    const closed = await freePort();
    const ports = awsPorts(
      { ...config, endpoints: { ...config.endpoints, s3: `http://127.0.0.1:${closed}` } },
      inertFaults,
    );
    const read = await fetchEvidence(ports.objects, qualityEvidenceKeyOf('daily', ID, 'prepared'));
    expect(read).toEqual({ status: 'unreadable' });
    expect(completionWitnessOf(read, completion.sha256, CORE)).toEqual({ evidence: 'unreadable' });
  });
});
