import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ECHO_LIMIT, echoed, echoedWithin, LIST_LIMIT, quoted, someOf } from '../../src/domain/echo.js';
import { parseFaultSpec } from '../../src/domain/faults.js';
import { captureMain, missingStateDir } from './cli-capture.js';

/**
 * The echo rule (src/domain/echo.ts): a diagnostic echoes at most ECHO_LIMIT characters of
 * a supplied value and lists at most LIST_LIMIT valid names. A 100 KB argument was echoed
 * whole on stderr, and a manifest of 3,000 routes listed every one when the selected route
 * was missing. Runs `main()` in this process against a state directory that does not exist:
 * every case is refused before anything is touched.
 */

const dirs = missingStateDir('cutpoint-echo-');
const big = 'x'.repeat(100_000);

describe('the echo rule', () => {
  it('cuts a value past ECHO_LIMIT with "…", never half a surrogate pair, and lists LIST_LIMIT names then how many more', () => {
    expect(echoed('short')).toBe('short');
    expect(echoed('y'.repeat(ECHO_LIMIT))).toBe('y'.repeat(ECHO_LIMIT));
    expect(echoed('y'.repeat(ECHO_LIMIT + 1))).toBe(`${'y'.repeat(ECHO_LIMIT)}…`);
    expect(echoed(`${'y'.repeat(ECHO_LIMIT - 1)}\u{1F4A5}z`)).toBe(`${'y'.repeat(ECHO_LIMIT - 1)}…`);
    expect(quoted(big)).toBe(JSON.stringify(`${'x'.repeat(ECHO_LIMIT)}…`));
    const parserMessage = echoedWithin(`Unknown option '--${big}'. as in '-- "--${big}"'`);
    expect(parserMessage).toMatch(/^Unknown option '--x+… as in '-- "--x+…$/);
    expect(parserMessage.length).toBeLessThan(2 * (ECHO_LIMIT + 1) + 30);
    expect(someOf(['a', 'b'])).toBe('a, b');
    expect(someOf(Array.from({ length: 3000 }, (_, i) => `r${i}`))).toBe(
      `${Array.from({ length: LIST_LIMIT }, (_, i) => `r${i}`).join(', ')} and ${3000 - LIST_LIMIT} more`,
    );
  });

  it('an unknown cut point lists a few valid ones, still with the nearest', () => {
    const known = new Set(Array.from({ length: 40 }, (_, i) => `stream.point${i}.cas`));
    const refusal = () => parseFaultSpec('stream.point7.cass:fail', known);
    expect(refusal).toThrow(
      expect.objectContaining({
        code: 'faults.unknown_cut_point',
        message: expect.stringContaining('(did you mean "stream.point7.cas"?)'),
      }),
    );
    expect(refusal).toThrow(
      expect.objectContaining({
        message: expect.stringMatching(
          /: stream\.point0\.cas, stream\.point1\.cas, stream\.point10\.cas, stream\.point11\.cas, stream\.point12\.cas and 35 more$/,
        ),
      }),
    );
  });
});

describe('a 100 KB argument is echoed in a few hundred bytes', () => {
  it.each([
    ['an unknown command', [big, 'read'], {}, 'cli.unknown_command'],
    ['an unknown subcommand of help', ['help', 'stream', big], {}, 'cli.usage'],
    ['an unknown option', ['stream', 'read', 'orders', '--partition', '0', '--from', '0', `--${big}`], {}, 'cli.usage'],
    ['an extra argument', ['stream', 'read', 'orders', '--partition', '0', '--from', '0', big], {}, 'cli.usage'],
    ['an option value', ['stream', 'read', 'orders', '--partition', big, '--from', '0'], {}, 'cli.usage'],
    ['a --faults rule', ['stream', 'describe', 'orders', '--faults', `${big}.x:fail`], {}, 'cli.usage'],
    [
      'a CUTPOINT_FAULTS rule',
      ['stream', 'describe', 'orders'],
      { CUTPOINT_FAULTS: `stream.trim.cas:${big}` },
      'faults.invalid_kind',
    ],
    ['a --sha256 value', ['object', 'get', 'docs/readme.txt', '--sha256', big], {}, 'cli.usage'],
    [
      'a manifest path',
      ['delivery', 'run', '--manifest', `/nonexistent/${big}#daily`],
      {},
      'delivery.manifest_unavailable',
    ],
    ['a --format value', ['faults', 'list', '--format', big], {}, 'cli.usage'],
  ])('%s', async (_, argv, env, code) => {
    const r = await captureMain(main, argv as string[], env as Record<string, string>);
    expect({ code: r.code, stdout: r.stdout }).toEqual({
      code: (code as string).startsWith('cli.') ? 2 : 1,
      stdout: '',
    });
    expect(r.stderr.startsWith(`${code as string}: `), r.stderr.slice(0, 200)).toBe(true);
    expect(r.stderr.length).toBeLessThan(2048);
    expect(r.stderr).toContain(`${'x'.repeat(50)}…`);
    expect(existsSync(dirs.stateDir)).toBe(false);
  });

  it('a manifest of 3,000 routes without the selected one names 5 of them and how many more', async () => {
    const routes = Array.from(
      { length: 3000 },
      (_, i) => `  r${i}:
    source: { binding: ch, table: analytics.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: 2026-11-01T00:00:00Z, end: 2026-11-02T00:00:00Z }
    target: { binding: pg, table: public.events_${i}, key_columns: [event_id], mode: replace_window }
`,
    );
    const file = join(dirs.root, 'routes.yaml');
    await writeFile(
      file,
      `version: 1\nbindings:\n  ch: { kind: clickhouse, url_env: CH_URL }\n  pg: { kind: postgres, url_env: PG_URL }\nroutes:\n${routes.join('')}`,
    );
    const r = await captureMain(main, ['delivery', 'run', '--manifest', `${file}#missing`]);
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: '' });
    expect(r.stderr).toMatch(
      /^delivery\.selector_unknown: .* has no route missing; routes: r0, r1, r10, r100, r1000 and 2995 more\n$/,
    );
    expect(r.stderr.match(/\br\d+\b/g)).toHaveLength(5);
    expect(existsSync(dirs.stateDir)).toBe(false);
  }, 60_000);
});
