/**
 * What each flow's execution input may carry (docs/deploy.md "Flow inputs"): the fields the flow
 * reads, and nothing else. The one table `cutpoint flow run` and every flow's first Task
 * check an input against (flow-input.ts): a field no step reads is a typo or a
 * misunderstanding (`dryrun`, a `next` given where the flow reads none), refused by name,
 * never ignored. Kept here rather than in the registry (src/registry/): the first Tasks' Lambda
 * bundles load it, and the registry loads every handler. test/unit/flow-input-fields.test.ts
 * holds it to the registry's flows and to the fields each ASL reads.
 */
export interface FlowInputSpec {
  /** The fields an execution input may carry (docs/flows.md documents them). */
  fields: readonly string[];
  /**
   * The flows whose failed executions the recovery dispatcher starts this one for (their
   * FLOWS `recovery.by` is this flow), with the input `{recoveryOf, originalInput}`: the
   * envelope carries those two fields only, and the original input the fields of one of
   * these flows.
   */
  recovers?: readonly string[];
  /**
   * The input carries bulk by design (a batch's records, up to 1000 sources, a GC page of
   * object keys, a route manifest): capped at Step Functions' own limit,
   * STEP_FUNCTIONS_INPUT_MAX_BYTES, instead of FLOW_INPUT_MAX_BYTES.
   */
  bulk?: true;
  /**
   * The first Task is passed the input twice (its state's fields and `executionInput`, the
   * copy it checks): a bulk input is then capped at TWICE_PASSED_MAX_BYTES, so the Task's
   * input stays under Step Functions' limit and a large input is refused here, by name,
   * not failed later with States.DataLimitExceeded.
   */
  passedTwice?: true;
}

/** Step Functions' own cap on an execution's input (UTF-8 bytes of its JSON). */
export const STEP_FUNCTIONS_INPUT_MAX_BYTES = 256 * 1024;
/** A bulk input its first Task is passed twice: under half of Step Functions' limit, with room for the Task's own fields. */
export const TWICE_PASSED_MAX_BYTES = 120 * 1024;
/** A flow's execution input at most (UTF-8 bytes of its JSON), unless the flow's input is `bulk`. */
export const FLOW_INPUT_MAX_BYTES = 64 * 1024;

/** The input the recovery dispatcher starts a recovering flow with (src/recovery/dispatch.ts). */
export const RECOVERY_ENVELOPE = ['recoveryOf', 'originalInput'] as const;

const DELIVERY = ['manifestText', 'selector', 'invocationId', 'session'] as const;
const RECOVERY_ACTION = ['invocationId', 'manifestText', 'selector', 'yes'] as const;
/** A read-only operator command's flow (quality replay, diagnose): nothing to confirm. */
const READ_ONLY_ACTION = ['invocationId', 'manifestText', 'selector'] as const;

export const FLOW_INPUTS: Readonly<Record<string, FlowInputSpec>> = {
  'commit-generation': {
    fields: ['root', 'generation', 'taskId', 'sources'],
    recovers: ['commit-generation'],
    bulk: true,
  },
  'stream-append': { fields: ['stream', 'partition', 'attemptId', 'session', 'records'], bulk: true },
  'stream-resolve-append': {
    fields: ['stream', 'partition', 'attemptId', 'writerId'],
    recovers: ['stream-resolve-append'],
  },
  'stream-takeover': { fields: ['stream', 'partition', 'owner', 'session'] },
  'stream-trim': { fields: ['stream', 'partition', 'to'] },
  // A continuation's `next` (the run's state, src/stream/gc/state.ts GcRun) is an input too.
  'stream-gc': {
    fields: [
      'stream',
      'partition',
      'grace',
      'dryRun',
      'pagesPerExecution',
      'policy',
      'policyDigest',
      'scan',
      'sweep',
      'candidates',
      'deleting',
      'totals',
      'wouldMark',
      'execution',
    ],
    bulk: true,
    passedTwice: true,
  },
  'stream-materialize': { fields: ['stream', 'partition', 'max'] },
  'stream-compact': { fields: ['stream', 'partition', 'maxRanges', 'maxBytes'] },
  'stream-maintain': { fields: ['lanes'] },
  'deliver-window': { fields: DELIVERY, bulk: true },
  'publish-clickhouse': { fields: DELIVERY, bulk: true },
  'quality-observe': { fields: RECOVERY_ACTION, bulk: true, passedTwice: true },
  'quality-replay': { fields: READ_ONLY_ACTION, bulk: true, passedTwice: true },
  'quality-diagnose': { fields: READ_ONLY_ACTION, bulk: true, passedTwice: true },
  'delivery-reconcile': {
    fields: RECOVERY_ACTION,
    recovers: ['deliver-window', 'publish-clickhouse'],
    bulk: true,
    passedTwice: true,
  },
  'delivery-expire': { fields: ['retentionDays', 'dryRun', 'pagesPerExecution'] },
  'delivery-resume': { fields: RECOVERY_ACTION, bulk: true, passedTwice: true },
  'delivery-retire': { fields: RECOVERY_ACTION, bulk: true, passedTwice: true },
};

/** The spec of a flow this table declares (own entries only: `constructor` names no flow). */
export function flowInputSpec(flow: string): FlowInputSpec | undefined {
  return Object.hasOwn(FLOW_INPUTS, flow) ? FLOW_INPUTS[flow] : undefined;
}

/** The byte cap of a flow's execution input. */
export function flowInputCap(spec: FlowInputSpec): number {
  if (!spec.bulk) return FLOW_INPUT_MAX_BYTES;
  return spec.passedTwice ? TWICE_PASSED_MAX_BYTES : STEP_FUNCTIONS_INPUT_MAX_BYTES;
}
