import type pg from 'pg';
import { routeOfEvent } from '../src/delivery/deps-provider.js';
import type { PostgresTarget } from '../src/adapters/postgres/target.js';
import { loadInvocation } from '../src/delivery/journal/records.js';
import { TRANSACTION_MODE } from '../src/delivery/transaction-mode.js';
import { loadAsl, taskStates } from '../src/local/asl.js';
import { runFlow } from '../src/local/flow-runner.js';
import type { Ports } from '../src/ports/index.js';
import type { RequestMeter } from '../src/adapters/request-meter.js';
import type { SourcePort } from '../src/ports/source.js';
import { beginInput, newInvocationId, targetRowsIn, type BenchRoute } from './delivery-setup.js';
import { meterDelta } from './measure.js';

/**
 * What one window costs in Step Functions: one deliver-window execution through the local
 * flow runner (the same ASL and handlers Lambda runs; its Distributed Map runs one child
 * execution per part), its state transitions (parent + children: what a Standard workflow
 * bills) and its Lambda invocations (Task states entered in the parent + the children's
 * Task entries: each child is one ExtractLoadPart Task, so children = items succeeded +
 * failed; a child's Task retry would add one more, which the runner does not surface,
 * so the figure is a floor). Issue 9's budget: transitions ≤ 10 + 2 × parts.
 */

export const FLOW_NAME = 'deliver-window';

export interface DeliveryTransitions {
  rows: number;
  chunkRows: number;
  chunks: number;
  /** Parts in the journaled plan (= Distributed Map items). */
  parts: number;
  /** States entered plus retries in the execution and its Map's child executions: what a Standard workflow bills. */
  transitions: number;
  /** Issue 9: 10 + 2 × parts. */
  transitionBudget: number;
  /** Task states entered in the parent plus child Tasks: one Lambda invocation each when deployed. */
  lambdaInvocations: number;
  parentTasks: number;
  childTasks: number;
  /** AWS requests (DynamoDB, S3) of the execution. */
  requests: Record<string, number>;
  seconds: number;
}

export interface FlowEnv {
  source: SourcePort;
  target: PostgresTarget;
  admin: pg.Client;
  ports: Ports;
  meter: RequestMeter;
}

export async function oneFlowExecution(
  r: BenchRoute,
  manifestText: string,
  env: FlowEnv,
  progress: (line: string) => void,
): Promise<DeliveryTransitions> {
  const { source, target, admin, ports, meter } = env;
  const invocationId = newInvocationId();
  const before = meter.snapshot();
  const started = performance.now();
  const result = await runFlow(FLOW_NAME, beginInput(invocationId, manifestText, r.name), {
    ports,
    retryIntervalMs: 0,
    stepDeps: (event) => Promise.resolve({ ports, target, mode: TRANSACTION_MODE, source, route: routeOfEvent(event) }),
  });
  const seconds = (performance.now() - started) / 1000;
  const requests = meterDelta(before, meter.snapshot());
  const output = result.output as { state?: string } | undefined;
  if (result.status !== 'SUCCEEDED' || output?.state !== 'CUSTODY_RELEASED') {
    throw new Error(
      `bench bug: ${FLOW_NAME} ${result.status} ${String(output?.state)}: ${result.error ?? ''} ${result.cause ?? ''}`,
    );
  }
  const record = await loadInvocation(ports, invocationId);
  const landed = await targetRowsIn(admin, r.table, record.sealed.window);
  if (landed !== r.rows) throw new Error(`bench bug: ${FLOW_NAME} of ${r.rows} rows left ${landed} in the target`);
  const tasks = new Set(taskStates(loadAsl(FLOW_NAME)).map((t) => t.state));
  const parentTasks = result.events.filter(
    (e) => e.type === 'StateEntered' && e.state !== undefined && tasks.has(e.state),
  ).length;
  const childTasks = result.mapRuns.reduce((n, run) => n + run.succeeded + run.failed, 0);
  const parts = record.facts.plan?.parts ?? 0;
  const mapItems = result.mapRuns.reduce((n, run) => n + run.items, 0);
  if (mapItems !== parts) throw new Error(`bench bug: the Map ran ${mapItems} items for a plan of ${parts} parts`);
  const chunks = record.facts.parts?.chunks ?? 0;
  const t: DeliveryTransitions = {
    rows: r.rows,
    chunkRows: r.chunkRows,
    chunks,
    parts,
    transitions: result.transitions,
    transitionBudget: 10 + 2 * parts,
    lambdaInvocations: parentTasks + childTasks,
    parentTasks,
    childTasks,
    requests,
    seconds: Math.round(seconds * 10) / 10,
  };
  progress(
    `  ${FLOW_NAME} flow, ${r.rows} rows, ${parts} part${parts === 1 ? '' : 's'}, ${chunks} chunk${chunks === 1 ? '' : 's'}: ` +
      `${t.transitions} state transitions (budget ${t.transitionBudget}), ${t.lambdaInvocations} Lambda invocations (${parentTasks} + ${childTasks} parts) (${t.seconds} s)`,
  );
  return t;
}
