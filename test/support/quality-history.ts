import type { ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';
import { createClickHouseExchangeTarget } from '../../src/adapters/clickhouse/publication-target.js';
import { createClickHouseStageTarget } from '../../src/adapters/clickhouse/publication-stage.js';
import { createClickHouseSource } from '../../src/adapters/clickhouse/source.js';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import { CUT_POINT_NAMES } from '../../src/cut-points.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { inspectInvocation } from '../../src/delivery/journal/listing.js';
import type { AuthorityItem } from '../../src/ports/authority.js';
import type { Fence } from '../../src/domain/fence.js';
import type { Ports } from '../../src/ports/index.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { candidateUuidOf, exchangeNamesOf } from '../../src/domain/publication/candidate.js';
import { PUBLICATION_CUT_POINTS } from '../../src/domain/publication/cut-points.js';
import { QUALITY_CUT_POINTS } from '../../src/domain/quality/cut-points.js';
import { inspectQuality } from '../../src/quality/inspect.js';
import { openObserveWorld, type ObserveWorld } from '../fixtures/quality/observe-world.js';
import type { GovernanceSnapshot } from './governance-invariants.js';
import { Prng } from './prng.js';
import { publicationManifest, targetDdl } from './publication-world.js';
import { exchangeModeOver } from './exchange-mode.js';

/**
 * The world and model of the randomized governance history (F3, docs/rules.md#governance-invariants,
 * test/faults/quality-history.random.test.ts): the observe world (a ClickHouse host over
 * HTTP, so the real reader child runs) with every ClickHouse statement of the publication
 * adapters recorded under the actor that sent it (I2, I8), fault-free ports for the checks,
 * and the per-seed model of operations on their target tables.
 */

export const SELECTOR = '/config/publish.yaml#daily';

/** One statement the publication adapters sent, and which history actor was running. */
export interface SentStatement {
  actor: string;
  sql: string;
}

export interface HistoryWorld {
  world: ObserveWorld;
  sent: SentStatement[];
  /** The actor the driver is running now (statements are tagged with it). */
  actor: { current: string };
  /** Ports on their own (never armed) switch: the checks read through them. */
  checkPorts: Ports;
  depsOf(table: string): { deps: DeliveryDeps; manifestText: string };
  /** A fresh `pub.<table>` holding one stale row (the predecessor generation P); returns P's UUID. */
  createTable(name: string): Promise<string>;
  /** Arms one fault spec on both switches (the stores' and the ClickHouse adapters'). */
  arm(spec: string): void;
  disarm(): void;
  /** Whether the armed rule fired on either switch. */
  fired(): boolean;
  close(): Promise<void>;
}

/** A ClickHouse handle whose client records every statement (query, command, exec) under the current actor. */
function recordingHandle(
  handle: ClickHouseHandle,
  sent: SentStatement[],
  actor: { current: string },
): ClickHouseHandle {
  const client = new Proxy(handle.client, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      const fn = (value as (...args: unknown[]) => unknown).bind(target);
      if (property !== 'query' && property !== 'command' && property !== 'exec') return fn;
      return (params: { query: string }) => {
        sent.push({ actor: actor.current, sql: params.query });
        return fn(params);
      };
    },
  });
  return { client, streamLines: (statement, signal) => handle.streamLines(statement, signal), close: async () => {} };
}

