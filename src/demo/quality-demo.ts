import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { inspectInvocation } from '../delivery/journal/listing.js';
import { loadInvocation } from '../delivery/journal/records.js';
import { reconcile } from '../delivery/recovery/reconcile.js';
import { resume } from '../delivery/recovery/resume.js';
import { forbiddenSource } from '../delivery/source-guard.js';
import { invocationIdFrom, type RecoveryProjection } from '../domain/delivery/identifiers.js';
import { CutpointError } from '../domain/errors.js';
import type { CapsuleV2 } from '../domain/quality/capsule.js';
import type { InspectProjection } from '../domain/quality/projection.js';
import type { ReplayReceipt } from '../domain/quality/receipt.js';
import { runFlow, type FlowResult } from '../local/flow-runner.js';
import { readCapsule } from '../quality/capsule-store.js';
import { inspectQuality } from '../quality/inspect.js';
import { targetReaderOf } from '../quality/observe-reader.js';
import { probeReader } from '../adapters/reader-process/probe-reader.js';
import { publicationModeOf } from '../publication/exchange-mode.js';
import { replayGovernance } from '../quality/replay.js';
import {
  operatorObservation,
  type OperatorObserveDeps,
  type OperatorObserveInput,
} from '../quality/operator-observe.js';
import { faultsFromEnv } from '../adapters/fault-injector.js';
import { openLocalRouteTarget } from '../cli/commands/delivery-bindings.js';
import { localFlowDeps } from '../cli/commands/flow-deps.js';
import { flowProgress } from '../cli/flow-progress.js';
import { printResult, progress } from '../cli/io.js';
import {
  openQualityDemoWorld,
  QUALITY_DEMO_DEADLINE_S,
  QUALITY_DEMO_MANIFEST,
  QUALITY_DEMO_ROUTE,
  type QualityDemoOptions,
  type QualityDemoWorld,
} from './quality-demo-world.js';
import { qualityDemoOutcome, type QualityDemoStages } from './quality-demo-outcome.js';

/**
 * `cutpoint demo quality` (docs/rules.md#governance-vs-publication): a ClickHouse publication
 * by ONE EXCHANGE whose response is lost, then the operator's journey through the use cases the
 * CLI and the flow call — inspect → `delivery reconcile` (the publication proved by table UUID)
 * → `quality observe` that overruns its deadline (the probe slowed INSIDE the reader child: the
 * parent revokes its channel, kills and reaps it: TARGET_PENDING, guard released, remote
 * termination UNVERIFIED) → `quality observe` again → COMPLETE → `delivery resume` (evidence,
 * checkpoint, the predecessor dropped by UUID: CUSTODY_RELEASED, capsule retired) → `quality
 * replay` (the receipt, docs/rules.md#replay-receipt; nothing written). Throw-away local
 * components only (quality-demo-world.ts). Progress on stderr, each step's command line as the
 * operator types it; one JSON document on stdout whose `outcome` is checked.
 */

/**
 * The run's faults on the ClickHouse target: the EXCHANGE applies and its answer is lost,
 * and every observation after the first (Dispatch reads the target once before the
 * EXCHANGE) fails — the connection is gone — so nothing proves the publication in the run.
 */
export const QUALITY_DEMO_RUN_FAULTS = 'publication.exchange:lose-response,publication.observe:fail@2*';
/** The first observation: each probe waits 60 s inside the reader child, well past the route's deadline. */
export const QUALITY_DEMO_SLOW_PROBE = 'quality.target.probe:delay=60000';
const FLOW = 'publish-clickhouse';

export interface QualityDemoDocument {
  demo: 'quality';
  route: string;
  invocationId: string;
  run: { command: string; flow: string; status: string; error?: string; cause?: string; stateTransitions: number };
  inspect: { command: string; projection: RecoveryProjection; quality: InspectProjection };
  reconcile: { command: string; projection: RecoveryProjection };
  observePending: ObserveStage;
  observeComplete: ObserveStage;
  resume: { command: string; projection: RecoveryProjection; quality: InspectProjection };
  replay: { command: string; receipt: ReplayReceipt };
  outcome: ReturnType<typeof qualityDemoOutcome>['outcome'];
}

interface ObserveStage {
  command: string;
  capsuleState?: string;
  remoteTermination?: string;
  quality: InspectProjection;
}

export async function qualityDemo(options: QualityDemoOptions = {}): Promise<QualityDemoDocument> {
  const world = await openQualityDemoWorld(options);
  try {
    return await story(world);
  } finally {
    await world.close();
    progress('emulators and the ClickHouse host stopped');
  }
}

