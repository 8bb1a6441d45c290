import { createHash } from 'node:crypto';
import type { TableRef, TimeWindow } from './target-types.js';
import { canonicalJson } from '../digest.js';
import { MAX_IDENTIFIER_LENGTH } from './target-rules.js';

/**
 * The pure rules of publication by partition swap (a replace_window into a target
 * partitioned by range on its time column): the stable name of a window's partition, the
 * marker a published partition carries, and which partition layouts allow a swap. No I/O.
 */

const PUBLISHED_KIND = 'cutpoint.published.v1';

/**
 * The table comment of a stage that became the target's window partition: published data
 * of `invocationId`. It is not an owner marker (`parseOwnerMarker` refuses it), so no stage
 * recheck ever takes a published partition for a stage.
 */
export function publishedMarker(invocationId: string): string {
  return canonicalJson({ kind: PUBLISHED_KIND, invocationId });
}

/** The invocation a published partition's marker names, or undefined for any other comment. */
export function publishedInvocationOf(text: string | null | undefined): string | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const value = JSON.parse(text) as { kind?: unknown; invocationId?: unknown };
    return value.kind === PUBLISHED_KIND && typeof value.invocationId === 'string' ? value.invocationId : undefined;
  } catch {
    return undefined;
  }
}

/** `2026-11-01T10:00:00.000Z` → `20261101100000` (milliseconds appended only when not zero). */
function compact(instant: Date): string {
  const iso = instant.toISOString();
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  const ms = iso.slice(20, 23);
  return ms === '000' ? digits : `${digits}${ms}`;
}

/**
 * The stable name of the target's partition for a window, derived from the target and the
 * window alone, so the next replace of the window (and cleanup, from the receipt) finds it:
 * `<table>_p<start>_<end>` in UTC (`events_p20261101000000_20261102000000`); when that is
 * longer than an identifier may be, the table name is cut and a digest of the full name
 * keeps it unique.
 */
export function windowPartitionNameOf(target: TableRef, window: TimeWindow): string {
  const tail = `_p${compact(window.start)}_${compact(window.end)}`;
  const full = `${target.table}${tail}`;
  if (full.length <= MAX_IDENTIFIER_LENGTH) return full;
  const digest = createHash('sha256')
    .update(canonicalJson([target.schema, target.table, window.start.toISOString(), window.end.toISOString()]))
    .digest('hex')
    .slice(0, 8);
  const room = MAX_IDENTIFIER_LENGTH - tail.length - digest.length - 1;
  return `${target.table.slice(0, Math.max(room, 1))}_${digest}${tail}`.slice(0, MAX_IDENTIFIER_LENGTH);
}

/** A range partition's bounds as its catalog prints them: a literal, or MINVALUE/MAXVALUE (null). */
export interface RangeBound {
  from: string | null;
  to: string | null;
}

/**
 * Parses PostgreSQL's `pg_get_expr(relpartbound)` of a single-column range partition:
 * `FOR VALUES FROM ('…') TO ('…')`, MINVALUE/MAXVALUE as null; `DEFAULT` and anything else
 * (list, hash, several columns) → undefined.
 */
export function parseRangeBound(text: string): RangeBound | undefined {
  const literal = String.raw`'((?:[^']|'')*)'|(MINVALUE|MAXVALUE)`;
  const match = new RegExp(String.raw`^FOR VALUES FROM \((?:${literal})\) TO \((?:${literal})\)$`).exec(text);
  if (!match) return undefined;
  const value = (quoted: string | undefined) => (quoted === undefined ? null : quoted.replace(/''/g, "'"));
  return { from: value(match[1]), to: value(match[3]) };
}

/** One partition of the target as the swap decision sees it (bounds compared by the server). */
export interface PartitionFacts {
  name: string;
  isDefault: boolean;
  /** Its bounds are exactly [window.start, window.end). */
  exact: boolean;
  /** Its bounds intersect the window (any partition whose bounds could not be read counts). */
  overlaps: boolean;
  /** A plain table (not itself partitioned), so it can be detached and dropped as one. */
  leaf: boolean;
}

export type SwapDecision = { swap: true; replaces?: string } | { swap: false; reason: string };

/**
 * Whether the window can be published by swapping the stage in as its partition:
 * no partition intersects the window but one with exactly its bounds (replaced), that one a
 * plain table, and no default partition holding rows of the window (ATTACH would refuse:
 * those rows are the window's, and the set-based path replaces them).
 */
export function decideSwap(
  partitions: readonly PartitionFacts[],
  defaultHoldsWindowRows: boolean,
  stableName: string,
  stableNameTakenByOther: boolean,
): SwapDecision {
  const exact = partitions.filter((p) => !p.isDefault && p.exact);
  const others = partitions.filter((p) => !p.isDefault && !p.exact && p.overlaps);
  if (others.length > 0)
    return {
      swap: false,
      reason: `the window is not exactly one partition's bounds: it overlaps partition ${others
        .map((p) => p.name)
        .sort()
        .join(', ')}`,
    };
  if (exact.length > 1) return { swap: false, reason: 'more than one partition has the window as its bounds' };
  const replaced = exact[0];
  if (replaced && !replaced.leaf)
    return { swap: false, reason: `the window's partition ${replaced.name} is itself partitioned` };
  if (defaultHoldsWindowRows) return { swap: false, reason: 'the default partition holds rows of the window' };
  if (stableNameTakenByOther)
    return { swap: false, reason: `the partition name ${stableName} is taken by another table` };
  return replaced ? { swap: true, replaces: replaced.name } : { swap: true };
}
