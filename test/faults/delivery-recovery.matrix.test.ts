// Over ~300 lines (535), kept whole — one subject, one world: its cases share the emulators and fixtures they start (setup is what costs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { loadCustody } from '../../src/delivery/custody.js';
import { DELIVERY_CUT_POINTS, TARGET_CUT_POINTS } from '../../src/delivery/cut-points.js';
import { deliverWindow } from '../../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { inspectInvocation } from '../../src/delivery/journal/listing.js';
import { loadInvocation, type InvocationRecord } from '../../src/delivery/journal/records.js';
import { LIVE_ACTION_RUNNERS } from '../../src/delivery/recovery/actions.js';
import type { RecoveryDeps, RecoveryInput } from '../../src/delivery/recovery/recovery-session.js';
import { begin, type BeginInput } from '../../src/delivery/steps/begin.js';
import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { stagingTableNameOf } from '../../src/domain/delivery/identifiers.js';
import { JOURNAL_STATES, type JournalState } from '../../src/domain/delivery/journal-states.js';
import { permittedActions, type LiveAction } from '../../src/domain/delivery/action-guide.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import type { SelectedRoute } from '../../src/domain/delivery/manifest-types.js';
import type { FaultKind } from '../../src/domain/faults.js';
import type { SourcePort } from '../../src/ports/source.js';
import { SourceUnavailableError } from '../../src/domain/delivery/source-errors.js';
import { forbiddenSource, type GuardedSource } from '../../src/delivery/source-guard.js';
import {
  eventsTableDdl,
  fixedWindowManifest,
  generateEvents,
  newInvocationId,
  openDeliveryWorld,
  windowIdsOf,
  type DeliveryWorld,
} from '../support/delivery-world.js';
import { withKinds } from '../support/matrix-lane.js';

/**
 * The recovery fault matrix: the deliver-window matrix (deliver-window.matrix.test.ts)
 * disarms its fault before it recovers; this one faults the recovery actions themselves.
 * Each case prepares, with the in-process steps, one of the recovery entry states below
 * (the only fault during preparation is the one that creates that state), then runs the
 * scenario's recovery action with one cut point it passes through faulted persistently
 * (`*`, so the resume's in-process reruns cannot absorb it) by each fault kind, disarms,
 * and applies the first permitted action from inspect until the invocation is terminal.
 * The invariants: every state is one of the journal's and every journaled transition an edge
 * of its graph; the scenario's goal is reached (CUSTODY_RELEASED: the window's rows
 * exactly once, one receipt, the checkpoint advanced exactly once; RETIRED: no rows, no
 * receipt, the checkpoint never moved); the invocation's owned stage is gone; custody is
 * released; and no recovery action ever opened the source. Each case delivers to its own
 * target table, so custody and checkpoints are per case. Real components: DynamoDB Local
 * and the S3 emulator, embedded ClickHouse (chdb) as the source, embedded PostgreSQL as the
 * target (test/support/delivery-world.ts).
 */

const STEP_MS = 8_640_000; // 10 rows a day: cases are cheap, the window is two chunks
const GENERATED = 50; // five days
const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };

const manifestTextFor = (table: string) => fixedWindowManifest({ daily: { table, chunkRows: 10 } });
const selector = '/config/route.yaml#daily';

const sourceRows = generateEvents(GENERATED, STEP_MS);
const windowIds = windowIdsOf(sourceRows, WINDOW);

const C = DELIVERY_CUT_POINTS;
const T = TARGET_CUT_POINTS;

type ScenarioName =
  | 'reconcile-published'
  | 'reconcile-unpublished'
  | 'reconcile-writing'
  | 'resume-published'
  | 'resume-verified'
  | 'resume-partial'
  | 'retire-partial'
  | 'retire-unrecorded';

