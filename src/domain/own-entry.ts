/**
 * `table[key]` when `key` is one of the table's own properties, else `undefined`: never
 * what every object inherits (`__proto__`, `constructor`, `toString`, `hasOwnProperty`,
 * `valueOf`, `__defineGetter__` …). The one lookup for a name an operator or a document
 * supplies (a command, subcommand, route, binding): such a name is unknown, never a
 * prototype member.
 */
export function ownEntry<T>(table: Readonly<Record<string, T>>, key: string | undefined): T | undefined {
  return key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}
