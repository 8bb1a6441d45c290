import type { PublicationMode } from '../delivery/publication-mode.js';
import { TRANSACTION_MODE } from '../delivery/transaction-mode.js';
import type { SelectedRoute } from '../domain/delivery/manifest-types.js';
import { ConfigError } from '../domain/errors.js';
import { ReaderGuardHeldError } from '../domain/quality/errors.js';
import type { TransactionLeg } from '../ports/authority.js';
import type { ExchangeTargetPort } from '../ports/exchange-target.js';
import type { Ports } from '../ports/index.js';
import { capsuleAsRead, type ContinuityRef } from '../quality/capsule-continuity.js';
import type { ObserveReader } from '../quality/observe-reader.js';
import { capsuleGovernance } from './completed-capsule.js';
import type { ExchangeMode, ExchangeSides } from './exchange-deps.js';
import { PUBLICATION_STEPS } from './publication-steps.js';
import { reconcileExchange } from './reconcile-exchange.js';
import { retireCandidate } from './retire-candidate.js';
import { cleanupPublication } from './steps/cleanup.js';
import { successorLegsOf } from './successor.js';

/**
 * The ClickHouse exchange mode (`mode: exchange`, docs/publication.md 'ClickHouse publication and quality governance'; src/delivery/publication-mode.ts):
 * publish-clickhouse's steps (publication-steps.ts); a successor's begin closes the
 * previous operation's replay window (successor.ts); no receipt row to adopt (the dispatch
 * intent, journaled before the one EXCHANGE, records a publication attempt, and
 * VERIFIED_EOF has none); evidence and checkpoint gated on the COMPLETE capsule
 * (completed-capsule.ts); the publication's cleanup (steps/cleanup.ts); reconcile by UUID
 * with the fence rename (reconcile-exchange.ts); retire by the candidate's UUID
 * (retire-candidate.ts); resume's takeover only while no reader guard is held (below).
 */
export function exchangeMode(sides: ExchangeSides): ExchangeMode {
  return {
    sides,
    steps: PUBLICATION_STEPS,
    beginLegs: successorLegsOf,
    adoptPublication: () => Promise.resolve(undefined),
    governance: capsuleGovernance,
    cleanup: cleanupPublication,
    reconcilePublication: reconcileExchange,
    retirePublication: retireCandidate,
    resumeCondition: noReaderGuard,
  };
}

/**
 * The publication mode of a route, by its `target.mode`: the ClickHouse exchange for
 * `exchange` (its EXCHANGE side required: the route's target opened as ClickHouse), the SQL
 * transaction otherwise (src/delivery/transaction-mode.ts). What every composition root
 * (the Lambda deps, the CLI, the local runs, the tests) puts in DeliveryDeps.mode.
 */
export function publicationModeOf(
  route: SelectedRoute,
  sides: { exchange?: ExchangeTargetPort | undefined; observeReader: ObserveReader },
): PublicationMode {
  if (route.route.target.mode !== 'exchange') return TRANSACTION_MODE;
  if (!sides.exchange)
    throw new ConfigError(
      'publication.exchange_mode',
      `route ${route.name} publishes by EXCHANGE but its target was not opened as ClickHouse`,
    );
  return exchangeMode({ exchange: sides.exchange, observeReader: sides.observeReader });
}

/**
 * Resume's custody takeover only while the capsule (if any) holds no reader guard, checked
 * in the same transaction by the capsule's version as read — as the operator's observe does
 * (src/quality/operator-observe.ts, the publication schedule with seed 47). A takeover from a run that took the
 * guard after resume's own checks would fence that run out of ever persisting its observation
 * or releasing its guard: held forever, and its retries refused as fenced, so no incident
 * either. Refused here with Quality.ReaderGuardHeld, nothing written; resume could not pass
 * a held guard anyway (observe-target and cleanup refuse it). The capsule is read through the
 * continuity check (src/quality/capsule-continuity.ts): a rolled-back capsule is refused
 * here, before custody moves, never resumed.
 */
async function noReaderGuard(ports: Ports, ref: ContinuityRef): Promise<TransactionLeg[]> {
  const { capsule, legs } = await capsuleAsRead(ports, ref);
  if (capsule?.schema === 2 && capsule.reader)
    throw new ReaderGuardHeldError(
      'resume would take custody from the run holding the quality reader guard; nothing was written (the guard has no expiry and no force-clear: quiescence procedure)',
    );
  return legs;
}
