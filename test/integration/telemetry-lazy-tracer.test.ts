import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/*
 * The X-Ray SDK behind Powertools' tracer installs, when imported, a process-wide async hook
 * with destroy tracking on every promise (cls-hooked; it records itself in
 * `process.namespaces`). A process that runs handlers outside Lambda (the CLI's local flows,
 * the test suite) must not load it: stream schedules ran 20 % slower with it. In Lambda the
 * handler's first call loads it. Each case is a fresh Node process, so nothing else loaded it.
 */

const run = promisify(execFile);

const SCRIPT = `
import { step } from './functions/lib/step.ts';
const before = process.namespaces !== undefined;
const handler = step(async () => ({ ok: true }))({ ports: async () => ({}) });
const out = await handler({}, { awsRequestId: 'req-1', functionName: 'f' });
process.stdout.write('\\n' + JSON.stringify({ before, after: process.namespaces !== undefined, out }));
`;

async function handlerCall(env: Record<string, string>): Promise<{ before: boolean; after: boolean; out: unknown }> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { before: boolean; after: boolean; out: unknown };
}

describe("the tracer's X-Ray context is loaded only in Lambda", () => {
  it('a handler called outside Lambda never loads it', async () => {
    expect(await handlerCall({})).toEqual({ before: false, after: false, out: { ok: true } });
  }, 90_000);

  it("in Lambda (AWS_LAMBDA_FUNCTION_NAME set) the handler's first call loads it, and the handler still answers", async () => {
    expect(await handlerCall({ AWS_LAMBDA_FUNCTION_NAME: 'cutpoint-test', POWERTOOLS_TRACE_ENABLED: 'false' })).toEqual(
      { before: false, after: true, out: { ok: true } },
    );
  }, 90_000);
});
