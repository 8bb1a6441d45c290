import type { AslDefinition } from '../local/asl.js';
import { designedStopsByState } from './designed-stops.js';

/**
 * Which executions of a flow are recoveries: `always` — the flow's job is recovery, so an
 * execution an operator starts is one too; `dispatched` — only an execution the recovery
 * dispatcher started (its input is `{recoveryOf, originalInput}`, isRecoveryInput).
 */
export type RecoveryRuns = 'always' | 'dispatched';

/** What a recovery of the flow works on, named by the notice: a stream lane's attempt, a generation task, a delivery invocation. */
export type RecoverySubject = 'lane' | 'task' | 'invocation';

/** How one designed stop (Fail state) reads when a recovery execution ends there. */
export interface RecoveryStop {
  /**
   * true: someone must act — ExecutionOutcome `recovery-stopped`, the flow's
   * `-recovery-stopped` alarm and a notice on the incident topic; false: a benign end that
   * leaves nothing held, counted as `designed-stop`.
   */
  pages: boolean;
  /**
   * true: the stop follows from the input and the durable state alone, so a re-run of the
   * same input, with nobody acting in between, ends no further. The dispatcher does not
   * re-run a recovery execution that ended here: the stop's one notice (when it pages) has
   * gone out, and a re-run would only stop, and page, again.
   */
  deterministic: boolean;
  /** What the stop means for the durable state (docs/operate.md "Recovery stops"). */
  meaning: string;
}

export interface RecoveryFlow {
  runs: RecoveryRuns;
  subject: RecoverySubject;
  /** Every Fail state of the flow's ASL, by state name (a test holds this to the ASL). */
  stops: Readonly<Record<string, RecoveryStop>>;
}

/** The three live delivery recovery flows end in the same four Fail states (statemachines/delivery-*.asl.json). */
const DELIVERY_RECOVERY: RecoveryFlow = {
  runs: 'always',
  subject: 'invocation',
  stops: {
    ConfirmationRequired: {
      pages: true,
      deterministic: true,
      meaning:
        "Started without `yes: true` (the CLI's --yes): refused before anything was read, so the invocation it was started for is still unrecovered.",
    },
    Retained: {
      pages: true,
      deterministic: false,
      meaning: 'The action stopped short of its goal: the state is journaled and custody retained.',
    },
    IncidentRetained: {
      pages: true,
      deterministic: true,
      meaning:
        "INCIDENT_RETAINED: contradicting evidence, custody retained until an operator resolves it (the flow's NotifyIncident published the projection too).",
    },
    Refused: {
      pages: true,
      deterministic: false,
      meaning:
        "The step's own refusal (id, journal, permitted action, sealed authority, custody or fence held elsewhere, target): nothing was changed by the refused part; the invocation keeps its state and custody.",
    },
  },
};

/**
 * The one declaration of every recovery flow's designed stops: which of its executions are
 * recoveries, and for each Fail state whether a recovery ending there pages. Every flow the
 * registry names as a recovery (`recovery.by`) and every flow whose job is recovery is here
 * (test/unit/recovery-stops.test.ts holds it to src/registry/flows.ts, the ASL and the
 * docs/operate.md "Recovery stops" table). A designed stop of any other execution stays a quiet `designed-stop`.
 */
