import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inertFaults } from '../../src/adapters/fault-injector.js';
import { manifestCommand, type ManifestVerb } from '../../src/cli/commands/quality-live.js';
import { localFlowDeps } from '../../src/cli/commands/flow-deps.js';
import type { FlowRun, Runtime } from '../../src/cli/commands/stream/runtime.js';
import { CutpointError } from '../../src/domain/errors.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import type { Ports } from '../../src/ports/index.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { useObserveWorld } from '../fixtures/quality/observe-world.js';
import { entered, storeSnapshot, unknownField, why } from '../support/flow-input-refusal.js';

/*
 * `cutpoint quality replay|diagnose --aws` against the local runner: the command's --aws
 * path (src/cli/commands/quality-live.ts) starts the quality-replay / quality-diagnose flow,
 * here run by the local runner over the handlers Lambda runs (functions/quality/replay.ts,
 * diagnose.ts) with the target opened as `cutpoint flow run` opens it, ClickHouse in its own
 * process behind HTTP, DynamoDB Local and the S3 emulator. What it prints is what the local
 * command prints for the same operation; what either refuses, the other refuses by the same
 * name; a malformed input is refused before any store is touched; nothing is ever written.
 */

const ctx = useObserveWorld();
const dir = mkdtempSync(join(tmpdir(), 'cutpoint-replay-flow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The ports, every call to the authority table or the bucket counted in `touched`. */
function counted(ports: Ports, touched: string[]): Ports {
  const watch = <T extends object>(what: string, target: T): T =>
    new Proxy(target, {
      get: (t, property, receiver) => {
        const value = Reflect.get(t, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          touched.push(`${what}.${String(property)}`);
          return (value as (...a: unknown[]) => unknown).apply(t, args);
        };
      },
    });
  return { ...ports, authority: watch('authority', ports.authority), objects: watch('objects', ports.objects) };
}

/** A flow run by the local runner as `cutpoint flow run` runs it: the target from the binding's url_env, no source. */
async function runLocally(flow: string, input: unknown, touched: string[] = []): Promise<FlowResult> {
  const ports = counted(ctx.world.stores.ports, touched);
  const deps = localFlowDeps(flow, ports, inertFaults);
  try {
    return await runFlow(flow, input, { ports, stepDeps: deps.provider, retryIntervalMs: 0 });
  } finally {
    await deps.close();
  }
}

/** The CLI's runtimes: the local one (the use case in-process) and `--aws`, whose flows the local runner runs. */
function runtime(kind: 'local' | 'aws', runs: FlowResult[] = []): Runtime {
  return {
    kind,
    ports: () =>
      kind === 'local'
        ? Promise.resolve(ctx.world.stores.ports)
        : Promise.reject(new Error('test: replay and diagnose --aws touch no store from the CLI')),
    async run(flow, _name, input): Promise<FlowRun> {
      const result = await runLocally(flow, input);
      runs.push(result);
      return { flow, status: result.status, output: result.output, error: result.error, cause: result.cause };
    },
    prepare: () => Promise.resolve(),
    notStarted: () => Promise.resolve(false),
    faults: () => inertFaults,
    done: () => undefined,
  };
}

/** What a command prints (its document), or how it exits (its error's name and code). */
async function outcome(kind: 'local' | 'aws', verb: ManifestVerb, id: string, manifest: string, runs?: FlowResult[]) {
  try {
    return { document: await manifestCommand(runtime(kind, runs), { verb, invocationId: id, manifest }) };
  } catch (error) {
    if (!(error instanceof CutpointError)) throw error;
    return { error: error.name, code: error.code };
  }
}

/** A published operation (capsule PREPARED), its manifest in a file under the operator's path. */
async function published() {
  const op = await ctx.world.published({ manifestDir: dir });
  return { ...op, id: op.ref.invocationId };
}

/** The receipt's own run id is minted per replay; everything else must match. */
const withoutRunId = (receipt: unknown) => ({ ...(receipt as object), current_run_id: 'per replay' });

describe('quality replay and diagnose --aws: the flows give what the local commands give', () => {
  it('replay of a COMPLETE operation: the same receipt through quality-replay, Replay → Replayed, nothing written', async () => {
    const op = await published();
    const observed = await outcome('local', 'observe', op.id, op.selector);
    expect(observed).toMatchObject({ document: { capsule_state: 'COMPLETE' } });
    const before = await storeSnapshot(ctx.world.stores.config);
    const runs: FlowResult[] = [];
    const local = await outcome('local', 'replay', op.id, op.selector);
    const deployed = await outcome('aws', 'replay', op.id, op.selector, runs);
    expect(local).toMatchObject({
      document: { kind: 'cutpoint.quality-replay-receipt.v1', invocation_id: op.id, target_writes: 0 },
    });
    expect(withoutRunId(deployed.document)).toEqual(withoutRunId(local.document));
    expect(runs.map(entered)).toEqual([['Replay', 'Replayed']]);
    expect(await storeSnapshot(ctx.world.stores.config)).toEqual(before);
  }, 180_000);

  it('diagnose, before and after the observation: the same diagnosis through quality-diagnose, nothing written', async () => {
    const op = await published();
    for (const when of ['PREPARED', 'COMPLETE']) {
      if (when === 'COMPLETE') await outcome('local', 'observe', op.id, op.selector);
      expect((await readCapsule(ctx.world.stores.ports, op.ref))?.state).toBe(when);
      const before = await storeSnapshot(ctx.world.stores.config);
      const runs: FlowResult[] = [];
      const local = await outcome('local', 'diagnose', op.id, op.selector);
      const deployed = await outcome('aws', 'diagnose', op.id, op.selector, runs);
      expect(local, when).toMatchObject({ document: { kind: 'cutpoint.quality-diagnosis.v1', invocation_id: op.id } });
      expect(deployed, when).toEqual(local);
      expect(runs.map(entered), when).toEqual([['Diagnose', 'Diagnosed']]);
      expect(await storeSnapshot(ctx.world.stores.config), when).toEqual(before);
    }
  }, 180_000);

  it("replay of an operation that is not COMPLETE: refused by the flow under the use case's name and code, as locally; nothing written", async () => {
    const op = await published();
    const before = await storeSnapshot(ctx.world.stores.config);
    const runs: FlowResult[] = [];
    const local = await outcome('local', 'replay', op.id, op.selector);
    const deployed = await outcome('aws', 'replay', op.id, op.selector, runs);
    expect(local).toEqual({ error: 'Quality.ActionNotPermitted', code: 'quality.action_not_permitted' });
    expect(deployed).toEqual(local);
    expect(runs.map(entered)).toEqual([['Replay', 'Refused']]);
    expect(await storeSnapshot(ctx.world.stores.config)).toEqual(before);
  }, 180_000);

  it('a malformed input is refused at the first Task before any store is touched: an unknown field, no input, a bad id, no manifest', async () => {
    const op = await published();
    const input = { invocationId: op.id, manifestText: op.manifestText, selector: op.selector };
    for (const flow of ['quality-replay', 'quality-diagnose']) {
      const task = flow === 'quality-replay' ? 'Replay' : 'Diagnose';
      for (const [given, error, cause] of [
        [{ ...input, yes: true }, 'Cutpoint.ValidationError', unknownField(flow, 'yes')],
        [{}, 'States.Runtime', /\$\.invocationId/],
        [{ ...input, invocationId: 'inv-nope' }, 'Cutpoint.ValidationError', /invocation/i],
        [{ ...input, manifestText: 7 }, 'Cutpoint.ValidationError', `a ${flow} flow needs`],
      ] as const) {
        const touched: string[] = [];
        const run = await runLocally(flow, given, touched);
        expect(run, `${flow} ${JSON.stringify(given).slice(0, 60)}: ${why(run)}`).toMatchObject({
          status: 'FAILED',
          error,
        });
        if (typeof cause === 'string') expect(run.cause).toContain(cause);
        else expect(run.cause).toMatch(cause);
        expect(touched, flow).toEqual([]);
        if (error !== 'States.Runtime') expect(entered(run)).toEqual([task, 'Refused']);
      }
    }
  }, 120_000);
});
