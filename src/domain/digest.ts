import { createHash } from 'node:crypto';

/** A SHA-256 as every identity spells it: 64 lower-case hex digits. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Hex SHA-256 of bytes or UTF-8 text: the checksum domain of every object generation. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Digest of a value's canonical JSON (keys sorted at every depth), so two processes that
 * build the same identity from the same facts get the same digest.
 */
export function canonicalDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([k, v]) => [k, sortKeys(v)]));
  }
  return value;
}
