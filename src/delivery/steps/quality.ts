import type { QualityRules } from '../../domain/delivery/manifest-types.js';
import type { StagingFacts } from '../../ports/target.js';
import type { DeliveryDeps } from '../deps.js';
import { transition } from '../journal/transition.js';
import { adoptReceipt } from './publish.js';
import { loadForStep, output, parseStepInput, stagingRefOf, transitionIdOf, type StepOutput } from './common.js';
import { rereadOnStale } from './carried.js';

export interface QualityOutput extends StepOutput {
  /** Names of the rules the stage failed (empty: it passed). Names only, never values. */
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

/**
 * Step 6: the publication receipt first (`adoptReceipt`: a publication that landed
 * unjournaled → PUBLISHED, never REEXTRACT_REQUIRED), then the quality probes on the exact owned stage (`target.stagingFacts`, read-only)
 * against the route's rules. Acts only in VERIFIED_EOF. A pass journals nothing (the probe
 * is read-only and repeatable; publish follows). A failure moves VERIFIED_EOF →
 * REEXTRACT_REQUIRED (`acted` is true whenever the probes ran), not INCIDENT_RETAINED: the seed's guide names a stage that "fails
 * quality" as one that can never be published and must be retired before a new complete
 * invocation, and REEXTRACT_REQUIRED offers exactly that retirement. INCIDENT_RETAINED is
 * kept for contradicting evidence (an owned object that is not ours, a foreign receipt),
 * where no live action is safe; a failed rule on a stage we provably own and never
 * published is not ambiguous.
 */
async function qualityOnce(input: unknown, deps: DeliveryDeps): Promise<QualityOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  if (record.state !== 'VERIFIED_EOF') return { ...output(step, record, false), failures: [] };
  const rules = deps.route.route.quality;
  const custody = await heldCustody();
  // Receipt first: a publication that landed unjournaled is adopted, never judged by its stage.
  const adopted = await adoptReceipt(record, step.fence, deps);
  if (adopted) return { ...output(step, adopted.invocation, !adopted.alreadyApplied, custody), failures: [] };
  const facts = await deps.target.stagingFacts(stagingRefOf(record), {
    keyColumns: rules.uniqueKeys ? deps.route.route.target.keyColumns : [],
    notNull: rules.notNull,
    assertions: rules.assertions.map((a) => ({ name: a.name, sql: a.sql })),
  });
  const loadedRows = record.facts.parts?.rows ?? 0;
  const failures = qualityFailures(rules, facts, loadedRows);
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
