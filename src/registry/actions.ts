/**
 * The table and bucket action sets registry steps share, each declared once (CDK grants a
 * step exactly its entry's actions: infra/step-policy.ts), and the partition-key patterns a
 * DeleteItem grant is limited to.
 */
import type { BucketAction, TableAction } from './step-entry.js';

export const READ = ['dynamodb:GetItem'] satisfies TableAction[];
/**
 * A journal step reloads the invocation record (GetItem), may read its journal (Query),
 * and moves it by a fenced conditional write or transaction.
 */
export const JOURNAL: TableAction[] = [
  'dynamodb:GetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:ConditionCheckItem',
];
/**
 * A journal step that reads a capsule checks its continuity (src/quality/capsule-continuity.ts):
 * the authority table's binding (DescribeTable) too. The quality steps, and the delivery
 * steps gated on a capsule or reading a predecessor's.
 */
export const CAPSULE: TableAction[] = [...JOURNAL, 'dynamodb:DescribeTable'];
/**
 * A read-only quality step (the quality-replay and quality-diagnose flows): the invocation
 * record and its capsule (GetItem, which TransactGetItems needs too) and the authority
 * table's binding (DescribeTable); no write, no Query.
 */
export const CAPSULE_READ: TableAction[] = ['dynamodb:GetItem', 'dynamodb:DescribeTable'];

/*
 * Reading a missing key answers 404 only to a caller that may list the bucket; without
 * s3:ListBucket S3 answers 403, which would hide "absent" from every exact-identity probe,
 * so every step that reads objects also gets s3:ListBucket.
 */
export const READ_OBJECTS: BucketAction[] = ['s3:GetObject', 's3:ListBucket'];
export const WRITE_OBJECTS: BucketAction[] = ['s3:GetObject', 's3:PutObject', 's3:ListBucket'];
/** The stream GC steps' reads (listing first: they page through the lane's keys). */
export const LIST_OBJECTS: BucketAction[] = ['s3:ListBucket', 's3:GetObject'];

/** Partition keys of the stream's generation items (`gen#stream/<stream>/p<partition>/...`). */
export const STREAM_GENERATION_KEYS = 'gen#stream/*';
/** Partition keys of every generation root's items (`gen#<root>`): task cleanup deletes task items under them. */
export const GENERATION_KEYS = 'gen#*';
/** Partition keys of the lanes' GC items (`gc#<stream>/<partition>`: lifecycle roots, leases). */
export const GC_KEYS = 'gc#*';
/** Partition keys of the lanes' own items (`lane#<stream>/<partition>`). */
export const LANE_KEYS = 'lane#*';