export async function openHistoryWorld(): Promise<HistoryWorld> {
  const world = await openObserveWorld();
  // The flow's ObserveTarget step and resume build the default reader from the environment.
  process.env.CH_PUB_URL = world.host.url;
  process.env.CH_URL = world.host.url;
  const sent: SentStatement[] = [];
  const actor = { current: 'setup' };
  const spied = recordingHandle(world.ch, sent, actor);
  const target = createClickHouseStageTarget(spied, world.faults);
  const exchange = createClickHouseExchangeTarget(spied, world.faults);
  const source = createClickHouseSource(spied, { closeHandle: false });
  const checkPorts = awsPorts(world.stores.config, new FaultSwitch());
  let armed: Array<{ fired: unknown[] }> = [];
  return {
    world,
    sent,
    actor,
    checkPorts,
    depsOf(table) {
      // One part of two chunks (the world's default is two parts of three): the history pays for many extractions.
      const manifestText = publicationManifest({ table })
        .replace('chunk_rows: 200', 'chunk_rows: 600')
        .replace('part_rows: 600', 'part_rows: 5000');
      const route = selectRoute(parseManifest(manifestText, '/config/publish.yaml'), 'daily');
      return {
        manifestText,
        deps: { ports: world.stores.ports, target, mode: exchangeModeOver(exchange), source, route },
      };
    },
    async createTable(name) {
      await world.ch.client.command({ query: targetDdl(name) });
      await world.ch.client.command({
        query: `INSERT INTO pub.${name} VALUES (99999, '2026-11-02 12:00:00.000', 'stale', 0, 'old generation')`,
      });
      return (await world.uuidOf(name))!;
    },
    arm(spec) {
      armed = [world.stores.faults.arm(spec), world.faults.arm(spec)];
    },
    disarm() {
      world.stores.faults.disarm();
      world.faults.disarm();
      armed = [];
    },
    fired: () => armed.some((a) => a.fired.length > 0),
    close: () => world.close(),
  };
}

const P = PUBLICATION_CUT_POINTS;
const Q = QUALITY_CUT_POINTS;
const OBSERVE_CUT_POINTS = [
  Q.readerAcquire,
  Q.workerReap,
  Q.pendingCommit,
  Q.completeCommit,
  Q.failedCommit,
  Q.completionPut,
  Q.completionRecord,
];
const CLEANUP_CUT_POINTS = [
  'delivery.evidence.put',
  'delivery.checkpoint.advance',
  P.predecessorDrop,
  'delivery.custody.release',
];

/**
 * The cut points each flow step and operator action crosses (the reader child's probe is
 * armed through the child's environment, not here): a fault is armed where the history is
 * about to go, most of the time, so it fires.
 */
export const CUT_POINTS_OF: Readonly<Record<string, readonly string[]>> = {
  'create-staging': ['delivery.staging.record', 'delivery.journal.transition'],
  'plan-parts': ['delivery.plan.put', 'delivery.journal.transition'],
  'extract-load-parts': ['delivery.chunk.put', 'delivery.part.claim', 'delivery.part.receipt', P.loadInsert],
  'verify-eof': ['delivery.journal.transition'],
  'fill-candidate': [P.candidateCreate, P.candidateFill, 'delivery.journal.transition'],
  'prepare-capsule': [Q.stagedProbe, Q.preparedPut, Q.capsulePrepare],
  dispatch: [P.dispatchIntent, P.exchange, P.observe, P.commitRecord],
  'observe-target': OBSERVE_CUT_POINTS,
  evidence: ['delivery.evidence.put'],
  checkpoint: ['delivery.checkpoint.advance'],
  cleanup: [P.predecessorDrop, 'delivery.custody.release'],
  reconcile: [P.observe, P.fenceRename, 'delivery.custody.acquire', 'delivery.journal.transition'],
  resume: [Q.capsulePrepare, P.dispatchIntent, P.exchange, ...OBSERVE_CUT_POINTS, ...CLEANUP_CUT_POINTS],
  retire: ['delivery.custody.acquire', 'delivery.custody.release'],
  observe: ['delivery.custody.acquire', ...OBSERVE_CUT_POINTS],
  replay: [Q.replayRead],
  begin: ['delivery.custody.acquire'],
};

/** Every cut point a history may arm. */
export const HISTORY_CUT_POINTS: readonly string[] = [...new Set(Object.values(CUT_POINTS_OF).flat())].filter((c) =>
  CUT_POINT_NAMES.has(c),
);

