import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { validateInvocationId } from '../../domain/delivery/identifiers.js';
import { assertActionPermitted, assertConfirmed, type LiveAction } from '../../domain/delivery/action-guide.js';
import { parseManifest, parseSelector, selectRoute, selectorText } from '../../domain/delivery/manifest.js';
import type { Selector } from '../../domain/delivery/manifest-types.js';
import {
  assertAuthority,
  recomputeAuthority,
  type AuthorityInput,
  type SealedAuthority,
} from '../../domain/delivery/sealed-authority.js';
import { CutpointError } from '../../domain/errors.js';
import { causeMessage, readManifestFile } from './delivery-failures.js';
import { validateTargetId } from '../../delivery/journal/keys.js';
import { inspectAll, inspectInvocation } from '../../delivery/journal/listing.js';
import { loadInvocation } from '../../delivery/journal/records.js';
import { LIVE_ACTION_RUNNERS } from '../../delivery/recovery/actions.js';
import type { RecoveryFlowInput } from '../../delivery/recovery/flow-steps.js';
import { capsuleActionGate } from '../../quality/inspect.js';
import { targetReaderOf, type ObserveReader } from '../../quality/observe-reader.js';
import { publicationModeOf } from '../../publication/exchange-mode.js';
import { probeReader } from '../../adapters/reader-process/probe-reader.js';
import { UsageError } from '../io.js';
import { parseOptions, unexpectedArgument, unknownSubcommand } from '../grammar.js';
import { AWS_OPTIONS } from '../aws-runtime.js';
import { expire, EXPIRE_OPTIONS, expireHelp, expireInputOf } from './delivery-expire.js';
import { runtimeOf, type Runtime } from './stream/runtime.js';

export const deliveryHelp = `cutpoint delivery run --manifest FILE#ROUTE [--invocation-id ID] [--format json|text] [--aws]
  runs the route once through the deliver-window state machine and prints the
  invocation's recovery projection: exit 0 on CUSTODY_RELEASED, else exit 1 with the one
  safe next command on stderr (delivery.needs_recovery). Locally: the local runner against
  the local runtime, the target from the target binding's url_env, the source from the
  ClickHouse binding's url_env (http(s)://… or chdb:<dir> for embedded ClickHouse); with
  --aws: StartExecution of the deployed state machine (--state-machine-arn, else
  CUTPOINT_DELIVER_WINDOW_ARN, else the stack output DeliverWindowStateMachineArn), named by the invocation id. An --invocation-id sealed to another
  route or manifest is refused (delivery.invocation_sealed_elsewhere); a source table that
  does not exist is refused before custody is taken (delivery.source_table_missing)
cutpoint delivery inspect-all [--target TARGET_ID] [--format json|text]
  every invocation in the delivery journal (read-only, no database connection) with
  retained_custody_count, which must be 0 before an uninstall or a rollback; a journal
  that breaks its own invariants (a record missing for held custody, a state without its
  proof, a head past its records) exits 1 naming each problem
  (delivery.recovery_journal_inconsistent)
cutpoint delivery inspect <invocation-id> [--format json|text]
  one invocation's state, diagnostic_code and permitted_actions (read-only)
cutpoint delivery reconcile|resume|retire <invocation-id> --manifest FILE#ROUTE --yes [--format json|text]
  a live recovery action; run only one listed in permitted_actions. Without --yes it is
  refused (delivery.recovery_confirmation_required) before the manifest is loaded; the
  manifest and selector must match the invocation's sealed recovery authority. Runs
  in-process against the local runtime and the target the route's binding names (its
  url_env must be set; the value is never printed); with --aws it starts the deployed
  delivery-<action> state machine (--state-machine-arn, else CUTPOINT_DELIVERY_<ACTION>_ARN,
  else the stack output;
  a fresh execution each time, or --name) after the same refusals, and prints its
  projection
${expireHelp}
every delivery command reads the journal in the local runtime, or with --aws the deployed
authority table (CUTPOINT_TABLE_NAME, CUTPOINT_BUCKET_NAME)`;

type Options = Record<string, { type: 'string' | 'boolean' }>;
type Values = Record<string, string | boolean | undefined>;

