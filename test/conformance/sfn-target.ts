import type { AslDefinition } from '../../src/local/asl.js';
import { runFlow } from '../../src/local/flow-runner.js';
import type { Ports } from '../../src/ports/index.js';

/**
 * Where the Step Functions cases run their state machines: the project's local runner
 * (`npm test`, below) or Step Functions in a real account (sfn-aws.ts). A case hands both
 * the same definition and inputs and reads the same shape back, so what it observes can
 * only differ by what the two answer.
 */
export interface StateMachines {
  /**
   * Runs `definition` once per input, one after the other, as a state machine of its own
   * named after `key` (on AWS created first and deleted after, whatever happened).
   */
  run(key: string, definition: AslDefinition, inputs: readonly unknown[]): Promise<Started[]>;
}

/** How an execution ended, as DescribeExecution and its history tell it. */
export interface Execution {
  status: string;
  output?: unknown;
  error?: string;
  cause?: string;
  /** The states entered, in order: those of Parallel branches and inline Map iterations too, never a Distributed Map's children. */
  entered: string[];
}

/** An execution, or a start refused before any execution existed (StartExecution's error). */
export type Started = Execution | { refused: { name: string; status?: number } };

export function isRefused(s: Started): s is { refused: { name: string; status?: number } } {
  return 'refused' in s;
}

/**
 * The local runner (src/local/flow-runner.ts) over the conformance bucket's ports: the
 * Distributed Map reads its items and writes its results through `ports.objects`, so
 * its Bucket must be the conformance bucket, as on AWS it must be one the role may use.
 * Retry intervals are 0 (the same attempts, no waiting). It has no StartExecution to
 * refuse anything: every input is run.
 */
export function localStateMachines(ports: Ports): StateMachines {
  return {
    async run(key, definition, inputs) {
      const out: Started[] = [];
      for (const input of inputs) {
        const r = await runFlow(key.replaceAll('/', '-'), input, {
          ports,
          definition,
          retryIntervalMs: 0,
        });
        out.push({
          status: r.status,
          ...(r.status === 'SUCCEEDED' ? { output: r.output } : { error: r.error, cause: r.cause }),
          entered: r.events.filter((e) => e.type === 'StateEntered' && e.state).map((e) => e.state!),
        });
      }
      return out;
    },
  };
}
