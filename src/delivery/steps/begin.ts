import { invocationIdOfRun } from '../../domain/delivery/identifiers.js';
import { JournalUnavailableError } from '../../domain/delivery/journal-states.js';
import { assertSealedForRun } from '../../domain/delivery/seal-for-run.js';
import { sealAuthority } from '../../domain/delivery/sealed-authority.js';
import { targetCheckOf } from '../../domain/delivery/target-check.js';
import { assertWindowClosed, resolveWindow, type SealedWindow } from '../../domain/delivery/window.js';
import { ValidationError } from '../../domain/errors.js';
import { CustodyHeldError, loadCustody, type CustodyRecord } from '../custody.js';
import { beginInvocation } from '../begin-custody.js';
import type { DeliveryDeps } from '../deps.js';
import { validateSession } from '../journal/keys.js';
import { loadInvocation } from '../journal/records.js';
import { routeTargetId, workRootOf, type StepOutput } from './common.js';

export interface BeginInput {
  /**
   * The invocation to begin or resume. Omitted (a console or schedule start), it is derived
   * from `execution.id` (`invocationIdOfExecution`), so retries and the automatic
   * reconcile name the same invocation.
   */
  invocationId?: string;
  /** The caller's session (a flow execution or process), reused by its own retries; default `exec-<execution name>`. */
  session?: string;
  /** The deliver-window execution (its context object), added by the flow's Begin Task parameters. */
  execution?: { id: string; name: string };
  /** The exact manifest text the route was selected from. */
  manifestText: string;
  /** `route.yaml#daily`, the file as the caller resolved it. */
  selector: string;
}

export interface BeginOutput extends StepOutput {
  window: SealedWindow;
}

/**
 * Step 1: acquire custody of the target and seal the recovery authority, before any
 * source row I/O. The target identity is observed (`target.identity()`) and the work root
 * derived from the object store (`workRootOf`), not taken from the input. The window is
 * resolved ONCE, here: a first begin resolves the route's policy against the clock (and refuses a window that has not closed); a re-run of begin
 * (a lost response, a crash) reads the sealed window back from the journal and never
 * re-resolves, so a rolling window cannot shift between the two. A first begin checks
 * the target (`deps.target.checkTarget`) and the source (`deps.source.describe`)
 * read-only — tables and the columns the route names — before custody is taken, so a
 * missing table or column is refused with its cause and nothing written. One transaction
 * (`beginInvocation`): seal + record in EMPTY_STAGING + custody by CAS. Another
 * invocation holding the target is Delivery.CustodyHeld and nothing is written.
 */
/**
 * In the deliver-window flow Begin's Task input is `{ executionInput, execution, flow }`: the
 * execution input whole from the context object (manifestText, selector, optional
 * invocationId and session; its fields checked by the handler first, docs/deploy.md "Flow inputs")
 * and the execution's id and name from the context object — never from the input, which
 * cannot forge them. Anything else is Begin's input as given (the in-process run, the CLI).
 */
export function fromFlowTask(input: unknown): Partial<BeginInput> | null {
  const v = input as { executionInput?: unknown; execution?: BeginInput['execution'] } | null;
  if (!v || typeof v !== 'object' || v.executionInput === undefined) return v as Partial<BeginInput> | null;
  const given = v.executionInput as Partial<BeginInput> | null;
  if (!given || typeof given !== 'object') return null;
  const { execution: _forged, ...rest } = given;
  return { ...rest, ...(v.execution ? { execution: v.execution } : {}) };
}

