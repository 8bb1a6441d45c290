import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { REPO_ROOT } from '../../src/local/asl.js';
import { runCutpointInProcess, spawnCutpoint, type CliRun } from './cli-runtime.js';
import type { FuzzWorld, Snapshot } from './fuzz-world.js';

/**
 * How a fuzz case runs and what it must show (issue 8, "The net that keeps it so"): every
 * generated case is an INVALID command (its generator makes it so by construction), and
 * each must be refused — exit 1 or 2, empty stdout, exactly one stable diagnostic code
 * line on stderr (not cutpoint.internal_error), no stack trace, no raw control character,
 * no connection string, secret value or fencing session id anywhere in the output — and
 * must mutate nothing (the world's snapshot before and after is equal; compared per batch
 * of cases, a mutation replayed to the case that made it — see FuzzRunner).
 */

/** One generated command. `{{name}}` in argv becomes the path of `files[name]`, written (outside the snapshot) before the run. */
export interface FuzzCase {
  what: string;
  argv: string[];
  env?: Record<string, string | undefined>;
  files?: Record<string, string | Uint8Array>;
  /** Diagnostic codes this case must not end with (e.g. one only a call to AWS could produce). */
  forbiddenCodes?: RegExp;
  /** Run the real bin in a child process with this stdin instead of `main` in this process. */
  stdin?: { data: Uint8Array; delayMs: number };
}

/** The child's environment: the runtime's state dir, and none of this process's secrets or faults. */
export function childEnv(world: FuzzWorld): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/URL|DSN|MSSQL|CLICKHOUSE|^PG|PASSWORD|^CUTPOINT_|^AWS_|^FUZZ_/i.test(k)) continue;
    env[k] = v;
  }
  return { ...env, CUTPOINT_STATE_DIR: world.runtime.stateDir, CUTPOINT_FAULTS: '' };
}

const CODE_LINE = /^[a-z_]+\.[a-z0-9_]+: /;
// C0 controls except LF, DEL and C1 controls: an echoed value must be escaped.
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

/** What the run shows that a refusal must not; empty when it is a clean refusal. */
export function outputViolations(run: CliRun, secrets: readonly string[]): string[] {
  const v: string[] = [];
  if (run.code !== 1 && run.code !== 2) v.push(`exit ${String(run.code)}`);
  if (run.stdout !== '') v.push('stdout not empty');
  const lines = run.stderr.split('\n').filter((l) => l && !l.startsWith('cutpoint: '));
  const codes = lines.filter((l) => CODE_LINE.test(l));
  if (codes.length !== 1 || !CODE_LINE.test(lines[0] ?? ''))
    v.push(
      `${codes.length} diagnostic code lines (first non-progress line: ${JSON.stringify((lines[0] ?? '').slice(0, 120))})`,
    );
  const code = (codes[0] ?? '').split(':')[0];
  if (code === 'cutpoint.internal_error') v.push('cutpoint.internal_error');
  const both = `${run.stdout}\n${run.stderr}`;
  if (both.includes('    at ')) v.push('stack trace');
  if (RAW_CONTROL.test(both)) v.push('raw control character in output');
  for (const s of secrets)
    if (both.includes(s)) v.push(`secret in output (${s.length} chars, starts ${JSON.stringify(s.slice(0, 4))})`);
  return v;
}

/** Which parts of the world changed. */
export function mutations(before: Snapshot, after: Snapshot): string[] {
  return (Object.keys(before) as Array<keyof Snapshot>)
    .filter((k) => before[k] !== after[k])
    .map((k) => `mutated ${k}: ${firstDifference(before[k], after[k])}`);
}