async function story(world: QualityDemoWorld): Promise<QualityDemoDocument> {
  const { ports, route, selector } = world;
  const manifestText = QUALITY_DEMO_MANIFEST;
  const invocationId = invocationIdFrom(new Uint8Array(randomBytes(16)));

  // 1. The publish-clickhouse flow on the local runner, its target opened as `cutpoint flow run` opens it.
  const inputFile = join(dirname(world.manifestFile), 'run.json');
  await writeFile(inputFile, JSON.stringify({ invocationId, manifestText, selector }));
  const runCommand = `npx cutpoint flow run ${FLOW} --input @${inputFile} --faults '${QUALITY_DEMO_RUN_FAULTS}'`;
  progress(`$ ${runCommand}`);
  const flowDeps = localFlowDeps(FLOW, ports, faultsFromEnv({ CUTPOINT_FAULTS: QUALITY_DEMO_RUN_FAULTS }));
  let run: FlowResult;
  try {
    run = await runFlow(
      FLOW,
      { invocationId, manifestText, selector },
      { ports, retryIntervalMs: 50, stepDeps: flowDeps.provider, onEvent: flowProgress },
    );
  } finally {
    await flowDeps.close();
  }
  progress(
    `execution ${run.status}${run.error ? `: ${run.error}` : ''} (the EXCHANGE is sent once; its answer was lost and the target could not be read after it)`,
  );
  const sealed = await loadInvocation(ports, invocationId);
  const ref = { targetId: sealed.targetId, invocationId };
  const window = { start: Date.parse(sealed.sealed.window.start), end: Date.parse(sealed.sealed.window.end) };

  // 2. inspect, then the live actions on a target opened as `cutpoint delivery reconcile` opens it (no faults).
  const stages = {} as QualityDemoStages;
  let command = `npx cutpoint delivery inspect ${invocationId} --format json`;
  progress(`$ ${command}`);
  stages.inspect = {
    command,
    projection: await inspectInvocation(ports, invocationId),
    quality: await inspectQuality(ports, invocationId),
  };
  progress(
    `  state ${stages.inspect.projection.state}, capsule ${stages.inspect.quality.capsule_state}, permitted ${JSON.stringify(stages.inspect.projection.permitted_actions)}`,
  );

  const opened = await openLocalRouteTarget(route.targetBinding);
  const refusing = forbiddenSource();
  try {
    const observing: OperatorObserveDeps = {
      ports,
      target: opened.target,
      exchange: opened.exchange!,
      route,
      reader: await targetReaderOf({ route, ports }, probeReader()),
    };
    const operation = { invocationId, manifestText, selector };
    const recovery = {
      ports,
      target: opened.target,
      mode: publicationModeOf(route, {
        exchange: opened.exchange,
        observeReader: (d) => targetReaderOf(d, probeReader()),
      }),
      route,
      source: refusing,
    };
    command = `npx cutpoint delivery reconcile ${invocationId} --manifest ${selector} --yes --format json`;
    progress(`$ ${command}`);
    stages.reconcile = {
      command,
      projection: (await reconcile({ invocationId, manifestText, selector }, recovery)).projection,
    };
    progress(
      `  state ${stages.reconcile.projection.state}: the candidate's UUID is under the target name — published by identity`,
    );

    // 3. The observation overruns its deadline: the delay is inside the reader child, which the parent kills.
    const observeCommand = `npx cutpoint quality observe ${invocationId} --manifest ${selector} --yes --format json`;
    progress(`$ CUTPOINT_FAULTS='${QUALITY_DEMO_SLOW_PROBE}' ${observeCommand}`);
    progress(`  (deadline_s ${QUALITY_DEMO_DEADLINE_S}; the probe waits inside the reader process)`);
    stages.observePending = {
      command: `CUTPOINT_FAULTS='${QUALITY_DEMO_SLOW_PROBE}' ${observeCommand}`,
      ...(await observeOnce(observing, operation, QUALITY_DEMO_SLOW_PROBE)),
    };
    progress(
      `  capsule ${stages.observePending.capsuleState}, guard held: ${stages.observePending.quality.reader_guard.held}, remote_termination ${stages.observePending.remoteTermination}`,
    );
    const pendingCapsule = await capsuleOf(world, ref);

    // 4. A later observation, the slow part gone.
    progress(`$ ${observeCommand}`);
    stages.observeComplete = { command: observeCommand, ...(await observeOnce(observing, operation)) };
    const completeCapsule = await capsuleOf(world, ref);
    progress(
      `  capsule ${stages.observeComplete.capsuleState}, governance ${stages.observeComplete.quality.replay_details.governance}, permitted ${JSON.stringify(stages.observeComplete.quality.permitted_actions)}`,
    );

    // 5. Evidence, checkpoint, cleanup (the predecessor dropped by UUID), custody released.
    command = `npx cutpoint delivery resume ${invocationId} --manifest ${selector} --yes --format json`;
    progress(`$ ${command}`);
    stages.resume = {
      command,
      projection: (await resume({ invocationId, manifestText, selector }, recovery)).projection,
      quality: await inspectQuality(ports, invocationId),
    };
    const retiredCapsule = await capsuleOf(world, ref);
    progress(
      `  state ${stages.resume.projection.state}, capsule ${stages.resume.quality.capsule_state}, retired ${retiredCapsule?.retiredAt !== undefined}`,
    );

    // 6. Replay: the receipt, read-only.
    command = `npx cutpoint quality replay ${invocationId} --manifest ${selector} --format json`;
    progress(`$ ${command}`);
    const receipt = await replayGovernance(
      { invocationId, manifestText, selector },
      { ports, target: opened.target, exchange: opened.exchange!, route },
    );
    stages.replay = { command, receipt };
    const afterReplay = await capsuleOf(world, ref);
    const afterReplayRecord = await loadInvocation(ports, invocationId);
    progress(
      `  receipt ${receipt.kind}: governance ${receipt.quality.governance}, dispatch_count ${receipt.dispatch_count}, reader_guard ${receipt.reader_guard}`,
    );

    const sourceWindowIds = await world.sourceWindowIds(window);
    const target = await world.targetCounts(window, sourceWindowIds);
    const { ok, outcome } = qualityDemoOutcome({
      run,
      stages,
      capsules: { pending: pendingCapsule, complete: completeCapsule, retired: retiredCapsule, afterReplay },
      dispatchCountAfterReplay: afterReplayRecord.facts.dispatch?.count ?? 0,
      sourceWindowRows: sourceWindowIds.length,
      target,
      sourceCallsDuringRecovery: refusing.attempts.length,
      window: sealed.sealed.window,
    });
    const document: QualityDemoDocument = {
      demo: 'quality',
      route: QUALITY_DEMO_ROUTE,
      invocationId,
      run: {
        command: runCommand,
        flow: FLOW,
        status: run.status,
        ...(run.error ? { error: run.error } : {}),
        ...(run.cause ? { cause: run.cause } : {}),
        stateTransitions: run.transitions,
      },
      ...stages,
      outcome,
    };
    if (!ok) {
      printResult(document);
      throw new CutpointError(
        'Demo.Failed',
        'demo.invariant_violated',
        'the quality demo did not end as the story says (see the outcome above)',
      );
    }
    progress(
      `the target holds each of the ${outcome.windowRowsInSource} window rows exactly once; one dispatch; governance COMPLETE, then retired; replay changed nothing`,
    );
    return document;
  } finally {
    await opened.target.close();
  }
}

