import { describe, expect, it } from 'vitest';
import {
  assertAuthorityBinding,
  assertContinuity,
  checkContinuity,
  compareAuthorityBinding,
  compareAuthorityBindingDigest,
  continuityError,
  continuityLabel,
  type ContinuityInput,
} from '../../src/domain/quality/continuity.js';
import { authorityBindingDigest, type AuthorityBinding } from '../../src/domain/quality/core.js';

const complete = (v_c: number, v_o: number, extra: Partial<ContinuityInput> = {}): ContinuityInput => ({
  completion: { evidence: 'valid', version: v_c },
  observedVersion: v_o,
  capsuleState: 'COMPLETE',
  itemCompletion: { version: v_c, evidenceRecorded: true },
  ...extra,
});

function refusal(input: ContinuityInput): string {
  const error = continuityError(checkContinuity(input));
  return error ? `${error.name} ${error.code}` : 'ok';
}

// U4 is a governance acceptance case (docs/testing.md#governance-acceptance).
describe('version continuity (U4, N17)', () => {
  it('v_c > v_o is an observed rollback', () => {
    expect(checkContinuity(complete(7, 6))).toEqual({
      continuity: 'rollback',
      reason: 'version',
      completionVersion: 7,
      observedVersion: 6,
      code: 'quality.authority_version_rollback',
    });
    expect(refusal(complete(7, 6))).toBe('Quality.AuthorityRollback quality.authority_version_rollback');
    expect(() => assertContinuity(complete(7, 1))).toThrow(
      expect.objectContaining({ code: 'quality.authority_version_rollback' }),
    );
  });

  it("the item's own completion version above its version is a rollback, whatever the witness says (a deleted witness included)", () => {
    const below = {
      observedVersion: 4,
      capsuleState: 'COMPLETE' as const,
      itemCompletion: { version: 6, evidenceRecorded: true },
    };
    for (const completion of [
      { evidence: 'missing' as const },
      { evidence: 'unreadable' as const },
      { evidence: 'valid' as const, version: 6 },
    ]) {
      expect(checkContinuity({ ...below, completion })).toEqual({
        continuity: 'rollback',
        reason: 'version',
        completionVersion: 6,
        observedVersion: 4,
        code: 'quality.authority_version_rollback',
      });
    }
  });

  it('v_c = v_o and v_c < v_o are accepted (an equal/higher restore is not detected: the documented limit)', () => {
    expect(checkContinuity(complete(7, 7))).toEqual({ continuity: 'ok', completionVersion: 7, observedVersion: 7 });
    expect(checkContinuity(complete(7, 9))).toEqual({ continuity: 'ok', completionVersion: 7, observedVersion: 9 });
    expect(assertContinuity(complete(7, 8)).continuity).toBe('ok');
  });

  it('a completion document while the item is not COMPLETE is a rollback, whatever the versions', () => {
    for (const capsuleState of ['PREPARED', 'TARGET_PENDING', 'FAILED'] as const) {
      const input = complete(3, 9, { capsuleState, itemCompletion: undefined });
      expect(checkContinuity(input)).toMatchObject({ continuity: 'rollback', reason: 'state' });
      expect(refusal(input)).toBe('Quality.AuthorityRollback quality.authority_version_rollback');
    }
  });

  it('missing completion evidence on a COMPLETE item is evidence_missing, never ok (N2)', () => {
    const input = complete(7, 8, { completion: { evidence: 'missing' } });
    expect(checkContinuity(input)).toEqual({ continuity: 'unknown', code: 'quality.evidence_missing' });
    expect(refusal(input)).toBe('Quality.EvidenceInvalid quality.evidence_missing');
    expect(continuityLabel(checkContinuity(input))).toBe('unknown');
  });

  it('before the evidence fact is recorded, absence is the quality.completion.put cut point', () => {
    const input = complete(7, 7, {
      completion: { evidence: 'missing' },
      itemCompletion: { version: 7, evidenceRecorded: false },
    });
    expect(refusal(input)).toBe('Quality.CompletionEvidencePending quality.completion_evidence_pending');
  });

  it('malformed or unreadable witnesses are never ok', () => {
    expect(refusal(complete(7, 8, { completion: { evidence: 'malformed' } }))).toBe(
      'Quality.EvidenceInvalid quality.evidence_malformed',
    );
    expect(refusal(complete(7, 8, { completion: { evidence: 'unreadable' } }))).toBe(
      'Quality.EvidenceInvalid quality.evidence_unreadable',
    );
    expect(
      refusal(
        complete(7, 8, { completion: { evidence: 'unreadable' }, capsuleState: 'PREPARED', itemCompletion: undefined }),
      ),
    ).toBe('Quality.EvidenceInvalid quality.evidence_unreadable');
  });

  it('a witness and an item naming different completions contradict each other', () => {
    expect(refusal(complete(7, 9, { itemCompletion: { version: 6, evidenceRecorded: true } }))).toBe(
      'Quality.EvidenceInvalid quality.evidence_malformed',
    );
    expect(refusal(complete(7, 9, { itemCompletion: undefined }))).toBe(
      'Quality.EvidenceInvalid quality.evidence_malformed',
    );
  });

  it('no completion anywhere before COMPLETE: nothing to compare (observe may run), never ok for replay', () => {
    const input: ContinuityInput = {
      completion: { evidence: 'missing' },
      observedVersion: 4,
      capsuleState: 'TARGET_PENDING',
    };
    expect(checkContinuity(input)).toEqual({ continuity: 'not_completed', observedVersion: 4 });
    expect(continuityLabel(checkContinuity(input))).toBe('unknown');
    expect(() => assertContinuity(input)).toThrow(expect.objectContaining({ code: 'quality.evidence_missing' }));
  });

  it('labels for diagnose', () => {
    expect(continuityLabel(checkContinuity(complete(2, 2)))).toBe('ok');
    expect(continuityLabel(checkContinuity(complete(3, 2)))).toBe('rollback');
  });

  it('refuses nonsense versions as malformed', () => {
    expect(() => checkContinuity(complete(0, 2))).toThrow(
      expect.objectContaining({ code: 'quality.evidence_malformed' }),
    );
    expect(() => checkContinuity(complete(2, 0))).toThrow(
      expect.objectContaining({ code: 'quality.evidence_malformed' }),
    );
  });
});

