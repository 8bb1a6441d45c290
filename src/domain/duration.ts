/**
 * The one reader of an operator's duration (`--grace 10m`, `--attempt-window 7d`): decimal
 * digits and a unit — `s`, `m`, `h` or `d` — with nothing around them. A bare number
 * (`12`: seconds? days?), a space or a fraction is no duration: undefined, and each caller
 * refuses it with its own code, never guesses.
 */
const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86400 } as const;
type Unit = keyof typeof UNIT_SECONDS;

/** `30s`, `10m`, `6h`, `2d` → seconds; anything else undefined. */
export function durationSeconds(value: unknown): number | undefined {
  const match = typeof value === 'string' ? /^(\d{1,9})(s|m|h|d)$/.exec(value) : null;
  return match ? Number(match[1]) * UNIT_SECONDS[match[2] as Unit] : undefined;
}

/** Seconds as the duration an operator writes, in the largest unit that divides them (`604800` → `7d`). */
export function formatDuration(seconds: number): string {
  for (const unit of ['d', 'h', 'm'] as const) {
    if (seconds > 0 && seconds % UNIT_SECONDS[unit] === 0) return `${seconds / UNIT_SECONDS[unit]}${unit}`;
  }
  return `${seconds}s`;
}