interface Scenario {
  name: ScenarioName;
  /** The recovery action run under the fault. */
  action: LiveAction;
  /** The journal state the preparation leaves and the action starts from. */
  entry: JournalState;
  /** Where recovery must end. */
  goal: 'CUSTODY_RELEASED' | 'RETIRED';
  /**
   * The action recovery prefers where it is offered, before ACTION_ORDER's: the operator's
   * choice, repeated until done (retire of a PARTIAL_PROVED that also offers resume).
   */
  prefer?: LiveAction;
  /**
   * Every cut point the action passes through from `entry` when nothing is faulted (the
   * discovery test below checks this list against the switches' hit counts).
   */
  cutPoints: readonly string[];
}

/**
 * - reconcile-published: PUBLICATION_UNKNOWN after a lost COMMIT acknowledgement (the
 *   receipt exists) → reconcile (→ PUBLISHED) → resume.
 * - reconcile-unpublished: PUBLICATION_UNKNOWN after a lost COMMIT request (no receipt) →
 *   reconcile (→ VERIFIED_EOF) → resume.
 * - reconcile-writing: WRITING_UNKNOWN after the source broke off mid-extraction →
 *   reconcile (→ PARTIAL_PROVED, its continuation proved) → resume (continue).
 * - resume-published: reconcile-published's entry, reconciled unfaulted → resume from PUBLISHED.
 * - resume-verified: reconcile-unpublished's entry, reconciled unfaulted → resume from
 *   VERIFIED_EOF (receipt probe, then the publication itself).
 * - resume-partial: reconcile-writing's entry, reconciled unfaulted → resume from
 *   PARTIAL_PROVED: continue (the unfinished parts after their last journaled chunk, the
 *   only recovery that reads the source), then the publication and the end.
 * - retire-partial: reconcile-writing's entry, reconciled unfaulted → retire from
 *   PARTIAL_PROVED (preferred over the continue it also offers: the operator chose it).
 * - retire-unrecorded: EMPTY_STAGING after a crash between the stage's CREATE and its journal
 *   write (no recorded stage) → retire observes the stage by its derived name and owner
 *   marker, journals it, drops it.
 */
const SCENARIOS: readonly Scenario[] = [
  {
    name: 'reconcile-published',
    action: 'reconcile',
    entry: 'PUBLICATION_UNKNOWN',
    goal: 'CUSTODY_RELEASED',
    cutPoints: [C.custodyAcquire, C.journalTransition],
  },
  {
    name: 'reconcile-unpublished',
    action: 'reconcile',
    entry: 'PUBLICATION_UNKNOWN',
    goal: 'CUSTODY_RELEASED',
    cutPoints: [C.custodyAcquire, C.journalTransition],
  },
  {
    name: 'reconcile-writing',
    action: 'reconcile',
    entry: 'WRITING_UNKNOWN',
    goal: 'CUSTODY_RELEASED',
    cutPoints: [C.custodyAcquire, C.journalTransition],
  },
  {
    name: 'resume-published',
    action: 'resume',
    entry: 'PUBLISHED',
    goal: 'CUSTODY_RELEASED',
    cutPoints: [
      C.custodyAcquire,
      C.journalTransition,
      C.evidencePut,
      C.checkpointAdvance,
      T.dropStaging,
      C.custodyRelease,
    ],
  },
  {
    name: 'resume-verified',
    action: 'resume',
    entry: 'VERIFIED_EOF',
    goal: 'CUSTODY_RELEASED',
    cutPoints: [
      C.custodyAcquire,
      C.journalTransition,
      T.publishCommit,
      C.evidencePut,
      C.checkpointAdvance,
      T.dropStaging,
      C.custodyRelease,
    ],
  },
  {
    name: 'resume-partial',
    action: 'resume',
    entry: 'PARTIAL_PROVED',
    goal: 'CUSTODY_RELEASED',
    cutPoints: [
      C.custodyAcquire,
      C.journalTransition,
      C.partClaim,
      C.chunkPut,
      T.loadChunk,
      C.partReceipt,
      T.publishCommit,
      C.evidencePut,
      C.checkpointAdvance,
      T.dropStaging,
      C.custodyRelease,
    ],
  },
  {
    name: 'retire-partial',
    action: 'retire',
    entry: 'PARTIAL_PROVED',
    goal: 'RETIRED',
    prefer: 'retire',
    cutPoints: [C.custodyAcquire, T.dropStaging, C.custodyRelease],
  },
  {
    name: 'retire-unrecorded',
    action: 'retire',
    entry: 'EMPTY_STAGING',
    goal: 'RETIRED',
    cutPoints: [C.custodyAcquire, C.stagingRecord, T.dropStaging, C.custodyRelease],
  },
];

