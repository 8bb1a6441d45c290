import { FLOWS } from '../../src/registry/index.js';
import { inertFaults } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import type { CutpointConfig } from '../../src/config.js';
import type { AppendOutcome } from '../../src/domain/stream.js';
import { loadAsl, taskStates } from '../../src/local/asl.js';
import { runFlow } from '../../src/local/flow-runner.js';
import { RequestMeter } from '../../src/adapters/request-meter.js';
import { meterDelta } from '../measure.js';
import { batchOf, expectCommitted, ownedLane } from './stream-lane.js';

/** What one execution of a flow costs: transitions, Lambda invocations, requests by kind. */
export interface FlowCost {
  name: string;
  type: 'STANDARD' | 'EXPRESS';
  batchSize: number;
  transitions: number;
  lambdaInvocations: number;
  requests: Record<string, number>;
}

/** One stream-append execution (statemachines/stream-append.asl.json) through the local runner. */
export async function oneFlowExecution(
  config: CutpointConfig,
  batchSize: number,
  recordBytes: number,
): Promise<FlowCost> {
  const name = 'stream-append';
  const meter = new RequestMeter();
  const ports = awsPorts(config, inertFaults, meter);
  const { lane, session } = await ownedLane(ports, `flow${batchSize}`);
  const records = batchOf(batchSize, recordBytes).map((r) => Buffer.from(r).toString('base64'));
  const before = meter.snapshot();
  const result = await runFlow(name, { ...lane, attemptId: 'flow-1', session, records }, { ports });
  const requests = meterDelta(before, meter.snapshot());
  if (result.status !== 'SUCCEEDED')
    throw new Error(`bench bug: ${name} ${result.status}: ${result.error} ${result.cause}`);
  expectCommitted(result.output as AppendOutcome, batchSize, `${name} execution`);
  const tasks = new Set(taskStates(loadAsl(name)).map((t) => t.state));
  const lambdaInvocations = result.events.filter(
    (e) => e.type === 'StateEntered' && e.state !== undefined && tasks.has(e.state),
  ).length;
  const type = FLOWS.find((f) => f.name === name)?.type ?? 'STANDARD';
  return { name, type, batchSize, transitions: result.transitions, lambdaInvocations, requests };
}
