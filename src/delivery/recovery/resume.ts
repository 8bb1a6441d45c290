import { SourceForbiddenError } from '../../domain/delivery/source-errors.js';
import type { InvocationRecord } from '../journal/records.js';
import type { PlanOutput } from '../steps/plan-parts.js';
import { continueWriting, handPartsToMap, stepsToRelease } from './continue.js';
import {
  knownOf,
  runRecovery,
  type RecoveryDeps,
  type RecoveryInput,
  type RecoveryResult,
} from './recovery-session.js';

/**
 * `resume` (VERIFIED_EOF, PUBLISHED, SUCCEEDED): the remaining steps of the route's
 * publication mode with source-free deps, to CUSTODY_RELEASED (a ClickHouse exchange
 * route: publish-clickhouse's steps — a dispatched operation is never dispatched again,
 * PUBLISHED is observed — and the custody takeover only while its capsule holds no reader
 * guard: the mode's `resumeCondition`). From VERIFIED_EOF the publish step's own
 * mechanism decides: target.publish looks for the exact receipt first, inside the
 * publication transaction, so a COMMIT that landed earlier (a crash after it, a zombie's
 * late COMMIT) is taken from its receipt (→ PUBLISHED) and never published again, and a
 * receipt that does not match → INCIDENT_RETAINED. A run that ends anywhere but
 * CUSTODY_RELEASED (a stage that no longer verifies or fails quality → REEXTRACT_REQUIRED;
 * a foreign receipt; cleanup that cannot prove absence) exits 1 with custody retained.
 *
 * From a continuable PARTIAL_PROVED, resume continues (continue.ts): the unfinished parts
 * after their last journaled chunk, as `deps.extract` says — in this process through the
 * route's source (the only recovery that reads it), then the same steps to
 * CUSTODY_RELEASED; or handed to the delivery-resume flow's Map (`continueOnMap`: the state
 * is then WRITING_UNKNOWN, and the flow proves EOF and resumes again). Without
 * `deps.extract` it is refused (Delivery.SourceForbidden) before custody is taken.
 */
export async function resume(input: RecoveryInput, deps: RecoveryDeps): Promise<RecoveryResult> {
  const { resumeCondition } = deps.mode;
  const { extract } = deps;
  let handed: PlanOutput | undefined;
  const result = await runRecovery(
    'resume',
    input,
    deps,
    async (ctx) => {
      // The first step carries what the takeover left (steps/carried.ts): it reads nothing before it acts.
      const { record, fence, deps: d } = ctx;
      if (record.state === 'PARTIAL_PROVED' && extract) {
        if ('source' in extract) return continueWriting(ctx, extract.source);
        handed = await handPartsToMap(ctx);
        return handed.known?.invocation as InvocationRecord;
      }
      return stepsToRelease('resume', { invocationId: record.invocationId, fence, known: knownOf(ctx) }, d);
    },
    {
      refuse: (record) => {
        if (record.state === 'PARTIAL_PROVED' && !deps.extract) throw new SourceForbiddenError('streamWindow');
      },
      ...(resumeCondition
        ? { custodyCondition: (ports, ref) => resumeCondition(ports, { ...ref, route: deps.route.name }) }
        : {}),
    },
  );
  return handed ? { ...result, continueOnMap: handed } : result;
}
