import { describe, expect, it } from 'vitest';
import { routeOfEvent } from '../../src/delivery/deps-provider.js';
import { readerStep } from '../../functions/quality/observe-step.js';
import { FLOWS } from '../../src/registry/index.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { flowPlaceholder } from '../../src/local/asl.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import type { Ports } from '../../src/ports/index.js';
import { operatorInputFirst, operatorObserveStep } from '../../src/quality/steps/operator-observe.js';
import { markedBlock, markerNames, repoFile, section } from './readme-blocks.js';
import { publicationModeOf } from '../../src/publication/exchange-mode.js';
import { localReader } from '../support/exchange-mode.js';

/*
 * docs/flows.md documents an execution input for every flow. Each one runs through the
 * flow's own ASL on the local runner (JSONPath, Choices, Maps, child flows) into the real
 * handlers and their real input validation; no store exists here: the first touch of the
 * authority, the object store, the clock or a target is recorded and ends the step. Every
 * use case validates its whole input before it reads or writes anything (house rule), so
 * reaching a store means the input was accepted; an input the flow refuses never gets there.
 */

const doc = repoFile('docs/flows.md');

class StoreReached extends Error {
  override name = 'Runbook.StoreReached';
}

/** Ports (and a target) that record the first thing a step touches, and stop it there. */
function stores(reached: string[]): { ports: Ports; refusing: (what: string) => never } {
  const refusing = (what: string): never =>
    new Proxy(
      {},
      {
        get: (_target, property) => {
          if (property === 'then') return undefined; // not a promise
          reached.push(`${what}.${String(property)}`);
          throw new StoreReached(`input accepted: the step reached ${what}.${String(property)}`);
        },
      },
    ) as never;
  return {
    ports: { authority: refusing('authority'), objects: refusing('objects'), clock: refusing('clock') },
    refusing,
  };
}

/** Runs a flow as deployed, up to the first store; `reached` lists what was touched. */
async function runToFirstStore(flow: string, input: unknown): Promise<{ run: FlowResult; reached: string[] }> {
  const reached: string[] = [];
  const { ports, refusing } = stores(reached);
  // What a deployed delivery step's deps provider does first: the route from the Task's
  // input (the real manifest parser and selector); then the target it would open.
  const stepDeps = async (event: unknown): Promise<DeliveryDeps> => {
    const route = routeOfEvent(event);
    const mode = publicationModeOf(route, { exchange: refusing('exchange'), observeReader: localReader });
    return { ports, target: refusing('target'), mode, route };
  };
  // The deployed quality-observe handler (functions/quality/operator-observe.ts): its reader
  // resolves the target binding from Secrets Manager, not the environment.
  const secrets = () => refusing('secrets');
  const taskHandlers = {
    QualityOperatorObserveFunctionArn: (event: unknown) =>
      readerStep(operatorObserveStep, { secrets }, operatorInputFirst)({ delivery: stepDeps })(event, {}),
  };
  const run = await runFlow(flow, input, { ports, stepDeps, taskHandlers, retryIntervalMs: 0 });
  return { run, reached };
}

function consoleInput(flow: string): unknown {
  const block = markedBlock(doc, `flow-input: ${flow}`);
  if (!block) throw new Error(`docs/flows.md has no <!-- flow-input: ${flow} --> before a fenced json block`);
  expect(block.lang).toBe('json');
  return JSON.parse(block.body) as unknown;
}

describe('docs/flows.md: an execution input for every flow', () => {
  it('documents exactly the flows of src/registry/flows.ts FLOWS, each once', () => {
    expect(markerNames(doc, 'flow-input').sort()).toEqual(FLOWS.map((f) => f.name).sort());
  });

  describe.each(FLOWS.map((f) => [f.name, f.type] as const))('%s', (flow, type) => {
    it(
      'its console input passes the ASL and the first step validation, up to the first store',
      { timeout: 60_000 },
      async () => {
        const { run, reached } = await runToFirstStore(flow, consoleInput(flow));
        expect(reached, `${flow} refused its documented input: ${run.error}: ${run.cause}`).not.toEqual([]);
      },
    );

    it('an empty input is refused before any store (the check above can fail)', { timeout: 60_000 }, async () => {
      const { run, reached } = await runToFirstStore(flow, {});
      expect(run.status).toBe('FAILED');
      expect(reached).toEqual([]);
    });

    it('is started from the stack output with the AWS CLI, the same input, and with the cutpoint CLI in --aws mode', () => {
      const text = section(doc, flow);
      expect(text, `docs/flows.md has no "## ${flow}" section`).toBeDefined();
      const start = type === 'EXPRESS' ? 'aws stepfunctions start-sync-execution' : 'aws stepfunctions start-execution';
      expect(text).toContain(start);
      expect(text).toContain(`"$(cp_out CutpointWorkflows ${flowPlaceholder(flow)})"`);
      expect(text).toMatch(/--name [a-z0-9-]+/);
      expect(text).toMatch(/npx cutpoint .*\$CP_AWS/);
      // An inline --input '…' is the console input itself; a file:// one is built from the manifest.
      const inline = /--input '([^']*)'/.exec(text!);
      if (inline) expect(JSON.parse(inline[1]!)).toEqual(consoleInput(flow));
      else
        expect(text).toMatch(
          /jq -Rs '\{.*manifestText: \., selector: "[^"]+".*\}' \/etc\/cutpoint\/route\.yaml > [a-z-]+\.json\n|--input file:\/\/recovery\.json/,
        );
    });
  });

  it("every manifestText is docs/deploy.md's AWS route manifest, byte for byte (what `jq -Rs` makes of the file)", () => {
    const manifest = markedBlock(repoFile('docs/deploy.md'), 'aws-route-manifest');
    expect(manifest?.lang).toBe('yaml');
    const texts = FLOWS.map((f) => (consoleInput(f.name) as { manifestText?: unknown }).manifestText).filter(
      (t) => t !== undefined,
    );
    expect(texts.length).toBeGreaterThanOrEqual(6);
    for (const text of texts) expect(text).toBe(`${manifest!.body}\n`);
  });
});
