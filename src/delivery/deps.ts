import type { SelectedRoute } from '../domain/delivery/manifest-types.js';
import type { Ports } from '../ports/index.js';
import type { SourcePort } from '../ports/source.js';
import type { FaultInjector } from '../ports/faults.js';
import type { TargetPort } from '../ports/target.js';
import type { ExchangeTargetPort } from '../ports/exchange-target.js';
import type { TargetReader } from '../quality/observe-reader.js';

/**
 * What the deliver-window steps need, built once per process (a Lambda cold start, a CLI
 * run): the authority, object store and clock, the target, the route the invocation was
 * sealed for, and — only for a normal run — the ClickHouse source. Recovery builds these
 * deps WITHOUT a source: every step after extraction reads chunks from S3 and the journal,
 * so a recovery that would need the source fails with Delivery.SourceForbidden instead
 * of opening ClickHouse.
 */
export interface DeliveryDeps {
  ports: Ports;
  target: TargetPort;
  /**
   * A ClickHouse route (`mode: exchange`, seed 000): the candidate, the one EXCHANGE, its
   * observation and the predecessor. Absent for SQL targets.
   */
  exchange?: ExchangeTargetPort;
  /** Absent in recovery (source-free). */
  source?: SourcePort;
  /** The route, with its bindings, as selected from the manifest the invocation sealed. */
  route: SelectedRoute;
  /**
   * How an observation (ObserveTarget, resume's observe-target, the operator's observe)
   * builds its bounded reader: a deployed Lambda forks its own bundle and resolves the
   * binding from its secret, within its remaining time (functions/quality/observe-step.ts).
   * Absent: the default reader (generic child entry, the binding from the environment).
   */
  observeReader?: () => Promise<TargetReader>;
  /**
   * The run's fault injector, the one its ports and target cross: the bounded reader crosses
   * it too (`quality.worker.reap`), so every cut point `cutpoint faults list` names for a flow
   * or command can be armed through it. Absent: the reader arms nothing.
   */
  faults?: FaultInjector;
}
