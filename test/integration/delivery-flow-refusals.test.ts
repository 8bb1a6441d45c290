import { beforeAll, describe, expect, it } from 'vitest';
import { routeOfEvent, type DeliveryDepsProvider } from '../../src/delivery/deps-provider.js';
import { runFlow } from '../../src/local/flow-runner.js';
import { forbiddenSource } from '../../src/delivery/source-guard.js';
import type { TargetPort } from '../../src/ports/target.js';
import { scanTable } from '../support/delivery-snapshot.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { TRANSACTION_MODE } from '../../src/delivery/transaction-mode.js';

/**
 * Delivery flows started directly (the Step Functions console, `aws stepfunctions
 * start-execution`) are refused on their own input before the deps provider runs — the
 * provider is what parses the manifest and, on AWS, reads the bindings' secrets. The local
 * runner calls the same handlers as Lambda with a provider; this one records every call
 * (and would parse the manifest, as Lambda's does), so a refusal that comes too late shows.
 */

let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
}, 60_000);

const ID = 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa';
/** Not a manifest at all: parsing it would be refused with delivery.manifest_* instead. */
const UNPARSABLE = 'version: 1\nroutes: [\n';

function recordingProvider(calls: unknown[]): DeliveryDepsProvider {
  return (event) => {
    calls.push(event);
    const route = routeOfEvent(event);
    // Never reached in these tests: every refusal comes before the provider.
    return Promise.resolve({
      ports: stores.ports,
      target: {} as TargetPort,
      mode: TRANSACTION_MODE,
      source: forbiddenSource(),
      route,
    });
  };
}

async function refusedBeforeDeps(flow: string, input: unknown, error: string, stepError = error): Promise<void> {
  const calls: unknown[] = [];
  const before = await scanTable(stores.config);
  const result = await runFlow(flow, input, {
    ports: stores.ports,
    retryIntervalMs: 0,
    stepDeps: recordingProvider(calls),
  });
  expect(result, JSON.stringify(result.events.filter((e) => e.error))).toMatchObject({ status: 'FAILED', error });
  expect(result.events.find((e) => e.type === 'StateFailed')?.error).toBe(stepError);
  expect(calls).toEqual([]);
  expect(await scanTable(stores.config)).toBe(before);
}

describe('delivery flows started directly refuse their input before the manifest is parsed or a secret read', () => {
  for (const flow of ['delivery-reconcile', 'delivery-resume', 'delivery-retire']) {
    it(`${flow}: a missing or non-true yes is Delivery.ConfirmationRequired, before the deps provider runs`, async () => {
      for (const yes of [undefined, false, 'true', 1]) {
        await refusedBeforeDeps(
          flow,
          {
            invocationId: ID,
            manifestText: UNPARSABLE,
            selector: '/config/route.yaml#daily',
            ...(yes === undefined ? {} : { yes }),
          },
          'Delivery.ConfirmationRequired',
        );
      }
      // Confirmed, a malformed invocation id is refused just as early.
      await refusedBeforeDeps(
        flow,
        { invocationId: 'inv-NOT-AN-ID', manifestText: UNPARSABLE, selector: 'x#daily', yes: true },
        'Cutpoint.ValidationError',
      );
    }, 60_000);
  }

  it('deliver-window: a malformed invocation id, session or missing manifest text is refused at Begin before the deps provider runs', async () => {
    // The flow's own refusal (Delivery.StepRefused) carries Begin's Cutpoint.ValidationError.
    const refused = (input: object) =>
      refusedBeforeDeps('deliver-window', input, 'Delivery.StepRefused', 'Cutpoint.ValidationError');
    await refused({ invocationId: 'inv-NOT-AN-ID', manifestText: UNPARSABLE, selector: '/config/route.yaml#daily' });
    await refused({
      invocationId: ID,
      session: 'bad session!',
      manifestText: UNPARSABLE,
      selector: '/config/route.yaml#daily',
    });
    await refused({ selector: '/config/route.yaml#daily' });
  }, 60_000);
});
