import { sha256Hex } from '../../../src/domain/digest.js';
import {
  generationKeys,
  type GenerationRecord,
  type RootHead,
  type SourceRef,
} from '../../../src/domain/generation.js';
import type { GenerationOutcome } from '../../../src/generation/outcome.js';
import { runFlow, type FlowResult } from '../../../src/local/flow-runner.js';
import { InvariantViolation } from '../../support/sched/errors.js';
import { lambdaInvocations } from '../../support/sched/invocations.js';
import type { Scenario } from '../../support/sched/scenario.js';
import type { Scheduler } from '../../support/sched/scheduler.js';
import { openStores, type SchedStores } from '../../support/sched/stores.js';

/**
 * The generation-commit flow (docs/rules.md#materialized-generations) under the scheduler:
 * a task's execution, a duplicate StartExecution of it (same name, same input), and, in
 * most schedules, a competing task for the same generation; every Task invocation may be a
 * zombie or a duplicate. Executions that fail are re-run once, faults off, as the recovery
 * dispatcher does ({recoveryOf, originalInput}). The checker:
 * - the root's head names exactly one task, whose generation record is COMMITTED, and whose
 *   object's bytes are exactly its sources' bytes in order (sha256 and size as recorded);
 * - no two tasks were ever told COMMITTED for the generation; every COMMITTED an execution
 *   reported names the head's task, every ABORTED names another;
 * - the losing task ends ABORTED (a proved abort), never left OPEN; the winner's COMMITTED
 *   or cleaned up;
 * - no execution fails Generation.Inconsistent: the authority here is never corrupted.
 */

interface World {
  stores: SchedStores;
}

interface Task {
  taskId: string;
  sources: SourceRef[];
  text: string;
  executions: FlowResult[];
}

export const generationScenario: Scenario<World> = {
  name: 'generation',
  actors: ['duplicate-start', 'zombie', 'duplicate-invocation', 'competing-task'],
  async open(endpoints) {
    return { stores: await openStores(endpoints, 'gen') };
  },
  async close() {},
  async plan(world, s) {
    const ports = world.stores.ports;
    const root = `sched/g${s.seed}`;
    const tasks: Task[] = [];
    const competing = s.rng.chance(0.7);
    for (const name of competing ? ['a', 'b'] : ['a']) {
      const parts = [`${name}-one-${s.seed}\n`, `${name}-two\n`];
      const sources: SourceRef[] = [];
      for (const [i, text] of parts.entries()) {
        const bytes = new TextEncoder().encode(text);
        const key = `sched/sources/g${s.seed}/${name}${i}`;
        await ports.objects.put('test.source.put', key, bytes, { sha256: sha256Hex(bytes) });
        sources.push({ key, sha256: sha256Hex(bytes), size: bytes.byteLength });
      }
      tasks.push({ taskId: `task-${name}`, sources, text: parts.join(''), executions: [] });
    }
    const inputOf = (t: Task) => ({ root, generation: 0, taskId: t.taskId, sources: t.sources });
    const start = (t: Task, label: string, input: unknown) =>
      s.spawn(label, async () => {
        const invocations = lambdaInvocations(s, label);
        const result = await runFlow('commit-generation', input, {
          ports,
          retryIntervalMs: 0,
          executionName: `commit-${t.taskId}`,
          invoke: invocations.invoke,
        });
        t.executions.push(result);
        s.note(
          `${label} ended ${result.status}${result.error ? ` ${result.error}` : ''}${result.output ? ` ${(result.output as GenerationOutcome).outcome}` : ''}`,
        );
        return result;
      });
    for (const t of tasks) {
      void start(t, `exec:${t.taskId}`, inputOf(t));
      if (s.rng.chance(0.5)) {
        s.count('duplicate-start');
        void start(t, `exec:${t.taskId}:dup-start`, inputOf(t));
      }
    }
    return {
      // The recovery dispatcher's re-run of a failed execution, faults off, until each task has an outcome.
      async settle() {
        for (const t of tasks) {
          for (let round = 0; round < 3 && !t.executions.some((e) => e.status === 'SUCCEEDED'); round++) {
            const failed = t.executions[t.executions.length - 1]!;
            const recovery = { recoveryOf: failed.executionArn, originalInput: JSON.stringify(inputOf(t)) };
            t.executions.push(await runFlow('commit-generation', recovery, { ports, retryIntervalMs: 0 }));
          }
        }
      },
      check: () => checkGeneration(world, s, root, tasks),
    };
  },
};

async function checkGeneration(world: World, s: Scheduler, root: string, tasks: Task[]): Promise<void> {
  const ports = world.stores.ports;
  const fail = (what: string): never => {
    throw new InvariantViolation(`generation ${root}: ${what}`);
  };
  const head = (await ports.authority.get(generationKeys.head(root))) as unknown as RootHead | undefined;
  if (!head) fail('no task committed generation 0 after recovery');
  const winner = tasks.find((t) => t.taskId === head!.taskId) ?? fail(`the head names an unknown task ${head!.taskId}`);
  const record = (await ports.authority.get(generationKeys.record(root, 0))) as unknown as GenerationRecord | undefined;
  if (record?.state !== 'COMMITTED' || record.taskId !== winner.taskId)
    fail(`the generation record is ${record?.state} for ${record?.taskId}, the head names ${winner.taskId}`);
  const object = await ports.objects.get(head!.objectKey);
  const text = object ? new TextDecoder().decode(object.bytes) : undefined;
  if (text !== winner.text)
    fail(`the committed object ${head!.objectKey} holds ${JSON.stringify(text)}, not its sources' bytes`);
  if (sha256Hex(object!.bytes) !== head!.sha256 || object!.bytes.byteLength !== head!.size)
    fail('the committed object differs from the sha256/size its head records');
  for (const t of tasks) {
    for (const e of t.executions) {
      // An authority that contradicts itself is an incident for an operator: reaching it with
      // no corrupted authority (a read that straddled a commit) is a false one.
      if (e.error === 'Generation.Inconsistent')
        fail(`${t.taskId}: an execution failed ${e.error} on an intact authority: ${e.cause}`);
      const outcome = (e.output as GenerationOutcome | undefined)?.outcome;
      if (outcome === 'COMMITTED' && t !== winner)
        fail(`${t.taskId} was told COMMITTED, yet ${winner.taskId} holds the head`);
      if (outcome === 'ABORTED' && t === winner) fail(`${t.taskId} was told ABORTED, yet it holds the head`);
    }
    if (!t.executions.some((e) => e.status === 'SUCCEEDED'))
      fail(`${t.taskId} has no outcome after recovery: ${t.executions.map((e) => e.error).join(', ')}`);
    // The winner's task is COMMITTED, or cleaned up after its commit (src/generation/cleanup-task.ts); a loser's is ABORTED.
    const task = await ports.authority.get(generationKeys.task(root, t.taskId));
    const expected = t === winner ? 'COMMITTED' : 'ABORTED';
    if (task?.state !== expected && !(t === winner && !task))
      fail(`${t.taskId}'s durable task is ${task?.state}, expected ${expected}`);
  }
  s.note(
    `check: ${winner.taskId} holds generation 0; ${tasks.length} task(s), ${tasks.reduce((n, t) => n + t.executions.length, 0)} executions`,
  );
}
