import { writeExactlyOnce } from '../authority/resolve.js';
import { sha256Hex } from '../domain/digest.js';
import { IdentityConflictError } from '../domain/errors.js';
import type { Ports } from '../ports/index.js';
import { probeExact, putExact, type ExactPutResult } from './exact-object.js';
import { OBJECT_CUT_POINTS } from './cut-points.js';
import { assertOperatorKey } from './reserved-keys.js';

/** The authority item that names which bytes an operator key holds, forever. */
export const objectClaimKey = (key: string) => ({ pk: `object#${key}`, sk: 'claim' });

/**
 * An operator's immutable object write (`cutpoint object put`). A key names one content
 * forever: the same bytes again are REUSED, other bytes are `objects.identity_conflict`
 * with nothing written. The bucket's create-only write refuses a taken key but cannot
 * say whose bytes won a race (and a store without `If-None-Match` would not refuse), so
 * uniqueness is decided in the authority, race-safe:
 * 1. keys under the system's own roots are refused (`objects.reserved_key`);
 * 2. what is already under the key is compared (the same bytes: REUSED, nothing written;
 *    other bytes: conflict — this also covers objects written before claims existed);
 * 3. the key is claimed by a conditional create of `object#<key>` naming the SHA-256
 *    (absent, or the same SHA-256 → proceed; another SHA-256 → conflict, nothing
 *    written). Two racing writers of different bytes both pass step 2, exactly one wins
 *    the claim, the other writes nothing;
 * 4. the PUT (`If-None-Match: *`) resolved by reading the exact key back (`putExact`).
 */
export async function putOperatorObject(
  ports: Pick<Ports, 'authority' | 'objects'>,
  key: string,
  bytes: Uint8Array,
): Promise<ExactPutResult> {
  assertOperatorKey(key);
  const sha256 = sha256Hex(bytes);
  const conflict = () =>
    new IdentityConflictError(
      'objects.identity_conflict',
      `object ${key} already holds other bytes; objects are immutable: choose another key`,
    );
  const existing = await probeExact(ports.objects, key, { sha256 });
  if (existing === 'MATCH') return { status: 'REUSED', key, sha256, size: bytes.byteLength };
  if (existing === 'CONFLICT') throw conflict();
  const claimKey = objectClaimKey(key);
  const claim = await writeExactlyOnce(
    ports.authority,
    OBJECT_CUT_POINTS.claim,
    claimKey,
    () => ports.authority.put(OBJECT_CUT_POINTS.claim, { ...claimKey, key, sha256, size: bytes.byteLength }, 'absent'),
    (item) => item.sha256 === sha256,
  );
  if (claim.status === 'CONFLICT') throw conflict();
  return putExact(ports.objects, OBJECT_CUT_POINTS.put, key, bytes, { sha256 });
}