/**
 * `cutpoint quality observe --yes` (operatorObservation: the guide, the seal recomputed, a
 * new session taking custody, ONE observation by the bounded reader, whose child reaches
 * the target over the binding's HTTP URL); `faults` reach only the forked child.
 */
async function observeOnce(
  deps: OperatorObserveDeps,
  input: OperatorObserveInput,
  faults?: string,
): Promise<Omit<ObserveStage, 'command'>> {
  const saved = process.env.CUTPOINT_FAULTS;
  if (faults) process.env.CUTPOINT_FAULTS = faults; // inherited by the forked reader child only
  let out;
  try {
    out = await operatorObservation(input, deps);
  } finally {
    if (saved === undefined) delete process.env.CUTPOINT_FAULTS;
    else process.env.CUTPOINT_FAULTS = saved;
  }
  return {
    ...(out.capsuleState ? { capsuleState: out.capsuleState } : {}),
    ...(out.remoteTermination ? { remoteTermination: out.remoteTermination } : {}),
    quality: await inspectQuality(deps.ports, input.invocationId),
  };
}

async function capsuleOf(
  world: QualityDemoWorld,
  ref: { targetId: string; invocationId: string },
): Promise<CapsuleV2 | undefined> {
  const capsule = await readCapsule(world.ports, ref);
  return capsule?.schema === 2 ? capsule : undefined;
}