const TARGET_POINTS = new Set<string>(Object.values(TARGET_CUT_POINTS));
const ACTION_ORDER: readonly LiveAction[] = ['reconcile', 'resume', 'retire'];
/** A rule that never fires: arming it only counts hits. */
const COUNT_ONLY = 'count.only:fail@1000000';

const cases = withKinds(
  SCENARIOS.flatMap((scenario) => scenario.cutPoints.map((cutPoint) => [scenario.name, cutPoint] as const)),
).map(([[name, cutPoint], kind]) => [name, cutPoint, kind] as const);
const scenarioOf = (name: ScenarioName): Scenario => SCENARIOS.find((s) => s.name === name) as Scenario;

let world: DeliveryWorld;
let tableSeq = 0;

beforeAll(async () => {
  world = await openDeliveryWorld({ rows: sourceRows });
}, 120_000);

afterAll(() => world?.close());

interface Case {
  table: string;
  invocationId: string;
  deps: DeliveryDeps;
  beginInput: BeginInput;
  recoveryInput: RecoveryInput;
  /** The source every recovery action of the case gets: refuses and records each call. */
  refusing: GuardedSource;
  /** The source a continue reads (RecoveryDeps.extract): the world's, counting the rows it yields. */
  extracted: { rows: number; mostPerStream: number };
  recoveryDeps: RecoveryDeps;
}

async function newCase(): Promise<Case> {
  const table = `rv_${++tableSeq}`;
  await world.admin.query(eventsTableDdl(table));
  const manifestText = manifestTextFor(table);
  const route: SelectedRoute = selectRoute(parseManifest(manifestText, '/config/route.yaml'), 'daily');
  const invocationId = newInvocationId();
  const refusing = forbiddenSource();
  const extracted = countingSource();
  return {
    table,
    invocationId,
    deps: world.deps(route),
    beginInput: { invocationId, session: `run-${invocationId.slice(4, 14)}`, manifestText, selector },
    recoveryInput: { invocationId, manifestText, selector },
    refusing,
    extracted,
    recoveryDeps: { ...world.recoveryDeps(route, refusing), extract: { source: extracted } },
  };
}

/** The world's source, counting the rows its streams yield (in all, and the most one stream yielded). */
function countingSource(): SourcePort & { rows: number; mostPerStream: number } {
  const { source } = world;
  const counting = {
    rows: 0,
    mostPerStream: 0,
    describe: (request: Parameters<SourcePort['describe']>[0]) => source.describe(request),
    countWindow: (request: Parameters<SourcePort['countWindow']>[0]) => source.countWindow(request),
    countBuckets: (request: Parameters<SourcePort['countBuckets']>[0]) => source.countBuckets(request),
    close: async () => {},
    async *streamWindow(request: Parameters<SourcePort['streamWindow']>[0]) {
      let rows = 0;
      for await (const chunk of source.streamWindow(request)) {
        counting.rows += chunk.rows.length;
        rows += chunk.rows.length;
        counting.mostPerStream = Math.max(counting.mostPerStream, rows);
        yield chunk;
      }
    },
  };
  return counting;
}

/** The world's source, except that the window's stream breaks off after its first chunk. */
function breakingSource(): SourcePort {
  const { source } = world;
  return {
    describe: (request) => source.describe(request),
    countWindow: (request) => source.countWindow(request),
    countBuckets: (request) => source.countBuckets(request),
    close: async () => {},
    async *streamWindow(request) {
      for await (const chunk of source.streamWindow(request)) {
        yield chunk;
        throw new SourceUnavailableError('injected: the source broke off after the first chunk');
      }
    },
  };
}