const COMMON: Options = { ...AWS_OPTIONS, faults: { type: 'string' } };
const LIVE: Options = {
  manifest: { type: 'string' },
  yes: { type: 'boolean' },
  'state-machine-arn': { type: 'string' },
  name: { type: 'string' },
};
const LIVE_ACTIONS: readonly LiveAction[] = ['reconcile', 'resume', 'retire'];

export async function deliveryCommand(args: string[]): Promise<unknown> {
  const [verb, ...rest] = args;
  // The run and the target drivers load only for the command that uses them.
  if (verb === 'run') return (await import('./delivery-run.js')).deliveryRunCommand(rest);
  if (verb === 'expire') return expireCommand(rest);
  const live = LIVE_ACTIONS.find((a) => a === verb);
  if (verb !== 'inspect-all' && verb !== 'inspect' && !live) {
    throw unknownSubcommand('delivery', verb, deliveryHelp);
  }
  const options: Options =
    verb === 'inspect-all' ? { ...COMMON, target: { type: 'string' } } : live ? { ...COMMON, ...LIVE } : COMMON;
  const { values, positionals } = parseOptions(rest, options);
  // The whole grammar is checked before anything is touched (exit 2 wins over exit 1).
  if (verb === 'inspect-all') {
    if (positionals.length) throw unexpectedArgument(positionals[0]);
  } else {
    const [id, ...extra] = positionals;
    if (id === undefined) throw new UsageError(`delivery ${verb} needs an <invocation-id>\n${deliveryHelp}`);
    if (extra.length) throw unexpectedArgument(extra[0]);
    if (live && typeof values.manifest !== 'string')
      throw new UsageError(`delivery ${verb} needs --manifest FILE#ROUTE`);
  }
  // On AWS a live action starts its recovery flow (its ARN: flag, environment or stack output).
  const runtime = runtimeOf(values, live ? `delivery-${live}` : undefined);
  try {
    // The CLI composes delivery and quality: an exchange operation whose capsule breaks with
    // its evidence (a rolled-back or replaced authority table) is shown permitting nothing.
    if (verb === 'inspect-all') {
      const targetId = typeof values.target === 'string' ? validateTargetId(values.target) : undefined;
      const ports = await runtime.ports();
      return await inspectAll(ports, targetId === undefined ? {} : { targetId }, capsuleActionGate(ports));
    }
    const id = positionals[0] as string;
    if (!live) {
      const ports = await runtime.ports();
      return await inspectInvocation(ports, id, capsuleActionGate(ports));
    }
    return await liveAction(runtime, live, id, values);
  } finally {
    runtime.done();
  }
}

async function expireCommand(args: string[]): Promise<unknown> {
  const { values, positionals } = parseOptions(args, { ...COMMON, ...EXPIRE_OPTIONS });
  if (positionals.length) throw unexpectedArgument(positionals[0]);
  expireInputOf(values);
  const runtime = runtimeOf(values, 'delivery-expire');
  try {
    return await expire(runtime, values);
  } finally {
    runtime.done();
  }
}

/**
 * The front door every live action shares (docs/rules.md#recovery-actions), in this order, each refusal exiting
 * 1 with nothing mutated: confirmation (before the manifest is loaded or the journal
 * opened), the invocation id and selector as given, the journal record, the
 * state-to-action guide, the manifest, and the sealed recovery authority; then (local
 * runtime only) the target binding, and the action itself (recovery/*.ts), whose
 * projection is the command's output.
 */
