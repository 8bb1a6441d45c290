import { ValidationError } from '../errors.js';
import { assertColumns, assertUserColumn, factsRange } from './target-rules.js';
import type { SeqRange, StagingFactsRequest } from './target-types.js';

/**
 * A quality request checked as every target adapter checks it before any I/O: its key and
 * not-null columns, unique non-empty assertion names, and its part range (`factsRange`:
 * with a range, no assertions).
 */
export function checkedFactsRequest(facts: StagingFactsRequest): {
  keys: string[];
  notNull: string[];
  range: SeqRange | undefined;
} {
  const keys = facts.keyColumns.length > 0 ? assertColumns(facts.keyColumns, 'keyColumns') : [];
  const notNull = facts.notNull.map(assertUserColumn);
  const names = new Set<string>();
  for (const a of facts.assertions) {
    if (typeof a.name !== 'string' || a.name.length === 0 || names.has(a.name)) {
      throw new ValidationError(
        'delivery.invalid_request',
        `assertion names must be unique and non-empty: ${String(a.name)}`,
      );
    }
    names.add(a.name);
  }
  return { keys, notNull, range: factsRange(facts) };
}
