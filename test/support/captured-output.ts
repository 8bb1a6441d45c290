import { vi } from 'vitest';

/**
 * Every non-empty line a test's code writes to stdout or stderr (in Lambda both go to
 * CloudWatch Logs; Powertools prints WARN/ERROR on stderr), captured instead of printed.
 * Call in beforeEach; vi.restoreAllMocks() in afterEach lets the streams go.
 */
export function captureOutputLines(): string[] {
  const lines: string[] = [];
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(
        ...String(chunk)
          .split('\n')
          .filter((l) => l.trim() !== ''),
      );
      return true;
    });
  }
  return lines;
}
