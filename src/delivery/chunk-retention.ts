import { ConfigError } from '../domain/errors.js';

/**
 * How long delivered chunk objects stay in the bucket: the parameters of the S3 lifecycle
 * rule the infrastructure declares (one rule: prefix `keyPrefix`, tag `tagKey=tagValue`,
 * expiration `days` after the object's creation).
 *
 * S3 counts expiry from an object's creation, not from an event, so the rule matches only
 * tagged objects: at custody release an invocation's chunk objects (and only those:
 * `isChunkObjectKey`; its plan and evidence documents stay) are tagged `released`. The
 * chunks of an invocation that still holds custody are never tagged, so never expire:
 * reconcile and a part's resume need them. After expiry the journal still holds every
 * chunk's receipt (SHA-256, rows, bytes); a part resume that needs a gone chunk says so
 * (Delivery.EvidenceExpired, `delivery.chunk_expired`).
 */
export const CHUNK_RETENTION = {
  /** Every delivery object lives under this prefix (src/domain/delivery/identifiers.ts). */
  keyPrefix: 'delivery/',
  tagKey: 'cutpoint-retention',
  tagValue: 'released',
  /** Days after creation a released chunk is kept, unless the configuration says otherwise. */
  defaultDays: 7,
  /** S3 takes whole days; ten years is the longest retention accepted. */
  maxDays: 3650,
} as const;

/** The lifecycle rule's parameters, for the infrastructure to declare. */
export interface ChunkRetentionRule {
  keyPrefix: string;
  tag: { key: string; value: string };
  expirationDays: number;
}

/** The rule for a configured retention (`days`: whole days, 1..3650; default 7). */
export function chunkRetentionRule(days: number = CHUNK_RETENTION.defaultDays): ChunkRetentionRule {
  if (!Number.isInteger(days) || days < 1 || days > CHUNK_RETENTION.maxDays) {
    throw new ConfigError(
      'delivery.chunk_retention_invalid',
      `chunk retention must be a whole number of days in [1, ${CHUNK_RETENTION.maxDays}]`,
    );
  }
  return {
    keyPrefix: CHUNK_RETENTION.keyPrefix,
    tag: { key: CHUNK_RETENTION.tagKey, value: CHUNK_RETENTION.tagValue },
    expirationDays: days,
  };
}

const CHUNK_KEY = /^delivery\/[a-z][a-z0-9_-]{0,63}\/inv-[^/]+\/chunk-\d{10}\.jsonl(\.gz)?$/;

/** A chunk object's key (gzip `.jsonl.gz`, or `.jsonl` written before compression): what release tags. */
export function isChunkObjectKey(key: string): boolean {
  return CHUNK_KEY.test(key);
}
