/**
 * How much of a supplied value a diagnostic echoes (docs/operate.md, "Errors and outputs"):
 * a value past ECHO_LIMIT characters is cut there and ends in "…", and a list of valid names
 * stops after LIST_LIMIT with "and N more". A 100 KB argument or a manifest of 3,000 routes
 * gives a diagnostic of a few hundred bytes, never the whole input back.
 */
export const ECHO_LIMIT = 200;
export const LIST_LIMIT = 5;

/** `value`, cut to ECHO_LIMIT characters (never half a surrogate pair) plus "…" when longer. */
export function echoed(value: string): string {
  if (value.length <= ECHO_LIMIT) return value;
  const cut = value.slice(0, ECHO_LIMIT);
  return `${/[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

/** `echoed(value)` as a JSON string literal: how a diagnostic quotes what it was given. */
export function quoted(value: string): string {
  return JSON.stringify(echoed(value));
}

/** Text that echoes values it did not quote itself (a parser's message): every run of non-space characters past ECHO_LIMIT is cut as `echoed` cuts a value. */
export function echoedWithin(text: string): string {
  return text.replace(LONG_RUN, echoed);
}

const LONG_RUN = new RegExp(`\\S{${ECHO_LIMIT + 1},}`, 'g');

/** The first LIST_LIMIT of `names`, comma-separated, then "and N more". */
export function someOf(names: readonly string[]): string {
  if (names.length <= LIST_LIMIT) return names.join(', ');
  return `${names.slice(0, LIST_LIMIT).join(', ')} and ${names.length - LIST_LIMIT} more`;
}