/** Begin's own input, checked before anything else (the deps provider included): the invocation id and session it resolves to. */
export function parseBeginInput(input: unknown): {
  invocationId: string;
  session: string;
  manifestText: string;
  selector: string;
} {
  const v = fromFlowTask(input);
  if (!v || typeof v !== 'object' || typeof v.manifestText !== 'string' || typeof v.selector !== 'string') {
    throw new ValidationError(
      'delivery.step_input_invalid',
      'begin needs manifestText and selector, and invocationId and session unless it runs in a flow execution',
    );
  }
  const execution = v.execution;
  if (v.invocationId === undefined && typeof execution?.id !== 'string') {
    throw new ValidationError(
      'delivery.step_input_invalid',
      'begin needs an invocationId when it does not run in a flow execution',
    );
  }
  const invocationId = invocationIdOfRun(v.invocationId, execution?.id);
  const session = validateSession(
    v.session ?? (typeof execution?.name === 'string' ? `exec-${execution.name}` : undefined),
  );
  return { invocationId, session, manifestText: v.manifestText, selector: v.selector };
}

/**
 * Begin's deps provider behind its input check: a deliver-window started directly with a
 * malformed input is refused before the provider parses the manifest or reads a secret.
 */
export function beginInputFirst(
  provider: (event: unknown) => Promise<DeliveryDeps>,
): (event: unknown) => Promise<DeliveryDeps> {
  return async (event) => {
    parseBeginInput(event);
    return provider(fromFlowTask(event));
  };
}

export async function begin(input: BeginInput, deps: DeliveryDeps): Promise<BeginOutput> {
  const { invocationId, session, manifestText, selector } = parseBeginInput(input);
  const { ports, route } = deps;
  const targetId = routeTargetId(deps);

  let window: SealedWindow;
  let known: { custody: CustodyRecord | undefined } | undefined;
  const existing = await loadInvocation(ports, invocationId).catch((error: unknown) => {
    if (error instanceof JournalUnavailableError && error.missing) return undefined;
    throw error;
  });
  if (existing) {
    // A re-run of begin must be this route of this manifest; another route's or manifest's
    // invocation is refused before the target is observed or anything is written.
    assertSealedForRun(existing, { manifestText, selector, route, targetId });
    window = existing.sealed.window;
  } else {
    const now = ports.clock.now();
    window = resolveWindow(route.route.window, now);
    assertWindowClosed(window, now);
    // Refusals that need no connection first: another invocation holding the target is
    // refused before the source is opened (beginInvocation rechecks it by CAS).
    const custody = await loadCustody(ports, targetId);
    if (custody?.state === 'HELD' && custody.invocationId !== invocationId)
      throw new CustodyHeldError(targetId, custody.invocationId);
    known = { custody };
    // Then the target and the source, read-only, before custody is taken and a stage
    // created. The target: a regular table of a user schema under exactly its name, not
    // the receipts table, with every column the route names (delivery.target_table_missing,
    // delivery.target_not_user_table, delivery.target_column_missing). The source: the
    // table and the time and key columns exist (delivery.source_table_missing,
    // delivery.source_schema_invalid), or the source is unreachable — with its cause.
    await deps.target.checkTarget(targetCheckOf(route.route));
    const { source } = route.route;
    if (deps.source)
      await deps.source.describe({ from: source.from, timeColumn: source.timeColumn, keyColumns: source.keyColumns });
  }
  // Observed, never taken from the input: the seal must say which target this run really
  // wrote to, and where its chunks live, so recovery can observe both again and compare.
  const targetIdentity = await deps.target.identity();
  const sealed = sealAuthority({
    invocationId,
    manifestText,
    selector,
    route,
    targetIdentity,
    workRoot: workRootOf(deps),
    window,
  });
  // Legs the publication mode adds to the slot's custody transaction (a ClickHouse successor's boundary).
  const legs = deps.mode.beginLegs(deps, { targetId, invocationId });
  const grant = await beginInvocation(ports, {
    invocationId,
    route: route.name,
    targetId,
    sealed,
    session,
    ...(known ? { known } : {}),
    ...(legs ? { legs } : {}),
  });
  return {
    invocationId,
    fence: grant.fence,
    targetId,
    state: grant.invocation.state,
    acted: !grant.alreadyApplied,
    window: grant.invocation.sealed.window,
    known: grant.custody ? { invocation: grant.invocation, custody: grant.custody } : null,
  };
}
