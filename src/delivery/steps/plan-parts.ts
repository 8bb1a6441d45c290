import { mapResultsPrefixOf, planObjectKeyOf } from '../../domain/delivery/identifiers.js';
import {
  bucketsOf,
  PLAN_BUCKETS,
  planParts as splitWindow,
  validatePlanParts,
  type PartDescriptor,
} from '../../domain/delivery/parts.js';
import { sha256Hex } from '../../domain/digest.js';
import { ValidationError } from '../../domain/errors.js';
import { putExact, readVerified } from '../../objects/exact-object.js';
import type { ObjectStore } from '../../ports/objects.js';
import type { SourcePort } from '../../ports/source.js';
import { SourceForbiddenError } from '../../domain/delivery/source-errors.js';
import { DELIVERY_CUT_POINTS } from '../cut-points.js';
import type { DeliveryDeps } from '../deps.js';
import { TransitionPreconditionError } from '../journal/errors.js';
import type { PlanFact } from '../journal/facts.js';
import type { InvocationRecord } from '../journal/records.js';
import { transition } from '../journal/transition.js';
import { loadForStep, output, parseStepInput, stagingRefOf, transitionIdOf, type StepOutput } from './common.js';
import { rereadOnStale } from './carried.js';

/** What the Distributed Map reads: the plan object (ItemReader) and where results go (ResultWriter). */
export interface MapPlan {
  bucket: string;
  key: string;
  resultsPrefix: string;
  maxConcurrency: number;
  parts: number;
}

export interface PlanOutput extends StepOutput {
  /** Absent when the invocation left EMPTY_STAGING without ever planning (retired first). */
  plan?: MapPlan;
}

/**
 * Step 3: split the sealed window into parts and start the writer. In EMPTY_STAGING with
 * the owned stage recorded: count the window's rows per time bucket (one read-only
 * query), merge buckets into parts of about `part_rows` rows (src/domain/delivery/parts.ts),
 * write the plan — a JSON array of part descriptors, the Distributed Map's items — as an
 * immutable object (`delivery.plan.put`), and journal EMPTY_STAGING → WRITING_UNKNOWN
 * ("writer started") with the plan's key and SHA-256. A plan object found under the key
 * (a crash after the PUT) is adopted when it is a valid plan of this window: any plan
 * that tiles the window is correct, so a recount that would differ is never needed.
 * Later (a re-run) the journaled plan is returned without touching anything; an
 * invocation that left EMPTY_STAGING without a plan (retired) has none, and the step does
 * not act.
 */
async function planPartsOnce(input: unknown, deps: DeliveryDeps): Promise<PlanOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  if (record.facts.plan) return { ...output(step, record, false), plan: mapPlanOf(record, deps, record.facts.plan) };
  if (record.state !== 'EMPTY_STAGING') return output(step, record, false);
  stagingRefOf(record); // the owned stage is journaled before the writer starts
  if (!deps.source) throw new SourceForbiddenError('countBuckets');
  const custody = await heldCustody();
  const key = planObjectKeyOf(record.route, record.invocationId);
  const fact = (await adoptPlan(deps.ports.objects, key, record)) ?? (await writePlan(key, record, deps, deps.source));
  const started = await transition(deps.ports, ref, {
    from: 'EMPTY_STAGING',
    to: 'WRITING_UNKNOWN',
    fence: step.fence,
    transitionId: transitionIdOf('extract-start', record.invocationId),
    patch: { plan: fact },
    known: { invocation: record, custody },
  });
  return {
    ...output(step, started.invocation, !started.alreadyApplied, custody),
    plan: mapPlanOf(started.invocation, deps, fact),
  };
}

