import type { QualityRules } from '../../domain/delivery/manifest-types.js';
import type { StagingFacts } from '../../ports/target.js';
import { QualityCheckUnrunnableError } from '../../domain/delivery/target-errors.js';
import { seqRangeOf } from '../../domain/delivery/parts.js';
import { forEachConcurrently } from '../../engine/concurrently.js';
import type { InvocationRecord } from '../journal/records.js';
import { readPlan } from './plan-parts.js';
import type { DeliveryDeps } from '../deps.js';
import { transition } from '../journal/transition.js';
import { loadForStep, output, parseStepInput, stagingRefOf, transitionIdOf, type StepOutput } from './common.js';
import { rereadOnStale } from './carried.js';

export interface QualityOutput extends StepOutput {
  /**
   * Names of the rules the stage failed (empty: it passed). Names only, never values; a
   * check the target could not run is `unrunnable: <the target's reason>`.
   */
  failures: string[];
}

/** The route's quality rules against what the stage holds; the names of the failed rules. */
export function qualityFailures(rules: QualityRules, facts: StagingFacts, loadedRows: number): string[] {
  const failures: string[] = [];
  if (rules.rowCountMatchesReceipts && facts.rows !== loadedRows) failures.push('row_count_matches_receipts');
  if (rules.uniqueKeys && facts.duplicateKeys !== 0) failures.push('unique_keys');
  for (const column of rules.notNull) if ((facts.nulls[column] ?? 0) !== 0) failures.push(`not_null:${column}`);
  for (const a of rules.assertions) if (facts.assertions[a.name] !== a.expect) failures.push(`assertion:${a.name}`);
  return failures;
}

/** Parts probed at once: each is one range query of the stage. */
const PARALLEL = 8;

/**
 * The stage's quality facts part by part (an index range of the stage each, `PARALLEL`
 * at once), never one query over the whole window for what a part can answer: rows and
 * nulls add up over parts, and so do key duplicates when the keys include the source
 * time column (equal keys then have equal times, and the plan never splits one instant
 * across parts). Keys without it can repeat across parts: that check, and the route's
 * assertions (the operator's SQL over the whole stage), are one whole-stage query.
 */
export async function stagingFactsByPart(deps: DeliveryDeps, record: InvocationRecord): Promise<StagingFacts> {
  const { quality: rules, target, source } = deps.route.route;
  const staging = stagingRefOf(record);
  const keys = rules.uniqueKeys ? target.keyColumns : [];
  const partLocal = keys.includes(source.timeColumn);
  const plan = await readPlan(deps, record);
  const total: StagingFacts = {
    rows: 0,
    duplicateKeys: 0,
    nulls: Object.fromEntries(rules.notNull.map((c) => [c, 0])),
    assertions: {},
  };
  await forEachConcurrently(plan, PARALLEL, async (part) => {
    const facts = await deps.target.stagingFacts(staging, {
      keyColumns: partLocal ? keys : [],
      notNull: rules.notNull,
      assertions: [],
      range: seqRangeOf(part.part),
    });
    total.rows += facts.rows;
    total.duplicateKeys += facts.duplicateKeys;
    for (const c of rules.notNull) total.nulls[c] = (total.nulls[c] ?? 0) + (facts.nulls[c] ?? 0);
  });
  const whole = (!partLocal && keys.length > 0) || rules.assertions.length > 0;
  if (whole) {
    const facts = await deps.target.stagingFacts(staging, {
      keyColumns: partLocal ? [] : keys,
      notNull: [],
      assertions: rules.assertions.map((a) => ({ name: a.name, sql: a.sql })),
    });
    if (!partLocal) total.duplicateKeys = facts.duplicateKeys;
    total.assertions = facts.assertions;
    total.rows = facts.rows; // the whole stage's count, rows under no part's range too
  }
  return total;
}

/**
 * Step 6: the publication receipt first (the mode's `adoptPublication`: a publication
 * that landed unjournaled → PUBLISHED, never REEXTRACT_REQUIRED), then the quality probes
 * on the exact owned stage (`target.stagingFacts`, read-only) against the route's rules. Acts only in VERIFIED_EOF. A pass journals nothing (the probe
 * is read-only and repeatable; publish follows). A failure moves VERIFIED_EOF →
 * REEXTRACT_REQUIRED (`acted` is true whenever the probes ran), not INCIDENT_RETAINED: the state-to-action guide (docs/rules.md#state-to-action) names a stage that "fails
 * quality" as one that can never be published and must be retired before a new complete
 * invocation, and REEXTRACT_REQUIRED offers exactly that retirement. INCIDENT_RETAINED is
 * kept for contradicting evidence (an owned object that is not ours, a foreign receipt),
 * where no live action is safe; a failed rule on a stage we provably own and never
 * published is not ambiguous. A check the target cannot run on the stage (a column
 * dropped since Begin's check, an assertion that does not compile:
 * `delivery.quality_check_unrunnable`) is a failure too — no resume could ever run it.
 */
async function qualityOnce(input: unknown, deps: DeliveryDeps): Promise<QualityOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  if (record.state !== 'VERIFIED_EOF') return { ...output(step, record, false), failures: [] };
  const rules = deps.route.route.quality;
  const custody = await heldCustody();
  // Receipt first: a publication that landed unjournaled is adopted, never judged by its stage.
  const adopted = await deps.mode.adoptPublication(record, step.fence, deps);
  if (adopted) return { ...output(step, adopted.invocation, !adopted.alreadyApplied, custody), failures: [] };
  const failures = await stagingFactsByPart(deps, record).then(
    (facts) => qualityFailures(rules, facts, record.facts.parts?.rows ?? 0),
    (error: unknown) => {
      // A check the target cannot run on this stage fails it, as a failed rule does: the
      // stage can never pass, so it is never kept under custody waiting for a resume.
      if (error instanceof QualityCheckUnrunnableError) return [`unrunnable: ${error.message}`];
      throw error;
    },
  );
  if (failures.length === 0) return { ...output(step, record, true, custody), failures };
  const result = await transition(deps.ports, ref, {
    from: 'VERIFIED_EOF',
    to: 'REEXTRACT_REQUIRED',
    fence: step.fence,
    transitionId: transitionIdOf('quality-failed', record.invocationId),
    known: { invocation: record, custody },
  });
  return { ...output(step, result.invocation, !result.alreadyApplied, custody), failures };
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const quality = rereadOnStale(qualityOnce);
