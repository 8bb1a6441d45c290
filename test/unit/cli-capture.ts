import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** What one in-process `main(argv)` call printed and returned. */
export interface Captured {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `main(argv)` in this process with stdout and stderr captured and `env` set for the call
 * (restored after). Calls must not overlap: the streams and process.env are this process's.
 */
export async function captureMain(
  main: (argv: string[]) => Promise<number>,
  argv: string[],
  env: Record<string, string> = {},
): Promise<Captured> {
  const out = process.stdout.write;
  const err = process.stderr.write;
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  let stdout = '';
  let stderr = '';
  const text = (chunk: string | Uint8Array) =>
    typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  Object.assign(process.env, env);
  process.stdout.write = ((chunk: string | Uint8Array) => (
    (stdout += text(chunk)),
    true
  )) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => (
    (stderr += text(chunk)),
    true
  )) as typeof process.stderr.write;
  try {
    return { code: await main(argv), stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/**
 * For a file's tests: a fresh temp directory `root`, CUTPOINT_STATE_DIR set to `stateDir`
 * below it (which does not exist: a refused command must never create it) and
 * CUTPOINT_FAULTS emptied; both restored and `root` removed after the file. The paths are
 * set once the file's hooks start.
 */
export function missingStateDir(prefix: string): { root: string; stateDir: string } {
  const dirs = { root: '', stateDir: '' };
  const saved = { state: process.env.CUTPOINT_STATE_DIR, faults: process.env.CUTPOINT_FAULTS };
  beforeAll(async () => {
    dirs.root = await mkdtemp(join(tmpdir(), prefix));
    dirs.stateDir = join(dirs.root, 'state');
    process.env.CUTPOINT_STATE_DIR = dirs.stateDir;
    process.env.CUTPOINT_FAULTS = '';
  });
  afterAll(async () => {
    for (const [key, value] of [
      ['CUTPOINT_STATE_DIR', saved.state],
      ['CUTPOINT_FAULTS', saved.faults],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    await rm(dirs.root, { recursive: true, force: true });
  });
  return dirs;
}