async function writePlan(
  key: string,
  record: InvocationRecord,
  deps: DeliveryDeps,
  sourcePort: SourcePort,
): Promise<PlanFact> {
  const { source, partRows } = deps.route.route;
  const window = record.sealed.window;
  const counts = await sourcePort.countBuckets({
    from: source.from,
    timeColumn: source.timeColumn,
    keyColumns: source.keyColumns,
    window,
    buckets: PLAN_BUCKETS,
  });
  const expected = bucketsOf(window, PLAN_BUCKETS);
  if (
    counts.length !== expected.length ||
    counts.some((c, i) => c.start !== expected[i]?.start || c.end !== expected[i]?.end)
  ) {
    throw new ValidationError(
      'delivery.source_invalid',
      'the source counted other buckets than the window was cut into',
    );
  }
  const parts = splitWindow(counts, partRows);
  const bytes = new TextEncoder().encode(JSON.stringify(parts));
  const sha256 = sha256Hex(bytes);
  await putExact(deps.ports.objects, DELIVERY_CUT_POINTS.planPut, key, bytes, {
    sha256,
    invocation: record.invocationId,
    kind: 'part-plan',
    'part-rows': String(partRows),
  });
  return { key, sha256, parts: parts.length, partRows };
}

/** The plan object already under `key`, as a fact, when it is a valid plan of this window. */
async function adoptPlan(objects: ObjectStore, key: string, record: InvocationRecord): Promise<PlanFact | undefined> {
  const stored = await objects.get(key);
  if (!stored) return undefined;
  const parts = parsePlanBytes(stored.bytes, record);
  const partRows = Number(stored.metadata['part-rows']);
  if (stored.metadata.invocation !== record.invocationId || !Number.isSafeInteger(partRows) || partRows < 1) {
    throw new ValidationError(
      'delivery.part_plan_invalid',
      "the object under the plan key is not this invocation's plan",
    );
  }
  return { key, sha256: sha256Hex(stored.bytes), parts: parts.length, partRows };
}

function parsePlanBytes(bytes: Uint8Array, record: InvocationRecord): PartDescriptor[] {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new ValidationError('delivery.part_plan_invalid', 'the part plan object is not JSON');
  }
  return validatePlanParts(value, record.sealed.window);
}

/**
 * Verified plans this process has read, by key and SHA-256 (the object is immutable, so an
 * entry never goes stale): every part Lambda checks its descriptor against the plan, and
 * a warm container running many parts of one window reads the plan object once, not once
 * per part (which would be O(parts²) bytes over a window).
 */
const PLANS = new Map<string, PartDescriptor[]>();
const PLANS_KEPT = 8;

/** The journaled plan, read back and verified against its SHA-256 (the part step, verify-eof). */
export async function readPlan(deps: Pick<DeliveryDeps, 'ports'>, record: InvocationRecord): Promise<PartDescriptor[]> {
  const plan = journaledPlan(record);
  const id = `${deps.ports.objects.location}/${plan.key}#${plan.sha256}`;
  const kept = PLANS.get(id);
  if (kept) return kept;
  const stored = await readVerified(deps.ports.objects, plan.key, plan.sha256);
  const parts = parsePlanBytes(stored.bytes, record);
  if (parts.length !== plan.parts)
    throw new ValidationError(
      'delivery.part_plan_invalid',
      'the part plan object does not hold the journaled number of parts',
    );
  if (PLANS.size >= PLANS_KEPT) PLANS.delete(PLANS.keys().next().value as string);
  PLANS.set(id, parts);
  return parts;
}

function journaledPlan(record: InvocationRecord): PlanFact {
  const plan = record.facts.plan;
  if (!plan) throw new TransitionPreconditionError(`invocation ${record.invocationId} has no part plan`);
  return plan;
}

/** What the Map over the journaled plan reads (deliver-window's ExtractLoadParts, delivery-resume's ContinueParts). */
export function mapPlanOf(record: InvocationRecord, deps: DeliveryDeps, plan = journaledPlan(record)): MapPlan {
  return {
    bucket: bucketOf(deps.ports.objects.location),
    key: plan.key,
    resultsPrefix: mapResultsPrefixOf(record.route, record.invocationId),
    maxConcurrency: deps.route.route.maxConcurrency,
    parts: plan.parts,
  };
}

/** `/s3/<bucket>` → `<bucket>`. */
export function bucketOf(location: string): string {
  const match = /^\/s3\/([^/]+)$/.exec(location);
  if (!match?.[1])
    throw new ValidationError('delivery.work_root_invalid', 'the object store does not name an S3 bucket');
  return match[1];
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const planPartsStep = rereadOnStale(planPartsOnce);
