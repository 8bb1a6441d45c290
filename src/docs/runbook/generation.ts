import type { RecordState } from '../../domain/generation.js';
import { cutpoint } from './commands.js';
import type { RunbookPage } from './model.js';

/**
 * Generation records (src/domain/generation.ts RecordState,
 * docs/rules.md#materialization-failures): a durable task writes its object, records a PREPARED
 * generation (invisible to readers), then commits it by CAS or proves the abort. The
 * commit-generation flow is its own recovery (re-run with the same task: every step reloads the
 * exact identity), and the recovery dispatcher re-runs a failed execution once. The compiler
 * checks this table covers RecordState.
 */

const TASK_INPUT = '{"root":"demo/orders","generation":0,"taskId":"materialize-orders-0","sources":[…the original sources…]}';
const rerun = {
  name: 're-run the same task',
  does: 'The same input (same root, generation, taskId and sources) under a new execution name: every step reloads the exact task, object and record, so it finishes the commit or proves the abort; it never writes a second generation.',
  command: cutpoint('flow run commit-generation --input @commit-generation.json --name materialize-orders-0-rerun-1'),
  start: { flow: 'commit-generation', input: 'file://commit-generation.json', executionName: 'materialize-orders-0-rerun-1' },
};

const PAGES = {
  PREPARED: {
    summary: 're-run the same task (automatic once)',
    meaning: `The task's output object is written and verified, and a PREPARED record names it; readers do not see it (the root head still names the previous generation). The commit CAS has not applied, or its answer was lost. \`commit-generation.json\` is the original input (${TASK_INPUT}).`,
    holds: "yes: the (root, generation) slot is this task's until it commits or aborts",
    incoming: ['RecordPrepared (cut point generation.record.put), while the task is OPEN'],
    permitted: [{ ...rerun, when: 'any time (the recovery dispatcher does it once by itself when the execution failed); by hand after `Generation.RecoveryExhausted` or `Generation.Undecided`' }],
    forbidden: [
      { name: 'a new task for the same root and generation', why: 'One (root, generation) slot holds at most one COMMITTED record, ever: the other task is refused (`generation.slot_taken`) and aborts.' },
      { name: 'deleting or replacing the object', why: "Keys derive from identity and hold one content forever (`objects.identity_conflict`); the record's SHA-256 is checked before the commit." },
    ],
    diagnostics: [
      { code: 'generation.slot_taken', when: 'another task holds the slot or the head is past it: this task aborts' },
      { code: 'generation.recovery_exhausted', when: 'the one automatic recovery failed too: re-run by hand, then escalate' },
      { code: 'generation.undecided', when: 'the authority kept losing responses: the commit stays undecided; re-run' },
    ],
  },
  COMMITTED: {
    summary: 'nothing (committed)',
    meaning: "The record is COMMITTED and the root head names it, in one transaction with the task's COMMITTED state: readers get this generation, checksum-verified. The task item is then cleaned up (CleanupTask, cut point generation.task.cleanup) once the generation, its head and its output verify; a refusal keeps it (the outcome's cleanup.refused says why) and changes nothing else.",
    holds: 'no',
    incoming: ['from [PREPARED](PREPARED.md) by the commit CAS (cut point generation.commit.cas), or by ResolveCommit finding our exact record committed after a lost answer'],
    permitted: [],
    forbidden: [{ name: 'aborting it', why: 'A generation that committed is never aborted: an abort that finds it answers COMMITTED.' }],
    diagnostics: [],
  },
  ABORTED: {
    summary: 'a new task (new generation or taskId)',
    meaning: 'The abort is proved: the task and its PREPARED record are ABORTED (cut point generation.abort.cas). The generation never became visible.',
    holds: 'no',
    incoming: ['from [PREPARED](PREPARED.md) by Abort, after a step failed definitely or the slot was taken'],
    permitted: [
      {
        name: 'start a new task',
        does: 'Materialize again under a new taskId (and the next free generation if the slot was taken by another task).',
        command: cutpoint('flow run commit-generation --input @next-task.json --name materialize-orders-1'),
        start: { flow: 'commit-generation', input: 'file://next-task.json', executionName: 'materialize-orders-1' },
      },
    ],
    forbidden: [{ name: 're-running the aborted task to commit it', why: 'A closed task refuses new records (`generation.task_closed`): an abort is final.' }],
    diagnostics: [{ code: 'generation.task_closed', when: 'a step of the aborted task runs again' }],
  },
} satisfies Record<RecordState, Omit<RunbookPage, 'subsystem' | 'state' | 'inspect' | 'sources'>>;

export function generationPages(): RunbookPage[] {
  return (Object.keys(PAGES) as RecordState[]).map((state) => ({
    subsystem: 'generation',
    state,
    ...PAGES[state],
    inspect: 'aws stepfunctions describe-execution --execution-arn <the execution ARN> --query "[status,output,error,cause]"',
    sources: ['src/domain/generation.ts', 'statemachines/commit-generation.asl.json'],
  }));
}
