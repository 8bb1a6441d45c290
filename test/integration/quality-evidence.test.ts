import { describe, expect, it } from 'vitest';
import { inertFaults } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import { qualityEvidenceKeyOf } from '../../src/domain/delivery/identifiers.js';
import { freePort } from '../../src/local/free-port.js';
import { evidenceBytes, putEvidence, readEvidence } from '../../src/quality/evidence.js';
import { freshStores } from '../support/emulators.js';

const KIND = 'cutpoint.quality-prepared.v1';
const ID = 'inv-abcdefghijklmnopqrstuvwx2a';

describe('quality evidence objects: every read is valid, missing, malformed or unreadable — never a default', () => {
  it('a written document reads back valid, by the recorded SHA-256 and by its own metadata; a re-put writes the same bytes', async () => {
    const { ports } = await freshStores();
    const key = qualityEvidenceKeyOf('daily', ID, 'prepared');
    const document = { kind: KIND, invocation_id: ID, probes: [{ name: 'row_count', expect: 3 }] };
    const first = await putEvidence(ports.objects, 'quality.prepared.put', key, document, ID);
    expect(first.status).toBe('WRITTEN');
    expect(first.sha256).toBe(evidenceBytes(document).sha256);
    // A re-run writes the same bytes (the emulator does not enforce If-None-Match, S3 does: REUSED there).
    expect((await putEvidence(ports.objects, 'quality.prepared.put', key, document, ID)).sha256).toBe(first.sha256);
    expect(await readEvidence(ports.objects, key, KIND, first.sha256)).toEqual({ status: 'valid', document, sha256: first.sha256 });
    expect((await readEvidence(ports.objects, key, KIND)).status).toBe('valid');
  });

  it('absent → missing; other bytes than recorded, not JSON, or another kind → malformed', async () => {
    const { ports } = await freshStores();
    const key = qualityEvidenceKeyOf('daily', ID, 'completion');
    expect(await readEvidence(ports.objects, key, KIND, 'a'.repeat(64))).toEqual({ status: 'missing', code: 'quality.evidence_missing' });

    const completion = { kind: KIND, version: 7 };
    const { sha256 } = await putEvidence(ports.objects, 'quality.completion.put', key, completion, ID);
    expect(await readEvidence(ports.objects, key, KIND, 'b'.repeat(64))).toMatchObject({ status: 'malformed', why: 'checksum' });
    expect(await readEvidence(ports.objects, key, 'cutpoint.other.v1', sha256)).toMatchObject({ status: 'malformed', why: 'kind' });

    const junk = qualityEvidenceKeyOf('daily', ID, 'prepared');
    const bytes = Buffer.from('{"kind": "cutpoint.quality-prepared.v1"', 'utf8');
    const { sha256: junkSha } = evidenceBytes({});
    await ports.objects.put('test.raw', junk, bytes, { sha256: junkSha });
    expect(await readEvidence(ports.objects, junk, KIND)).toMatchObject({ status: 'malformed', why: 'checksum' });
    const { createHash } = await import('node:crypto');
    const own = createHash('sha256').update(bytes).digest('hex');
    const junk2 = `${junk}.2`;
    await ports.objects.put('test.raw', junk2, bytes, { sha256: own });
    expect(await readEvidence(ports.objects, junk2, KIND, own)).toMatchObject({ status: 'malformed', why: 'not_json' });
  });

  it('a store that cannot be read → unreadable with the error name only (no endpoint, bucket or key in it)', async () => {
    const { config } = await freshStores();
    const closed = await freePort();
    const ports = awsPorts({ ...config, endpoints: { ...config.endpoints, s3: `http://127.0.0.1:${closed}` } }, inertFaults);
    const read = await readEvidence(ports.objects, qualityEvidenceKeyOf('daily', ID, 'prepared'), KIND, 'c'.repeat(64));
    expect(read.status).toBe('unreadable');
    expect(read).toMatchObject({ code: 'quality.evidence_unreadable' });
    expect(JSON.stringify(read)).not.toMatch(/127\.0\.0\.1|cutpoint-test|prepared\.json/);
  });
});
