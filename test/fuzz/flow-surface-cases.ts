import fc from 'fast-check';
import type { FuzzCase } from '../support/fuzz-cli.js';
import { LAKE, MANIFEST_TEXT, STREAM, type FuzzWorld } from '../support/fuzz-world.js';
import { badInvocationId, badStreamName, unknownInvocationId } from './arbitraries.js';
import { flowDefectCases, type FlowBase } from './flow-cases.js';
import { brokenManifest, editedManifest, undeliverableTarget } from './manifest-mutations.js';

/**
 * `cutpoint flow run <flow> --input <json>` for the flows added since issue 8: lane
 * maintenance (stream-compact, stream-materialize, stream-maintain), the delivery and
 * publication runs (deliver-window, publish-clickhouse: {manifestText, selector[,
 * invocationId]}), the live recovery actions (delivery-reconcile | resume | retire) and
 * quality-observe ({invocationId, manifestText, selector, yes: true}), the read-only
 * quality-replay and quality-diagnose (the same without yes). Each base input is
 * one that would act (or one the journal does not permit); the generic defects of
 * flowDefectCases (a field missing or of another type, not an object, too deep, too large,
 * unparsable, a bad --faults, an unknown flag) and the per-field ones below make it invalid.
 */

const lanePartition = fc.constantFrom<unknown>(-1, 1024, 1.5, '0', 2 ** 53);
const manifestText = fc.oneof(
  brokenManifest(MANIFEST_TEXT, 'daily').map((m) => m.text),
  undeliverableTarget(MANIFEST_TEXT, 'daily').map((m) => m.text),
  fc.constantFrom<unknown>('', 'x'.repeat(300_000)),
);

function bases(world: FuzzWorld): FlowBase[] {
  const file = world.manifestFile;
  const lane = { stream: STREAM, partition: 0 };
  const ids = [world.deliveredId, world.unknownId];
  const selectorBad = (routes: string[]) =>
    fc.oneof(
      fc.constantFrom<unknown>(file, `${file}#`, '#daily', `${file}#Daily`, `${file}#daily\n`, `relative.yaml#daily`),
      fc
        .stringMatching(/^[a-z][a-z0-9_-]{0,12}$/)
        .filter((r) => !routes.includes(r) && !['daily', 'lossy', LAKE].includes(r))
        .map((r) => `${file}#${r}`),
    );
  const idBad = fc.oneof(badInvocationId(ids), unknownInvocationId);
  const recovery = { invocationId: world.unknownId, manifestText: MANIFEST_TEXT, selector: `${file}#lossy`, yes: true };
  const recoveryBad = {
    invocationId: idBad,
    // The sealed text edited, or another route of it: the digest no longer matches.
    manifestText: fc.oneof(
      editedManifest(MANIFEST_TEXT).map((m) => m.text),
      manifestText,
    ),
    selector: fc.oneof(selectorBad(['lossy']), fc.constantFrom(`${file}#daily`, `${file}#${LAKE}`)),
    yes: fc.constantFrom<unknown>(false, 'yes', 1, null),
  };
  return [
    {
      flow: 'stream-compact',
      input: { ...lane, maxRanges: 2 },
      optional: ['maxRanges'],
      bad: {
        stream: badStreamName,
        partition: lanePartition,
        maxRanges: fc.constantFrom<unknown>(0, 1, 1001, 1.5, -2, '16'),
      },
    },
    {
      flow: 'stream-materialize',
      input: { ...lane, max: 1 },
      optional: ['max'],
      bad: { stream: badStreamName, partition: lanePartition, max: fc.constantFrom<unknown>(0, 1001, 1.5, -1, '32') },
    },
    {
      // The schedule's constant input, with no validation step of its own: each lane is its
      // children's input (refused there, the execution FAILED); an empty list is a no-op.
      flow: 'stream-maintain',
      input: { lanes: [lane] },
      validAlso: { lanes: [[]] },
      bad: {
        lanes: fc.oneof(
          fc.constantFrom<unknown>(
            [{}],
            [{ stream: STREAM }],
            [{ partition: 0 }],
            [{ ...lane, partition: -1 }],
            [{ ...lane, partition: '0' }],
            [{ ...lane, partition: 7 }],
            Array.from({ length: 9 }, () => lane),
          ),
          badStreamName.map((stream) => [{ stream, partition: 0 }]),
        ),
      },
    },
    {
      flow: 'deliver-window',
      input: { manifestText: MANIFEST_TEXT, selector: `${file}#daily` },
      optional: [],
      bad: {
        manifestText,
        selector: fc.oneof(selectorBad(['daily', 'lossy']), fc.constant(`${file}#${LAKE}`)),
        // An invocation id sealed to another route, or malformed.
        invocationId: fc.oneof(badInvocationId(ids), fc.constant(world.unknownId)),
      },
    },
    {
      flow: 'publish-clickhouse',
      input: { manifestText: MANIFEST_TEXT, selector: `${file}#${LAKE}` },
      bad: {
        manifestText,
        selector: fc.oneof(selectorBad([LAKE]), fc.constant(`${file}#daily`)),
        invocationId: fc.oneof(badInvocationId(ids), fc.constantFrom(...ids)),
      },
    },
    { flow: 'delivery-reconcile', input: recovery, bad: recoveryBad },
    // Not permitted where the journal stands (PUBLICATION_UNKNOWN permits reconcile only; CUSTODY_RELEASED permits nothing).
    { flow: 'delivery-resume', input: recovery, bad: recoveryBad },
    {
      flow: 'delivery-retire',
      input: { ...recovery, invocationId: world.deliveredId, selector: `${file}#daily` },
      bad: recoveryBad,
    },
    { flow: 'quality-observe', input: { ...recovery, selector: `${file}#${LAKE}` }, bad: recoveryBad },
    // Read-only: no yes; the invocation is unknown to the journal (or of another route, or not governed).
    ...(['quality-replay', 'quality-diagnose'] as const).map((flow) => ({
      flow,
      input: { invocationId: world.unknownId, manifestText: MANIFEST_TEXT, selector: `${file}#${LAKE}` },
      bad: {
        invocationId: recoveryBad.invocationId,
        manifestText: recoveryBad.manifestText,
        selector: recoveryBad.selector,
      },
    })),
  ];
}

export function flowSurfaceCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  return flowDefectCases(() => bases(world), world);
}
