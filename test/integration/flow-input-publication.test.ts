import { describe, expect, it } from 'vitest';
import { routeOfEvent } from '../../src/delivery/deps-provider.js';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { useObserveWorld } from '../fixtures/quality/observe-world.js';
import { newInvocationId } from '../support/delivery-world.js';
import { entered, expectRefusedUnwritten, unknownField, why } from '../support/flow-input-refusal.js';
import { publicationManifest, targetDdl } from '../support/publication-world.js';

/*
 * publish-clickhouse and quality-observe started as StartExecution starts them: the local
 * runner with the execution input as given, over the handlers Lambda runs, ClickHouse
 * (chdb) in its own process behind HTTP, DynamoDB Local and the S3 emulator. A field the
 * flow does not read is refused by its first Task (docs/deploy.md "Flow inputs") before anything
 * durable is written; the same input without it runs as before.
 */

const ctx = useObserveWorld();
const selector = '/config/publish.yaml#daily';
const run = (flow: string, input: unknown): Promise<FlowResult> =>
  runFlow(flow, input, {
    ports: ctx.world.stores.ports,
    retryIntervalMs: 0,
    stepDeps: (event) => Promise.resolve({ ...ctx.world.deps(), route: routeOfEvent(event) }),
  });

describe('ClickHouse publication flows started directly', () => {
  it('publish-clickhouse: an unknown field is Delivery.StepRefused at Begin, nothing written; without it the window is published', async () => {
    const table = 'flow_input_events';
    await ctx.world.ch.client.command({ query: targetDdl(table) });
    const input = { invocationId: newInvocationId(), manifestText: publicationManifest({ table }), selector };
    await expectRefusedUnwritten(
      ctx.world.stores.config,
      () => run('publish-clickhouse', { ...input, wouldMark: [] }),
      {
        error: 'Delivery.StepRefused',
        cause: unknownField('publish-clickhouse', 'wouldMark'),
        states: ['Begin', 'StepRefused'],
      },
    );
    const published = await run('publish-clickhouse', input);
    expect(published, why(published)).toMatchObject({ status: 'SUCCEEDED' });
    expect(entered(published).at(-1)).toBe('Cleanup');
    expect((await loadInvocation(ctx.world.stores.ports, input.invocationId)).state).toBe('CUSTODY_RELEASED');
  }, 180_000);

  it('quality-observe: an unknown field is refused at Observe, the capsule untouched; without it the observation completes', async () => {
    const { ref, table } = await ctx.world.published();
    const input = { invocationId: ref.invocationId, manifestText: publicationManifest({ table }), selector, yes: true };
    const prepared = await readCapsule(ctx.world.stores.ports, ref);
    await expectRefusedUnwritten(ctx.world.stores.config, () => run('quality-observe', { ...input, session: 'x' }), {
      error: 'Cutpoint.ValidationError',
      cause: unknownField('quality-observe', 'session'),
      states: ['Confirmed', 'Observe', 'Refused'],
    });
    expect(await readCapsule(ctx.world.stores.ports, ref)).toEqual(prepared);
    const observed = await run('quality-observe', input);
    expect(observed, why(observed)).toMatchObject({
      status: 'SUCCEEDED',
      output: { invocation_id: ref.invocationId, capsule_state: 'COMPLETE' },
    });
    expect(entered(observed)).toEqual(['Confirmed', 'Observe', 'Observed']);
  }, 120_000);
});
