import { isPair, isScalar, isSeq, visit, type Document } from 'yaml';
import type { Checker, Segment } from './manifest-checker.js';

/**
 * What YAML would accept silently but a manifest must not (docs/delivery.md, "The route manifest"):
 * - a plain value followed by whitespace before the line's end (or a `,`): YAML drops it, so
 *   `table: dwh.events␠` would name `dwh.events` while the operator may have meant
 *   something else (a name is written exactly, never trimmed);
 * - an integer not written as a decimal integer: every number of a manifest is an integer,
 *   and `1.0`, `1e0`, `0x1`, `01` or `+1` would silently be `1` (`version: 1.0`); a
 *   number that is no integer at all is refused where its field is checked.
 * Reported at the value's path, never with the value (it may be a misplaced secret).
 */
export function checkScalars(doc: Document, text: string, check: Checker): void {
  visit(doc, {
    Scalar(key, node, ancestors) {
      if (key === 'key' || !node.range) return;
      const source = (node as { source?: unknown }).source;
      const path = (): Segment[] => pathOf(ancestors, node);
      if (node.type === 'PLAIN' && /^[ \t]+(\r?\n|$|,)/.test(text.slice(node.range[1], node.range[2] + 1))) {
        check.add(
          path(),
          'ends in whitespace, which YAML drops silently: remove it (names and values are taken exactly as written)',
        );
      }
      if (Number.isInteger(node.value) && !(typeof source === 'string' && /^-?(0|[1-9][0-9]*)$/.test(source))) {
        check.add(
          path(),
          'must be a decimal integer such as 1 or 400 (no fraction, exponent, sign, base prefix or leading zero)',
        );
      }
    },
  });
}

function pathOf(ancestors: readonly unknown[], node: unknown): Segment[] {
  const out: Segment[] = [];
  ancestors.forEach((a, i) => {
    if (isPair(a) && isScalar(a.key)) out.push(String(a.key.value));
    else if (isSeq(a)) out.push(a.items.indexOf((ancestors[i + 1] ?? node) as never));
  });
  return out;
}