/** One operation (one invocation) on a target table. */
export interface Op {
  name: string;
  table: string;
  invocationId: string;
  targetId: string;
  deps: DeliveryDeps;
  manifestText: string;
  /** The flow's session fence (from begin); later sessions fence it out. */
  fence: Fence;
  /** Index of the flow's next step in PUBLICATION_STEPS; undefined once the flow is over (ended or failed). */
  next: number | undefined;
  candidateUuid: string;
  candidateName: string;
  /** Capsule states seen after each step, in order (I5). */
  capsuleStates: string[];
  /** The capsule item as first seen PREPARED: a zombie observer's stale view. */
  staleCapsule?: AuthorityItem;
  /** Guard tokens seen held at the end of a step: never released afterwards (I6). */
  guards: Set<string>;
  checkpointAdvances: number;
  /** The generation under the target name when it began (P until a dispatch fact names it). */
  predecessorUuid: string;
  /** What the invariant checker read after each step (I3, I5 compare with them). */
  snapshots: GovernanceSnapshot[];
  /** Its successor boundary has been checked (I7). */
  checkedBoundary?: boolean;
}

export interface TableModel {
  name: string;
  targetId: string;
  /** The UUID under the name when the table was created (the first predecessor). */
  initialUuid: string;
  /** Distinct UUIDs seen under the name, in order (I3: never swapped back). */
  uuids: string[];
  ops: Op[];
  checkpointVersion: number;
}

export class HistoryError extends Error {
  override name = 'HistoryError';
}

export class History {
  readonly rng: Prng;
  step = 0;
  readonly trace: string[] = [];
  readonly tables: TableModel[] = [];
  opCount = 0;
  /** A fault for the next reader child (CUTPOINT_FAULTS in its environment), one observation. */
  childFault: string | undefined;
  /** The fault spec armed on the switches, and every spec that fired (in order). */
  armed: string | undefined;
  readonly firedFaults: string[] = [];
  /** Successors that began, with the operation they followed and the epoch of their custody (I7). */
  readonly successors: Array<{ op: Op; prev: Op; epoch: number }> = [];

  constructor(
    readonly seed: number,
    readonly hw: HistoryWorld,
  ) {
    this.rng = new Prng(seed);
  }

  check(condition: unknown, message: string): asserts condition {
    if (!condition) throw new HistoryError(`[seed ${this.seed}, step ${this.step}] ${message}`);
  }

  private readonly started = Date.now();

  note(line: string): void {
    this.trace.push(`#${this.step} +${((Date.now() - this.started) / 1000).toFixed(1)}s ${line}`);
  }

  ops(): Op[] {
    return this.tables.flatMap((t) => t.ops);
  }

  newOp(table: TableModel, invocationId: string, fence: Fence, targetId: string): Op {
    const { deps, manifestText } = this.hw.depsOf(table.name);
    const op: Op = {
      name: `op${this.opCount++}`,
      table: table.name,
      invocationId,
      targetId,
      deps,
      manifestText,
      fence,
      next: 0,
      candidateUuid: candidateUuidOf(invocationId),
      candidateName: exchangeNamesOf(invocationId, { database: 'pub', table: table.name }).candidate,
      capsuleStates: [],
      guards: new Set(),
      checkpointAdvances: 0,
      predecessorUuid: table.uuids.at(-1)!,
      snapshots: [],
    };
    table.ops.push(op);
    return op;
  }
}

export const nameOf = (error: unknown): string => (error instanceof Error ? error.name : String(error));
export const messageOf = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${(error as { code?: string }).code ?? ''} ${error.message}` : String(error);

/** Permitted actions and diagnostic of an operation: the governance projection when governed, the delivery one before. */
export async function inspectOp(
  ports: Ports,
  op: Pick<Op, 'invocationId'>,
): Promise<{ state: string; actions: string[]; diagnostic: string; governed: boolean }> {
  try {
    const p = await inspectQuality(ports, op.invocationId);
    return { state: p.journal_state, actions: [...p.permitted_actions], diagnostic: p.diagnostic_code, governed: true };
  } catch (error) {
    if (nameOf(error) !== 'Quality.NotGoverned') throw error;
    const p = await inspectInvocation(ports, op.invocationId);
    return { state: p.state, actions: [...p.permitted_actions], diagnostic: p.diagnostic_code, governed: false };
  }
}