export const RECOVERY_FLOWS: Readonly<Record<string, RecoveryFlow>> = {
  'stream-resolve-append': {
    runs: 'always',
    subject: 'lane',
    stops: {
      Rejected: {
        pages: false,
        deterministic: true,
        meaning:
          'The input names no lane or attempt (Cutpoint.ValidationError) or the lane does not exist (Stream.LaneMissing): refused before anything was read or written, so nothing is held; whoever started it has the error.',
      },
      Unresolvable: {
        pages: true,
        deterministic: true,
        meaning:
          "The attempt's evidence contradicts itself (Stream.ResolveInconsistent: a commit record past the head) and the lane stays suspended, appends refused; or a committed attempt's index or generation 0 could not be repaired.",
      },
      RecoveryExhausted: {
        pages: true,
        deterministic: true,
        meaning:
          "Started with a recovery's input: the one automatic re-run is spent and the lane may still be suspended.",
      },
    },
  },
  'commit-generation': {
    runs: 'dispatched',
    subject: 'task',
    stops: {
      RecoveryExhausted: {
        pages: true,
        deterministic: true,
        meaning:
          'A recovery of a recovery: the one automatic re-run is spent; the task stays PREPARED or open until re-run by hand.',
      },
      Rejected: {
        pages: true,
        deterministic: false,
        meaning:
          'The re-run was refused (malformed input, the task id bound to other sources, the task or its PREPARED record missing mid-flow): the task is not settled by automation.',
      },
      Inconsistent: {
        pages: true,
        deterministic: true,
        meaning:
          'The authority contradicts itself (a COMMITTED record whose root head is behind it): never taken as success; the slot stays undecided.',
      },
      Undecided: {
        pages: true,
        deterministic: false,
        meaning:
          "The commit's outcome stayed unknown after repeated exact reloads: the task is PREPARED and holds its slot.",
      },
    },
  },
  // An automatic reconcile also stops when its target stays unreachable (docs/operate.md "Automatic recovery").
  'delivery-reconcile': {
    ...DELIVERY_RECOVERY,
    stops: {
      ...DELIVERY_RECOVERY.stops,
      TargetUnreachable: {
        pages: true,
        deterministic: false,
        meaning:
          'The target stayed unreachable through every probe the backoff policy allows: nothing was journaled or changed, the invocation keeps its state and custody until an operator reconciles it once the target is back.',
      },
    },
  },
  // Resume's continue runs the unfinished parts on its ContinueParts Map, then proves EOF.
  'delivery-resume': {
    ...DELIVERY_RECOVERY,
    stops: {
      ...DELIVERY_RECOVERY.stops,
      PartRefused: {
        pages: true,
        deterministic: false,
        meaning:
          "A continued part's Task refused (the Map's child execution): the Map Run fails and so does the resume, Refused; the part head keeps its last journaled batch, the invocation stays WRITING_UNKNOWN for reconcile.",
      },
      StoppedForRecovery: {
        pages: true,
        deterministic: false,
        meaning:
          'The continued parts did not prove EOF (VerifyContinued journaled PARTIAL_PROVED): custody is retained and reconcile says what the stage holds now.',
      },
    },
  },
  'delivery-retire': DELIVERY_RECOVERY,
};

/** What the dispatcher is told about a recovery flow (its rule's constant input, infra/recovery-dispatch.ts). */
export interface RecoveryStops {
  runs: RecoveryRuns;
  subject: RecoverySubject;
  /** The designed errors that page: those of the paging Fail states (an error that reaches a paging and a benign one pages). */
  pages: string[];
  /** The designed errors a re-run cannot get past: those of the deterministic Fail states, less any another Fail state ends with too. */
  deterministic: string[];
}

/**
 * The dispatcher's view of `flow`'s recovery stops, from its ASL; undefined for a flow
 * that never runs a recovery. Throws when the declaration and the ASL's Fail states differ,
 * so a flow cannot be deployed with a stop nobody classified.
 */
export function recoveryStopsOf(flow: string, definition: AslDefinition): RecoveryStops | undefined {
  const declared = RECOVERY_FLOWS[flow];
  if (!declared) return undefined;
  const stops = designedStopsByState(definition);
  const fails = stops.map((s) => s.state).sort();
  const classified = Object.keys(declared.stops).sort();
  if (JSON.stringify(fails) !== JSON.stringify(classified)) {
    throw new Error(
      `${flow}: src/recovery/recovery-stops.ts classifies the Fail states ${classified.join(', ')}, its ASL has ${fails.join(', ')}`,
    );
  }
  const pages = new Set(stops.filter((s) => declared.stops[s.state]!.pages).flatMap((s) => s.errors));
  // An error one stop that a re-run may get past also ends with is re-run: a spare execution, never a lost notice.
  const rerun = new Set(stops.filter((s) => !declared.stops[s.state]!.deterministic).flatMap((s) => s.errors));
  const deterministic = new Set(
    stops
      .filter((s) => declared.stops[s.state]!.deterministic)
      .flatMap((s) => s.errors)
      .filter((e) => !rerun.has(e)),
  );
  return {
    runs: declared.runs,
    subject: declared.subject,
    pages: [...pages].sort(),
    deterministic: [...deterministic].sort(),
  };
}
