import fc from 'fast-check';
import { parseDocument } from 'yaml';

/**
 * A route manifest with one defect, as text: a YAML syntax error, a duplicate key, an
 * unknown key, a value of the wrong type, a required field removed, or a binding naming
 * an impossible variable — each inside the selected route (or the whole document), so the
 * route can never be selected from it. `edited` is a manifest that is still valid but is
 * not the one sealed (a wrong digest for a live action, fine for a new run).
 */

export interface ManifestMutation {
  what: string;
  text: string;
}

/** Line indices [start, end) of the body of `route` (the lines under `  route:`). */
function routeBody(lines: string[], route: string): [number, number] {
  const start = lines.indexOf(`  ${route}:`) + 1;
  let end = start;
  while (end < lines.length && /^ {4}/.test(lines[end] as string)) end++;
  return [start, end];
}

const replaceIn = (text: string, route: string, re: RegExp, by: string): string => {
  const lines = text.split('\n');
  const [start, end] = routeBody(lines, route);
  for (let i = start; i < end; i++) {
    if (re.test(lines[i] as string)) {
      lines[i] = (lines[i] as string).replace(re, by);
      break;
    }
  }
  return lines.join('\n');
};

/** `route` with its single-line field `key` set to `value` (replaced if present, else appended to the route). */
function setRouteField(base: string, route: string, key: string, value: string): string {
  const lines = base.split('\n');
  const [start, end] = routeBody(lines, route);
  const body = lines.slice(start, end).filter((l) => !l.startsWith(`    ${key}:`));
  return [...lines.slice(0, start), ...body, `    ${key}: ${value}`, ...lines.slice(end)].join('\n');
}

const yamlBroken = (text: string): boolean => parseDocument(text).errors.length > 0;
const unknownKey = fc
  .stringMatching(/^[a-z][a-z_]{0,12}$/)
  .filter((k) => !['source', 'window', 'target', 'quality', 'chunk_rows', 'description'].includes(k));
const scalar = fc.oneof(
  fc.integer().map(String),
  fc.stringMatching(/^[a-z]{1,8}$/),
  fc.constantFrom('true', 'null', '[1, 2]', '{ a: 1 }'),
);

