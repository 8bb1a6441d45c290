import { ValidationError } from '../domain/errors.js';
import { validateObjectKey } from './object-key.js';

/**
 * Object roots the system writes under its own identities: stream WAL objects
 * (`walKeyOf`), generation objects (`outputKeyOf`, generation 0 of stream ranges included)
 * and delivery chunks and evidence (`chunkObjectKeyOf`, `evidenceObjectKeyOf`). Their
 * uniqueness is decided by the authority items that reference them (intent, generation
 * record, journal); no operator command writes into them. test/unit/reserved-keys.test.ts
 * ties this list to those key functions.
 */
export const SYSTEM_OBJECT_ROOTS = ['wal/', 'generations/', 'delivery/'] as const;

export function systemRootOf(key: string): string | undefined {
  return SYSTEM_OBJECT_ROOTS.find((root) => key.startsWith(root));
}

/** An operator write names a well-formed key (validateObjectKey) outside the system's roots (`objects.reserved_key`): else nothing is written. */
export function assertOperatorKey(key: string): void {
  validateObjectKey(key);
  const root = systemRootOf(key);
  if (root) {
    throw new ValidationError(
      'objects.reserved_key',
      `object key ${key} is under ${root}, which only the system writes (${SYSTEM_OBJECT_ROOTS.join(', ')}); choose another key`,
    );
  }
}