function firstDifference(a: string, b: string): string {
  const la = a.split('\n');
  const lb = b.split('\n');
  const onlyA = la.filter((l) => !lb.includes(l)).slice(0, 2);
  const onlyB = lb.filter((l) => !la.includes(l)).slice(0, 2);
  // The report names what changed, never a fencing session id.
  const cut = (l: string[]) =>
    l.map((x) => x.replace(/("session"\s*:\s*(?:\{"S":)?\s*")[^"]+/g, '$1<redacted>').slice(0, 200)).join(' | ');
  return `${onlyA.length ? `- ${cut(onlyA)} ` : ''}${onlyB.length ? `+ ${cut(onlyB)}` : ''}`.trim() || '(reordered)';
}

/**
 * FUZZ_SNAPSHOT_EVERY: cases between two snapshots of the whole world (default 25; 1 = one
 * per case). A refusal is checked for output at once; for "nothing mutated" the world is
 * compared after every batch and at the end of every property. A batch that mutated is
 * replayed case by case, one snapshot each, to name the case that did it.
 */
const SNAPSHOT_EVERY = Math.max(1, Number(process.env.FUZZ_SNAPSHOT_EVERY ?? '25'));
/** FUZZ_SLOW_MS: print every case that takes longer (to keep the suite fast). */
const SLOW_MS = Number(process.env.FUZZ_SLOW_MS ?? 'Infinity');

/** Runs cases against one world; "nothing mutated" is checked per batch of cases (SNAPSHOT_EVERY). */
export class FuzzRunner {
  private last: Snapshot | undefined;
  /** Cases run since `last` was taken. */
  private pending: FuzzCase[] = [];
  private n = 0;
  /** Per property: violation kind → count and one example case. */
  readonly survey = new Map<string, Map<string, { count: number; example: string }>>();
  /** Per property: cases run and wall time. */
  readonly timing = new Map<string, { cases: number; ms: number }>();
  /** Time spent taking snapshots, over all cases. */
  snapshotMs = 0;

  constructor(readonly world: FuzzWorld) {}

  /** Runs one case as given (no snapshot): its input files written first, outside the snapshot. */
  async exec(c: FuzzCase): Promise<CliRun> {
    const dir = join(this.world.inputs, `case-${++this.n}`);
    const paths: Record<string, string> = {};
    if (c.files) {
      await mkdir(dir, { recursive: true });
      for (const [name, content] of Object.entries(c.files)) {
        paths[name] = join(dir, name);
        await writeFile(paths[name], content);
      }
    }
    const argv = c.argv.map((a) =>
      a.replace(/\{\{([a-z0-9.-]+)\}\}/g, (_, name: string) => paths[name] ?? `{{${name}}}`),
    );
    // A placeholder left in place would test an unreadable path instead of the file's content.
    const left = argv.find((a) => /\{\{[^}]*\}\}/.test(a));
    if (left !== undefined) throw new Error(`${c.what}: ${left} names no file of the case`);
    if (c.stdin) {
      const env = { ...childEnv(this.world), ...definedOnly(c.env) };
      return spawnCutpoint(argv, {
        cwd: REPO_ROOT,
        env,
        stdin: { chunks: [c.stdin.data], delayMs: c.stdin.delayMs },
        timeoutMs: 90_000,
      });
    }
    return withTimeout(runCutpointInProcess(argv, c.env ? { env: c.env } : {}), 30_000);
  }

  /**
   * Runs a case that must be refused: its output violations at once, and — when it closes a
   * batch — the mutations of the batch, each attributed to the case that made it.
   */
  async run(c: FuzzCase): Promise<{ run: CliRun; violations: string[] }> {
    this.last ??= await this.snapshot();
    const t0 = performance.now();
    const run = await this.exec(c);
    if (performance.now() - t0 > SLOW_MS)
      console.log(`slow case (${Math.round(performance.now() - t0)} ms): ${describeCase(c).slice(0, 300)}`);
    this.pending.push(c);
    const violations = outputViolations(run, this.world.secrets(this.last));
    const code = /^([a-z_]+\.[a-z0-9_]+): /m.exec(run.stderr)?.[1];
    if (c.forbiddenCodes && code && c.forbiddenCodes.test(code)) violations.push(`forbidden code ${code}`);
    if (this.pending.length >= SNAPSHOT_EVERY) violations.push(...(await this.settle()));
    return { run, violations };
  }

  /**
   * Compares the world with the last snapshot and starts a new batch: no mutation → [];
   * otherwise the mutations, named by the case of the batch that makes one again when the
   * batch is replayed case by case (or listing the whole batch if none does).
   */
  async settle(): Promise<string[]> {
    const batch = this.pending;
    this.pending = [];
    if (!this.last || !batch.length) return [];
    const after = await this.snapshot();
    const found = mutations(this.last, after);
    this.last = after;
    if (!found.length) return [];
    if (batch.length > 1) {
      for (const c of batch) {
        await this.exec(c);
        const again = await this.snapshot();
        const byCase = mutations(this.last, again);
        this.last = again;
        if (byCase.length)
          return byCase.map((m) => `${m} (made by ${describeCase(c)}; replayed from a batch of ${batch.length})`);
      }
    }
    return found.map(
      (m) => `${m} (made by one of ${batch.length} cases: ${batch.map(describeCase).join('; ').slice(0, 2000)})`,
    );
  }

  private async snapshot(): Promise<Snapshot> {
    const t0 = performance.now();
    const snap = await this.world.snapshot();
    this.snapshotMs += performance.now() - t0;
    return snap;
  }

  /** The refusal property over `arb`; FUZZ_SURVEY=1 records every violation instead of stopping at the first counterexample. */
  async property(name: string, arb: fc.Arbitrary<FuzzCase>, numRuns: number, seed: number): Promise<void> {
    const survey = process.env.FUZZ_SURVEY === '1';
    const kinds = new Map<string, { count: number; example: string }>();
    this.survey.set(name, kinds);
    const timing = { cases: 0, ms: 0 };
    this.timing.set(name, timing);
    const started = performance.now();
    const record = (c: FuzzCase, run: CliRun | undefined, violations: string[]) => {
      const detail = `${describeCase(c)}${run ? `\n  exit ${String(run.code)}; stdout ${JSON.stringify(run.stdout.slice(0, 200))}; stderr ${JSON.stringify(run.stderr.slice(-400))}` : ''}\n  violations: ${violations.join('; ')}`;
      for (const v of violations) {
        const kind = `${c.what.split(':')[0]} → ${v.replace(/:.*$/, '').replace(/\(.*$/, '').trim()}`;
        const k = kinds.get(kind) ?? { count: 0, example: detail };
        k.count++;
        kinds.set(kind, k);
      }
      if (!survey) throw new Error(detail);
    };
    let lastCase: FuzzCase | undefined;
    await fc.assert(
      fc.asyncProperty(arb, async (c) => {
        timing.cases++;
        lastCase = c;
        const { run, violations } = await this.run(c);
        timing.ms = performance.now() - started;
        if (violations.length) record(c, run, violations);
      }),
      { numRuns, seed, endOnFailure: true },
    );
    // The property's last, partial batch.
    const rest = await this.settle();
    timing.ms = performance.now() - started;
    if (rest.length && lastCase) record(lastCase, undefined, rest);
  }
}

/** A case as a failure report names it. */
function describeCase(c: FuzzCase): string {
  return `${c.what}\n  argv: ${JSON.stringify(c.argv).slice(0, 400)}${c.env ? `\n  env: ${JSON.stringify(c.env).slice(0, 200)}` : ''}`;
}

function definedOnly(env: Record<string, string | undefined> | undefined): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env ?? {}).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv;
}

async function withTimeout(p: Promise<CliRun>, ms: number): Promise<CliRun> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CliRun>((resolvePromise) => {
    timer = setTimeout(() => resolvePromise({ code: null, stdout: '', stderr: `[no exit after ${ms} ms]` }), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
