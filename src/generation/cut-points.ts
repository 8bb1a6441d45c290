/** Every effect of the generation-commit flow, by name (see statemachines/commit-generation.asl.json). */
export const GENERATION_CUT_POINTS = {
  taskPut: 'generation.task.put',
  objectPut: 'generation.object.put',
  /** A single-source task's output: a server-side copy of its one source (no bytes through the worker). */
  objectCopy: 'generation.object.copy',
  recordPut: 'generation.record.put',
  commitCas: 'generation.commit.cas',
  abortCas: 'generation.abort.cas',
  /** Task cleanup (cleanup-task.ts): the task item deleted after the committed generation, its root, output, checkpoint and protections verify. */
  taskCleanup: 'generation.task.cleanup',
} as const;

export type GenerationCutPoint = (typeof GENERATION_CUT_POINTS)[keyof typeof GENERATION_CUT_POINTS];
