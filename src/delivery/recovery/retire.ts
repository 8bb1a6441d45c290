import { stagingTableOf } from '../../domain/delivery/identifiers.js';
import type { StagingRef } from '../../domain/delivery/target-types.js';
import type { InvocationRecord } from '../journal/records.js';
import { releaseCustody } from '../custody.js';
import { DELIVERY_CUT_POINTS } from '../cut-points.js';
import { recordFacts, transition } from '../journal/transition.js';
import { ownerBindingOf, stagingRefOf, transitionIdOf } from '../steps/common.js';
import { dropOrphanStage } from '../steps/orphan-stage.js';
import { rerunTransient } from '../../engine/rerun.js';
import {
  knownOf,
  RecoveryRetainedError,
  runRecovery,
  type RecoveryContext,
  type RecoveryDeps,
  type RecoveryInput,
  type RecoveryResult,
} from './recovery-session.js';

/**
 * `retire` (EMPTY_STAGING, PARTIAL_PROVED, REEXTRACT_REQUIRED): rechecks through the
 * publication mode (`retirePublication`) that the invocation was not published — no
 * receipt row; a ClickHouse candidate's UUID not under the target name, the candidate
 * dropped — (a publication is contradicting evidence: INCIDENT_RETAINED), then drops
 * exactly the owned stage and proves its absence.
 *
 * The drop runs with `unlessPublished` (ports/target.ts): it takes the invocation's
 * publication lock and re-probes the receipt under it, because a publisher of an older
 * epoch that passed its custody check before this session's takeover is not fenced by
 * the authority — only the target can order it against the drop. A receipt found there
 * means the window WAS published while the journal says it was not: INCIDENT_RETAINED
 * (exit 1, delivery.retire_publication_found), nothing dropped, custody kept. Not
 * PUBLISHED: none of the retire states has an edge to PUBLISHED, the journal proved
 * (PARTIAL_PROVED, REEXTRACT_REQUIRED) that this stage must never be published, and the
 * checkpoint, evidence and cleanup that PUBLISHED would lead to need an operator's
 * judgement of a publication the journal did not authorize. A publication that comes
 * after the drop finds the stage gone and publishes nothing.
 *
 * EMPTY_STAGING with no recorded stage (a crash between CREATE and the journal write):
 * the stage is observed under its derived name and the owner binding recomputed from the
 * seal. Ours → its object id is journaled first (the same record create-staging would
 * have written), then it is dropped like any recorded stage; nothing there (and the
 * principal can see the schema) → absence proved as it stands; a table without our
 * marker → INCIDENT_RETAINED, untouched.
 *
 * Drop outcomes (ATTACHED, the stage swapped in as the receipt's partition, is a
 * publication found like PUBLISHED): ABSENT_PROVED → RETIRED with the absence proof, custody released in the
 * same transaction (the transition rule refuses RETIRED without it); NOT_OURS →
 * INCIDENT_RETAINED (delivery.retire_not_ours); ABSENCE_UNPROVABLE → state and custody
 * kept for an elevated principal (delivery.retire_absence_unprovable); repeating is safe.
 * The checkpoint never moves.
 *
 * Once RETIRED, the derived stage is looked at once more and dropped if ours
 * (steps/orphan-stage.ts): a fenced CreateStaging that created it between this session's
 * drop (or observation of absence) and the RETIRED write, and read the journal before
 * that write, leaves it to this session. Retire repeated on RETIRED (a crash between the
 * write and that look, the flow's retry, an operator's second run) takes no custody and
 * does only that look (journal-states.ts REPEATABLE_ON).
 */
export async function retire(input: RecoveryInput, deps: RecoveryDeps): Promise<RecoveryResult> {
  return runRecovery(
    'retire',
    input,
    deps,
    async (taken) => {
      const { ref, fence, deps: d } = taken;
      // The custody the takeover just wrote is the check before the target is touched (as a
      // step's carried custody is); every journal write below carries it as its fence leg.
      // The mode says whether the publication exists after all: the SQL receipt row, or a
      // ClickHouse candidate's UUID (dropped here when it was never published).
      const publication = await d.mode.retirePublication(taken);
      if (publication === 'PUBLISHED') await publicationFound(taken);
      if (publication === 'NOT_OURS') await notOurs(taken);
      if (publication === 'UNPROVABLE') unprovable(taken);
      const found = taken.record.facts.staging
        ? { staging: stagingRefOf(taken.record), ctx: taken }
        : await observedStage(taken);
      if ('retired' in found) return found.retired;
      const { staging, ctx } = found;
      const drop = await d.target.dropStaging(staging, { unlessPublished: true });
      if (drop.status === 'ABSENT_PROVED') {
        const retired = await releaseCustody(d.ports, ref, {
          from: ctx.record.state,
          to: 'RETIRED',
          fence,
          transitionId: transitionIdOf('retire', ctx.record.invocationId),
          patch: { absence: { table: staging.table, objectId: staging.objectId } },
          known: knownOf(ctx),
        });
        await sweepAfterRetired(d, retired.invocation);
        return retired.invocation;
      }
      // ATTACHED: the stage is this invocation's published partition — published, like PUBLISHED.
      if (drop.status === 'PUBLISHED' || drop.status === 'ATTACHED') await publicationFound(ctx);
      if (drop.status === 'NOT_OURS') await notOurs(ctx);
      return unprovable(ctx);
    },
    { repeat: sweepAfterRetired },
  );
}