/** An invalid manifest for `route`: no part of it can select the route. */
export function brokenManifest(base: string, route: string): fc.Arbitrary<ManifestMutation> {
  const lines = base.split('\n');
  const [start, end] = routeBody(lines, route);
  const at = fc.integer({ min: start, max: end });
  const insert = (i: number, line: string) => [...lines.slice(0, i), line, ...lines.slice(i)].join('\n');
  return fc.oneof(
    fc
      .tuple(
        fc.integer({ min: 0, max: lines.length }),
        fc.constantFrom(
          '}',
          'x: "unterminated',
          '    - [',
          '\t  chunk_rows: 1',
          'routes: [',
          '? ? ?',
          '- a\nb: c',
          '&a [*b]',
          ': x',
        ),
      )
      .map(([i, junk]) => ({ what: `yaml syntax ${JSON.stringify(junk)} at line ${i}`, text: insert(i, junk) }))
      .filter((m) => yamlBroken(m.text)),
    fc
      .integer({ min: start, max: end - 1 })
      .map((i) => ({ what: `duplicate key at line ${i}`, text: insert(i + 1, lines[i] as string) }))
      .filter((m) => yamlBroken(m.text)),
    fc
      .tuple(at, unknownKey, scalar)
      .map(([i, k, v]) => ({ what: `unknown route key ${k}`, text: insert(i, `    ${k}: ${v}`) })),
    fc
      .oneof(
        fc.constantFrom('many', '-1', '0', '1.5', '[400]', '"400"', 'null', '~', 'true'),
        fc.integer({ max: 0 }).map(String),
      )
      .map((v) => ({ what: `chunk_rows ${v}`, text: replaceIn(base, route, /chunk_rows: \d+/, `chunk_rows: ${v}`) })),
    fc
      .stringMatching(/^[a-z_]{1,14}$/)
      .filter((m) => m !== 'replace_window' && m !== 'merge')
      .map((m) => ({ what: `target mode ${m}`, text: replaceIn(base, route, /mode: replace_window/, `mode: ${m}`) })),
    fc
      .stringMatching(/^[a-z]{1,10}$/)
      .filter((k) => k !== 'fixed' && k !== 'rolling')
      .map((k) => ({ what: `window kind ${k}`, text: replaceIn(base, route, /kind: fixed/, `kind: ${k}`) })),
    fc
      .constantFrom(
        '2026-11-04T00:00:00Z',
        '2026-13-02T00:00:00Z',
        'yesterday',
        '2026-11-02T00:00:00+01:00',
        '2026-11-02',
      )
      .map((v) => ({ what: `window start ${v}`, text: replaceIn(base, route, /start: "[^"]+"/, `start: "${v}"`) })),
    fc
      .constantFrom('source', 'window', 'target')
      .map((k) => ({ what: `route without ${k}`, text: replaceIn(base, route, new RegExp(`^ {4}${k}: .*$`), '') })),
    fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/).map((b) => ({
      what: `route names unknown binding ${b}`,
      text: replaceIn(base, route, /binding: warehouse/, `binding: missing_${b}`),
    })),
    fc.constantFrom('dwh', 'dwh.events.extra', 'dwh.Events-1', 'dwh."x"', '').map((t) => ({
      what: `target table ${JSON.stringify(t)}`,
      text: replaceIn(base, route, /table: dwh\.\w+/, `table: ${t}`),
    })),
    fc
      .constantFrom('2', '"1"', '0', 'one')
      .map((v) => ({ what: `version ${v}`, text: base.replace('version: 1', `version: ${v}`) })),
    fc.constantFrom('lower_case', '1ABC', 'A-B', '').map((v) => ({
      what: `url_env ${JSON.stringify(v)}`,
      text: base.replace(/url_env: FUZZ_PG_URL/, `url_env: ${v}`),
    })),
    fc
      .constantFrom('', '\n', '---\n', '[]', 'null', 'version: 1\n', '\u0000')
      .map((t) => ({ what: `whole manifest ${JSON.stringify(t)}`, text: t })),
    // What YAML would take silently: an integer not written in decimal, a value followed by whitespace YAML drops.
    fc
      .constantFrom('1.0', '1e0', '0x1', '01', '+1')
      .map((v) => ({ what: `version ${v}`, text: base.replace('version: 1', `version: ${v}`) })),
    fc.constantFrom(' ', '\t', '   ').map((ws) => ({
      what: `target table followed by ${JSON.stringify(ws)}`,
      text: replaceIn(base, route, /table: (dwh\.\w+),/, `table: $1${ws},`),
    })),
    fc
      .constantFrom('100001', '1000000', '0x190')
      .map((v) => ({ what: `chunk_rows ${v}`, text: replaceIn(base, route, /chunk_rows: \d+/, `chunk_rows: ${v}`) })),
    fc
      .constantFrom('1', '399')
      .map((v) => ({ what: `part_rows ${v} below chunk_rows`, text: setRouteField(base, route, 'part_rows', v) })),
    fc
      .constantFrom(
        '{}',
        '{ row_count_matches_receipts: false }',
        '{ row_count_matches_receipts: false, unique_keys: false, not_null: [] }',
      )
      .map((q) => ({ what: `quality ${q}`, text: setRouteField(base, route, 'quality', q) })),
  );
}

/**
 * A valid manifest whose `route` cannot be delivered: its target table missing, differing
 * only in case, a system catalog, the receipts table, or a column the route names that
 * the table lacks. Begin refuses it read-only before custody (src/domain/delivery/target-check.ts).
 */
export function undeliverableTarget(base: string, route: string): fc.Arbitrary<ManifestMutation> {
  const table = (to: string) => replaceIn(base, route, /table: dwh\.\w+,/, `table: ${to},`);
  const upper = (
    /table: (dwh\.\w+),/.exec(
      base
        .split('\n')
        .slice(...routeBody(base.split('\n'), route))
        .join('\n'),
    )?.[1] ?? 'dwh.events'
  ).toUpperCase();
  return fc.oneof(
    fc
      .constantFrom(
        'dwh.nosuch_table',
        upper,
        'pg_catalog.pg_class',
        'information_schema.tables',
        'public.cutpoint_receipts',
      )
      .map((t) => ({ what: `target table ${t}`, text: table(t) })),
    fc.constantFrom('nosuch', 'EVENT_ID').map((c) => ({
      what: `target key column ${c}`,
      text: replaceIn(base, route, /key_columns: \[event_id\], mode/, `key_columns: [${c}], mode`),
    })),
    fc.constant({
      what: 'target time column nosuch',
      text: replaceIn(base, route, /mode: replace_window/, 'time_column: nosuch, mode: replace_window'),
    }),
    fc.constant({
      what: 'quality not_null [event_id, nosuch]',
      text: setRouteField(base, route, 'quality', '{ not_null: [event_id, nosuch] }'),
    }),
  );
}

/** Still a valid manifest, but not the text that was sealed. */
export function editedManifest(base: string): fc.Arbitrary<ManifestMutation> {
  return fc.oneof(
    fc.stringMatching(/^[a-z ]{0,20}$/).map((c) => ({ what: 'edited: a comment added', text: `${base}# ${c}\n` })),
    fc
      .integer({ min: 1, max: 800 })
      .filter((n) => n !== 400)
      .map((n) => ({ what: `edited: chunk_rows ${n}`, text: base.replace(/chunk_rows: 400/g, `chunk_rows: ${n}`) })),
    fc.constant({ what: 'edited: trailing blank line', text: `${base}\n` }),
  );
}

/** A `--manifest` selector whose grammar is wrong, or whose route does not exist. */
export function badSelector(file: string, routes: readonly string[]): fc.Arbitrary<{ what: string; selector: string }> {
  return fc.oneof(
    fc
      .constantFrom(
        file,
        `${file}#`,
        '#daily',
        `${file}#Daily`,
        `${file}#da ily`,
        `${file}#1daily`,
        `${file}#${'r'.repeat(65)}`,
        `${file}#daily\u001b[2J`,
      )
      .map((s) => ({ what: 'selector grammar', selector: s })),
    fc
      .stringMatching(/^[a-z][a-z0-9_-]{0,20}$/)
      .filter((r) => !routes.includes(r))
      .map((r) => ({ what: 'selector unknown route', selector: `${file}#${r}` })),
  );
}

/**
 * An invalid manifest for `route` in its part sizing or its window (the fields the parts of
 * a delivery added): part_rows or max_concurrency out of range or of another type, more
 * than 100,000 chunks per part, a rolling window with a bad day count or boundary, or a
 * rolling window that also carries a fixed window's bounds.
 */
export function partsManifest(base: string, route: string): fc.Arbitrary<ManifestMutation> {
  const setField = (key: string, value: string) => setRouteField(base, route, key, value);
  const rolling = (fields: string) =>
    replaceIn(base, route, /^ {4}window: .*$/, `    window: { kind: rolling${fields} }`);
  return fc.oneof(
    fc
      .oneof(
        fc.constantFrom('0', '-1', '100000001', '1.5', '"800"', 'many', 'null', '[800]', '1e9'),
        fc.integer({ max: 0 }).map(String),
      )
      .map((v) => ({ what: `part_rows ${v}`, text: setField('part_rows', v) })),
    fc
      .oneof(
        fc.constantFrom('0', '101', '-4', '2.5', '"4"', 'all', 'null'),
        fc.integer({ min: 101, max: 1_000_000 }).map(String),
      )
      .map((v) => ({ what: `max_concurrency ${v}`, text: setField('max_concurrency', v) })),
    fc.integer({ min: 100_001, max: 100_000_000 }).map((rows) => ({
      what: `part_rows ${rows} with chunk_rows 1 (over 100,000 chunks a part)`,
      text: setField('part_rows', String(rows)).replace(
        new RegExp(`(  ${route}:[\\s\\S]*?)chunk_rows: \\d+`),
        '$1chunk_rows: 1',
      ),
    })),
    fc
      .constantFrom(
        ', days: 0, boundary: day',
        ', days: 367, boundary: day',
        ', days: 1.5, boundary: day',
        ', days: 7, boundary: week',
        ', days: 7',
        ', boundary: hour',
        ', days: "7", boundary: day',
        ', days: 7, boundary: day, start: "2026-11-02T00:00:00Z"',
      )
      .map((f) => ({ what: `rolling window${f}`, text: rolling(f) })),
  );
}