async function liveAction(
  runtime: Runtime,
  action: LiveAction,
  invocationId: string,
  values: Values,
): Promise<unknown> {
  assertConfirmed(action, values.yes === true);
  const id = validateInvocationId(invocationId);
  const given = parseSelector(values.manifest as string);
  // The seal digests the selector with the file as the caller resolved it: absolute.
  const selector: Selector = { file: resolve(given.file), route: given.route };
  const record = await loadInvocation(await runtime.ports(), id);
  assertActionPermitted(record.state, record.facts, action);
  const manifestText = await readManifestFile(selector.file);
  const route = selectRoute(parseManifest(manifestText, selector.file), selector);
  assertOperatorAuthority(record.sealed, { invocationId: id, manifestText, selector, route });
  if (runtime.kind === 'aws')
    return deployedAction(runtime, action, {
      invocationId: id,
      manifestText,
      selector: selectorText(selector),
      yes: true,
    });
  // The live action itself, in-process against the local runtime: it observes the target's
  // identity and the work root, rechecks the whole seal, takes custody in a new recovery
  // session, acts source-free and prints the projection.
  // A ClickHouse exchange route's target is its stage and EXCHANGE sides on one connection.
  const { openLocalRouteTarget, openLocalSource } = await import('./delivery-bindings.js');
  // Resume of a continuable PARTIAL_PROVED continues the unfinished parts: the one live
  // action that reads the source (opened on its first read, as `delivery run` opens it;
  // recovery/continue.ts lets only the unfinished parts' remaining ranges through).
  const source =
    action === 'resume' && record.state === 'PARTIAL_PROVED' ? await openLocalSource(route.sourceBinding) : undefined;
  const opened = await openLocalRouteTarget(route.targetBinding, runtime.faults());
  try {
    const observeReader: ObserveReader = (d) => targetReaderOf(d, probeReader());
    const deps = {
      ports: await runtime.ports(),
      target: opened.target,
      mode: publicationModeOf(route, { exchange: opened.exchange, observeReader }),
      route,
      faults: runtime.faults(),
      ...(source ? { extract: { source } } : {}),
    };
    const result = await LIVE_ACTION_RUNNERS[action](
      { invocationId: id, manifestText, selector: selectorText(selector) },
      deps,
    );
    return result.projection;
  } finally {
    await opened.target.close();
    await source?.close();
  }
}

/**
 * The live action on AWS: the deployed delivery-<action> flow (the same use case in a
 * Lambda, under the same refusals), waited for. A fresh execution name per command unless
 * --name is given: every action is repeat-safe by its journal, and a lost StartExecution
 * response is resolved by the adapter from the name. The flow's failure names are the
 * use cases' own (Delivery.ActionNotPermitted, …) or the flow's outcome
 * (Delivery.RecoveryRetained, Delivery.IncidentRetained); exit 1 with the journal's
 * projection on stderr's diagnostic.
 */
async function deployedAction(runtime: Runtime, action: LiveAction, input: RecoveryFlowInput): Promise<unknown> {
  const executionName = `${action}-${input.invocationId.slice(4, 20)}-${randomBytes(4).toString('hex')}`;
  const run = await runtime.run(`delivery-${action}`, executionName, input);
  if (run.status === 'SUCCEEDED') {
    const output = run.output as { projection?: unknown } | undefined;
    // reconcile's Observed path returns the inspection itself.
    return output?.projection ?? output;
  }
  const error = run.error ?? 'Delivery.RecoveryFlowFailed';
  throw new CutpointError(
    error,
    FLOW_FAILURE_CODES[error] ?? 'delivery.recovery_flow_failed',
    `${action} ended ${run.status} with ${error}${run.cause ? `: ${causeMessage(run.cause)}` : ''}`,
  );
}

const FLOW_FAILURE_CODES: Record<string, string> = {
  'Delivery.RecoveryRetained': 'delivery.recovery_retained',
  'Delivery.IncidentRetained': 'delivery.incident_retained',
  'Delivery.ActionNotPermitted': 'delivery.recovery_action_not_permitted',
  'Delivery.ConfirmationRequired': 'delivery.recovery_confirmation_required',
  'Delivery.AuthorityMismatch': 'delivery.recovery_authority_mismatch',
};

/**
 * Compares what the operator supplied (invocation, manifest text, selector, bindings)
 * with the seal. This door opens no connection, so the target identity and the work
 * root are carried over from the seal here; the live action observes both and checks the
 * whole seal again before it mutates anything (recovery-session.ts).
 */
function assertOperatorAuthority(
  sealed: SealedAuthority,
  input: Omit<AuthorityInput, 'targetIdentity' | 'workRoot' | 'selector'> & { selector: Selector },
): void {
  const recomputed = recomputeAuthority({
    ...input,
    selector: selectorText(input.selector),
    targetIdentity: { deferred: 'live-action' },
    workRoot: '/',
  });
  assertAuthority(sealed, {
    ...recomputed,
    identityDigest: sealed.identityDigest,
    workRootDigest: sealed.workRootDigest,
  });
}
