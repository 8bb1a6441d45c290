import type { ManifestIssue, ManifestIssueCode } from './manifest-types.js';

/**
 * Issue collection for manifest validation: every problem is recorded with its path (never
 * its value) and validation goes on, so one run reports them all. `issues` lists them in
 * the manifest's order (KEY_ORDER, the order docs/delivery.md "The route manifest" documents), a
 * misplaced key first at its level, then each route and binding as written.
 */

const MAX_ISSUES = 50;

export type Segment = string | number;

const PLAIN_SEGMENT = /^[A-Za-z0-9_-]+$/;

export function renderPath(path: readonly Segment[]): string {
  if (path.length === 0) return '(document)';
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (PLAIN_SEGMENT.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg.length > 64 ? `${seg.slice(0, 64)}…` : seg)}]`;
  }
  return out;
}

/** The documented order of a manifest's keys; a key not listed (unknown) sorts first at its level. */
const KEY_ORDER = [
  'version',
  'bindings',
  'routes',
  'kind',
  'url_env',
  'username_env',
  'password_env',
  'secret_arn',
  'source',
  'window',
  'target',
  'quality',
  'chunk_rows',
  'part_rows',
  'max_concurrency',
  'binding',
  'table',
  'query',
  'time_column',
  'key_columns',
  'mode',
  'start',
  'end',
  'days',
  'boundary',
  'capsule',
  'target_observation',
  'replay_window_days',
  'row_count_matches_receipts',
  'unique_keys',
  'not_null',
  'assertions',
  'deadline_s',
  'keeper_no_node_retry',
  'max_attempts',
  'max_elapsed_ms',
  'name',
  'sql',
  'expect',
];

interface Entry {
  path: readonly Segment[];
  issue: ManifestIssue;
}

export class Checker {
  private readonly entries: Entry[] = [];

  /** @param names the route and binding names in document order, for ordering their issues. */
  constructor(private readonly names: (section: string) => readonly string[] = () => []) {}

  add(path: readonly Segment[], message: string, code: ManifestIssueCode = 'delivery.manifest_invalid'): undefined {
    this.entries.push({ path: [...path], issue: { path: renderPath(path), code, message } });
    return undefined;
  }

  /** Whether an issue was recorded at `path` or under it: a node with a problem is not judged further. */
  has(path: readonly Segment[]): boolean {
    return this.entries.some((e) => path.every((seg, i) => e.path[i] === seg));
  }

  get issues(): ManifestIssue[] {
    const ranked = this.entries.map((e) => ({ e, rank: e.path.map((seg, i) => this.rank(e.path, seg, i)) }));
    ranked.sort((a, b) => compare(a.rank, b.rank));
    return ranked.slice(0, MAX_ISSUES).map(({ e }) => e.issue);
  }

  private rank(path: readonly Segment[], seg: Segment, depth: number): number {
    if (typeof seg === 'number') return seg;
    if (depth === 1 && (path[0] === 'routes' || path[0] === 'bindings')) return this.names(path[0]).indexOf(seg);
    return KEY_ORDER.indexOf(seg);
  }
}

/** Segment by segment; a path before the paths under it; equal paths keep the order they were found in. */
function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return (a[i] ?? 0) - (b[i] ?? 0);
  return a.length - b.length;
}
