import type { SelectedRoute } from '../domain/delivery/manifest-types.js';
import type { Ports } from '../ports/index.js';
import type { SourcePort } from '../ports/source.js';
import type { FaultInjector } from '../ports/faults.js';
import type { TargetPort } from '../ports/target.js';
import type { PublicationMode } from './publication-mode.js';

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
   * How the window is published (publication-mode.ts): the SQL transaction, or the
   * ClickHouse exchange with its EXCHANGE side and its observation's reader — picked by
   * the composition root from the route's `target.mode`.
   */
  mode: PublicationMode;
  /** Absent in recovery (source-free). */
  source?: SourcePort;
  /** The route, with its bindings, as selected from the manifest the invocation sealed. */
  route: SelectedRoute;
  /**
   * The run's fault injector, the one its ports and target cross: the bounded reader crosses
   * it too (`quality.worker.reap`), so every cut point `cutpoint faults list` names for a flow
   * or command can be armed through it. Absent: the reader arms nothing.
   */
  faults?: FaultInjector;
}