async function publicationFound(ctx: RecoveryContext): Promise<never> {
  const { record, ref, fence, deps } = ctx;
  await transition(deps.ports, ref, {
    from: record.state,
    to: 'INCIDENT_RETAINED',
    fence,
    transitionId: transitionIdOf('retire-published', record.invocationId),
    known: knownOf(ctx),
  });
  throw new RecoveryRetainedError(
    'delivery.retire_publication_found',
    'a publication receipt exists for this invocation; it cannot be retired',
    'INCIDENT_RETAINED',
  );
}

async function notOurs(ctx: RecoveryContext): Promise<never> {
  const { record, ref, fence, deps } = ctx;
  await transition(deps.ports, ref, {
    from: record.state,
    to: 'INCIDENT_RETAINED',
    fence,
    transitionId: transitionIdOf('retire-not-ours', record.invocationId),
    known: knownOf(ctx),
  });
  throw new RecoveryRetainedError(
    'delivery.retire_not_ours',
    "the stage's name holds an object that is not ours",
    'INCIDENT_RETAINED',
  );
}

function unprovable(ctx: RecoveryContext): never {
  throw new RecoveryRetainedError(
    'delivery.retire_absence_unprovable',
    "the stage's absence cannot be proved by this principal",
    ctx.record.state,
  );
}

/**
 * The unrecorded stage of an EMPTY_STAGING invocation, by derived name and owner marker:
 * the journaled ref when it is ours, with the context its record left (the next write is
 * conditioned on it), or the RETIRED record (nothing was there).
 */
async function observedStage(
  ctx: RecoveryContext,
): Promise<{ staging: StagingRef; ctx: RecoveryContext } | { retired: InvocationRecord }> {
  const { record, ref, fence, deps } = ctx;
  const stage = stagingTableOf(record.invocationId, deps.route.route.target.table);
  const table = { schema: stage.schema, table: stage.name };
  const owner = ownerBindingOf(record.sealed);
  const seen = await deps.target.observeStaging(table, { invocationId: record.invocationId, owner });
  if (seen.status === 'NOT_OURS') return notOurs(ctx);
  if (seen.status === 'ABSENT') {
    if (!seen.metadataVisible) unprovable(ctx);
    const retired = await releaseCustody(deps.ports, ref, {
      from: record.state,
      to: 'RETIRED',
      fence,
      transitionId: transitionIdOf('retire', record.invocationId),
      patch: { absence: { table } },
      known: knownOf(ctx),
    });
    await sweepAfterRetired(deps, retired.invocation);
    return { retired: retired.invocation };
  }
  // Exactly the record create-staging writes (same transition id and facts): a late
  // create-staging of an older session finds it already journaled.
  const recorded = await recordFacts(deps.ports, ref, {
    state: 'EMPTY_STAGING',
    fence,
    transitionId: transitionIdOf('create-staging', record.invocationId),
    patch: { staging: { table, objectId: seen.objectId, owner }, ownedStagesRecorded: true },
    cutPoint: DELIVERY_CUT_POINTS.stagingRecord,
    known: knownOf(ctx),
  });
  return { staging: stagingRefOf(recorded.invocation), ctx: { ...ctx, record: recorded.invocation } };
}

/**
 * The look after RETIRED (steps/orphan-stage.ts), rerun while this process lives: a drop
 * whose request was lost or refused is repeated here (the drop is repeat-safe: exact object
 * id and owner marker). A crash is not rerun in process (a crashed process does not go on):
 * retire run again on RETIRED does this look (soak seeds 1417 and 1805).
 */
const SWEEP_RERUN = ['Cutpoint.OutcomeUnknown', 'Cutpoint.EffectFailed'] as const;

async function sweepAfterRetired(
  deps: Parameters<typeof dropOrphanStage>[0],
  record: Parameters<typeof dropOrphanStage>[1],
): Promise<void> {
  await rerunTransient(() => dropOrphanStage(deps, record), SWEEP_RERUN, 4);
}