async function deliverWithTargetFault(c: Case, spec: string): Promise<void> {
  const injector = world.targetFaults.arm(spec);
  try {
    await deliverWindow(c.beginInput, c.deps);
  } finally {
    world.targetFaults.disarm();
  }
  expect(injector.fired).toHaveLength(1);
}

/** Leaves the invocation in the scenario's entry state; the only fault is the one that creates it. */
async function prepare(scenario: Scenario, c: Case): Promise<void> {
  switch (scenario.name) {
    case 'reconcile-published':
    case 'resume-published':
      await deliverWithTargetFault(c, `${T.publishCommit}:lose-response`);
      expect(await world.receiptsOf(c.invocationId)).toBe(1);
      break;
    case 'reconcile-unpublished':
    case 'resume-verified':
      await deliverWithTargetFault(c, `${T.publishCommit}:lose-request`);
      expect(await world.receiptsOf(c.invocationId)).toBe(0);
      break;
    case 'reconcile-writing':
    case 'resume-partial':
    case 'retire-partial':
      await expect(deliverWindow(c.beginInput, world.deps(c.deps.route, breakingSource()))).rejects.toThrow(
        SourceUnavailableError,
      );
      break;
    case 'retire-unrecorded': {
      const begun = await begin(c.beginInput, c.deps);
      const injector = world.targetFaults.arm(`${T.createStaging}:crash-after`);
      try {
        await expect(createStaging(begun, c.deps)).rejects.toMatchObject({ name: 'Cutpoint.WorkerCrashed' });
      } finally {
        world.targetFaults.disarm();
      }
      expect(injector.fired).toHaveLength(1);
      expect(await stageUnderDerivedName(c.invocationId)).toBe(1);
      break;
    }
  }
  if (scenario.action !== 'reconcile' && scenario.entry !== 'EMPTY_STAGING') {
    const reconciled = await LIVE_ACTION_RUNNERS.reconcile(c.recoveryInput, c.recoveryDeps);
    expect(reconciled.state).toBe(scenario.entry);
  }
  expect((await loadInvocation(world.stores.ports, c.invocationId)).state).toBe(scenario.entry);
}