describe('authority binding (N18)', () => {
  const sealed: AuthorityBinding = {
    tableArn: 'arn:aws:dynamodb:us-east-1:1:table/cutpoint',
    tableId: 'id-1',
    creationDateTime: '2026-01-01T00:00:00.000Z',
  };
  const local: AuthorityBinding = { ...sealed, tableId: null };

  it('the same table matches (also with another spelling of the same instant)', () => {
    expect(compareAuthorityBinding(sealed, { ...sealed })).toBe('match');
    expect(compareAuthorityBinding(sealed, { ...sealed, creationDateTime: '2026-01-01T00:00:00Z' })).toBe('match');
    expect(
      compareAuthorityBindingDigest(authorityBindingDigest(sealed), {
        ...sealed,
        creationDateTime: '2026-01-01T00:00:00Z',
      }),
    ).toBe('match');
    expect(() => assertAuthorityBinding('match')).not.toThrow();
  });

  it('a recreated table is replaced: TableId when present, CreationDateTime always', () => {
    expect(compareAuthorityBinding(sealed, { ...sealed, tableId: 'id-2' })).toBe('replaced');
    expect(compareAuthorityBinding(sealed, { ...sealed, tableId: null })).toBe('replaced');
    // DynamoDB Local: no TableId, same ARN, new CreationDateTime.
    expect(compareAuthorityBinding(local, { ...local, creationDateTime: '2026-01-01T00:00:01.000Z' })).toBe('replaced');
    expect(compareAuthorityBinding(local, { ...local })).toBe('match');
    expect(compareAuthorityBinding(sealed, { ...sealed, tableArn: 'arn:aws:dynamodb:us-east-1:1:table/other' })).toBe(
      'replaced',
    );
    expect(
      compareAuthorityBindingDigest(authorityBindingDigest(local), {
        ...local,
        creationDateTime: '2026-02-01T00:00:00.000Z',
      }),
    ).toBe('replaced');
    expect(() => assertAuthorityBinding('replaced')).toThrow(
      expect.objectContaining({ name: 'Quality.AuthorityReplaced', code: 'quality.authority_replaced' }),
    );
  });

  it('an unparsable creation time is malformed, never a match', () => {
    expect(() => compareAuthorityBinding(sealed, { ...sealed, creationDateTime: 'yesterday' })).toThrow(
      expect.objectContaining({ code: 'quality.evidence_malformed' }),
    );
  });
});