/** Tables named `schema.name` (0 or 1). */
async function tablesNamed(schema: string, name: string): Promise<number> {
  const result = await world.admin.query(
    `SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
    [schema, name],
  );
  return result.rowCount ?? 0;
}

/** The invocation's stage under its derived name, recorded or not. */
const stageUnderDerivedName = (invocationId: string) => tablesNamed('dwh', stagingTableNameOf(invocationId));

/** The stage the invocation owns, if it still exists: by its recorded name, and by its derived one. */
async function ownedStageLeft(record: InvocationRecord): Promise<number> {
  const staging = record.facts.staging;
  const recorded = staging ? await tablesNamed(staging.table.schema, staging.table.table) : 0;
  return recorded + (await stageUnderDerivedName(record.invocationId));
}

function describeError(error: unknown): string {
  return `${(error as Error).name}: ${(error as Error).message}`;
}

/**
 * Applies the first permitted live action from inspect until the invocation is terminal
 * (at most 6 actions), checking each state and that inspect offers exactly the guide's
 * permitted actions; returns the terminal record and appends each step to `history`.
 */
async function recoverToTerminal(c: Case, history: string[], prefer?: LiveAction): Promise<InvocationRecord> {
  let record = await loadInvocation(world.stores.ports, c.invocationId);
  for (let i = 0; ; i++) {
    const state: JournalState = record.state;
    history.push(state);
    expect(JOURNAL_STATES).toContain(state);
    if (state === 'CUSTODY_RELEASED' || state === 'RETIRED') return record;
    expect(i, `no convergence: ${history.join(' → ')}`).toBeLessThan(6);
    const actions = permittedActions(state, record.facts);
    const projection = await inspectInvocation(world.stores.ports, c.invocationId);
    expect(projection.state).toBe(state);
    expect([...projection.permitted_actions].sort()).toEqual([...actions].sort());
    const action = prefer && actions.includes(prefer) ? prefer : ACTION_ORDER.find((a) => actions.includes(a));
    expect(action, `no permitted live action: ${history.join(' → ')}`).toBeDefined();
    try {
      const result = await LIVE_ACTION_RUNNERS[action as LiveAction](c.recoveryInput, c.recoveryDeps);
      history.push(`${action} → ${result.state}`);
    } catch (error) {
      history.push(`${action} threw ${describeError(error)}`);
    }
    record = await loadInvocation(world.stores.ports, c.invocationId);
  }
}

describe('recovery actions: the cut points each passes through', () => {
  it.each(SCENARIOS.map((s) => [s.name, s] as const))(
    '%s: an unfaulted run hits exactly the matrix cut points and reaches its next state',
    async (_name, scenario) => {
      const c = await newCase();
      await prepare(scenario, c);
      const stores = world.stores.faults.arm(COUNT_ONLY);
      const target = world.targetFaults.arm(COUNT_ONLY);
      let state: JournalState;
      try {
        state = (await LIVE_ACTION_RUNNERS[scenario.action](c.recoveryInput, c.recoveryDeps)).state;
      } finally {
        world.stores.faults.disarm();
        world.targetFaults.disarm();
      }
      const hit = Object.keys({ ...stores.hitCounts(), ...target.hitCounts() }).sort();
      expect(hit).toEqual([...scenario.cutPoints].sort());
      const next: Record<ScenarioName, JournalState> = {
        'reconcile-published': 'PUBLISHED',
        'reconcile-unpublished': 'VERIFIED_EOF',
        'reconcile-writing': 'PARTIAL_PROVED',
        'resume-published': 'CUSTODY_RELEASED',
        'resume-verified': 'CUSTODY_RELEASED',
        'resume-partial': 'CUSTODY_RELEASED',
        'retire-partial': 'RETIRED',
        'retire-unrecorded': 'RETIRED',
      };
      expect(state).toBe(next[scenario.name]);
      expect(c.refusing.attempts).toHaveLength(0);
    },
    60_000,
  );
});

describe('recovery actions: a persistent fault at each cut point, then the permitted actions', () => {
  it.each(cases)(
    '%s: %s × %s* → the goal, rows exactly once or none, source-free',
    async (name, cutPoint, kind: FaultKind) => {
      const scenario = scenarioOf(name);
      const c = await newCase();
      await prepare(scenario, c);

      const switchboard = TARGET_POINTS.has(cutPoint) ? world.targetFaults : world.stores.faults;
      const injector = switchboard.arm(`${cutPoint}:${kind}${kind === 'delay' ? '=5' : ''}*`);
      let firstOutcome: string;
      try {
        const result = await LIVE_ACTION_RUNNERS[scenario.action](c.recoveryInput, c.recoveryDeps);
        firstOutcome = `${scenario.action} → ${result.state}`;
      } catch (error) {
        firstOutcome = `${scenario.action} threw ${describeError(error)}`;
      } finally {
        switchboard.disarm();
      }
      // The faulted action reached the cut point.
      expect(injector.fired.length, `${cutPoint} was not hit (${firstOutcome})`).toBeGreaterThan(0);

      const history: string[] = [scenario.entry, firstOutcome];
      const record = await recoverToTerminal(c, history, scenario.prefer);
      const trail = history.join(' → ');

      expect(record.state, trail).toBe(scenario.goal);
      // Every journaled transition is an edge of the journal's graph (src/domain/delivery/journal-states.ts; asserted by the helper).
      const transitions = await world.journalTransitions(c.invocationId);
      expect(transitions.at(-1), trail).toMatch(new RegExp(`>${scenario.goal}$`));
      expect(
        transitions.filter((t) => t.endsWith('>INCIDENT_RETAINED')),
        trail,
      ).toEqual([]);

      const checkpoint = await loadCheckpoint(world.stores.ports, record.targetId, 'daily');
      expect(checkpoint?.version ?? 0, trail).toBeLessThanOrEqual(1);
      expect(await world.receiptsOf(c.invocationId), trail).toBeLessThanOrEqual(1);
      if (scenario.goal === 'CUSTODY_RELEASED') {
        expect(await world.targetWindowIds(c.table, WINDOW), trail).toEqual(windowIds);
        expect(await world.receiptsOf(c.invocationId), trail).toBe(1);
        expect(checkpoint, trail).toMatchObject({ windowEnd: WINDOW.end, invocationId: c.invocationId, version: 1 });
      } else {
        expect(await world.targetWindowIds(c.table, WINDOW), trail).toEqual([]);
        expect(await world.receiptsOf(c.invocationId), trail).toBe(0);
        expect(checkpoint?.version ?? 0, trail).toBe(0);
      }
      expect(await ownedStageLeft(record), trail).toBe(0);
      const custody = await loadCustody(world.stores.ports, record.targetId);
      expect(custody, trail).toMatchObject({ state: 'RELEASED', invocationId: c.invocationId });
      // No recovery action opened ClickHouse, but a continue, through its own guarded source,
      // for the unfinished parts' remaining rows: no stream more than the window (a persistent
      // fault makes the part's reruns read its remaining rows again, each one a stream).
      expect(c.refusing.attempts, trail).toHaveLength(0);
      expect(c.extracted.mostPerStream, trail).toBeLessThanOrEqual(windowIds.length);
      if (!history.some((h) => h === 'PARTIAL_PROVED') || scenario.goal === 'RETIRED')
        expect(c.extracted.rows, trail).toBe(0);
    },
    60_000,
  );
});

describe('recovery actions: what the matrix found', () => {
  /**
   * Found by this matrix (fixed): the VERIFIED_EOF → PUBLICATION_UNKNOWN transition used
   * one fixed transition id per invocation, so after the delivery's own lost COMMIT and
   * reconcile's proof of non-publication (→ VERIFIED_EOF), a second lost COMMIT during
   * resume found that id already journaled, was reported "already applied", and the journal
   * stayed VERIFIED_EOF although the COMMIT had landed. Transitions on that cycle now carry
   * their journal position in the id.
   */
  it('resume-verified: a lost COMMIT acknowledgement during resume is journaled as PUBLICATION_UNKNOWN', async () => {
    const scenario = scenarioOf('resume-verified');
    const c = await newCase();
    await prepare(scenario, c);
    const injector = world.targetFaults.arm(`${T.publishCommit}:lose-response`);
    let firstOutcome: string;
    try {
      const result = await LIVE_ACTION_RUNNERS.resume(c.recoveryInput, c.recoveryDeps);
      firstOutcome = `resume → ${result.state}`;
    } catch (error) {
      firstOutcome = `resume threw ${describeError(error)}`;
    } finally {
      world.targetFaults.disarm();
    }
    expect(injector.fired).toHaveLength(1);
    const afterFault = (await loadInvocation(world.stores.ports, c.invocationId)).state;
    const receiptsAfterFault = await world.receiptsOf(c.invocationId);
    // Recover first, so a failure below leaves nothing held.
    const history = [scenario.entry, firstOutcome];
    const record = await recoverToTerminal(c, history);
    const trail = history.join(' → ');
    expect(record.state, trail).toBe('CUSTODY_RELEASED');
    expect(receiptsAfterFault, trail).toBe(1);
    // The COMMIT landed and its acknowledgement was lost: the journal must say so.
    expect(afterFault, trail).toBe('PUBLICATION_UNKNOWN');
    expect(await world.journalTransitions(c.invocationId), trail).toEqual([
      'EMPTY_STAGING>WRITING_UNKNOWN',
      'WRITING_UNKNOWN>VERIFIED_EOF',
      'VERIFIED_EOF>PUBLICATION_UNKNOWN',
      'PUBLICATION_UNKNOWN>VERIFIED_EOF',
      'VERIFIED_EOF>PUBLICATION_UNKNOWN',
      'PUBLICATION_UNKNOWN>PUBLISHED',
      'PUBLISHED>SUCCEEDED',
      'SUCCEEDED>CUSTODY_RELEASED',
    ]);
  }, 60_000);
});
