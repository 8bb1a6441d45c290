import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { validateInvocationId } from '../../domain/delivery/identifiers.js';
import { assertActionPermitted, assertConfirmed, type LiveAction } from '../../domain/delivery/journal-states.js';
import { parseManifest, parseSelector, selectRoute, selectorText, type Selector } from '../../domain/delivery/manifest.js';
import { assertAuthority, recomputeAuthority, type AuthorityInput, type SealedAuthority } from '../../domain/delivery/sealed-authority.js';
import { CutpointError } from '../../domain/errors.js';
import { inspectAll, inspectInvocation, loadInvocation, validateTargetId } from '../../delivery/journal-store.js';
import { reconcile } from '../../delivery/recovery/reconcile.js';
import type { RecoveryDeps, RecoveryInput, RecoveryResult } from '../../delivery/recovery/recovery-session.js';
import { resume } from '../../delivery/recovery/resume.js';
import { retire } from '../../delivery/recovery/retire.js';
import { UsageError } from '../io.js';
import { openLocalTarget } from './delivery-bindings.js';
import { deliveryRunCommand } from './delivery-run.js';
import { targetOf, type Target } from './stream/target.js';

export const deliveryHelp = `cutpoint delivery run --manifest FILE#ROUTE [--invocation-id ID] [--format json] [--aws]
  runs the route once through the deliver-window state machine and prints the
  invocation's recovery projection: exit 0 on CUSTODY_RELEASED, else exit 1 with the one
  safe next command on stderr (delivery.needs_recovery). Locally: the local runner against
  the local runtime, the target from the target binding's url_env, the source from the
  ClickHouse binding's url_env (http(s)://… or chdb:<dir> for embedded ClickHouse); with
  --aws: StartExecution of the deployed state machine (CUTPOINT_DELIVER_WINDOW_ARN or
  --state-machine-arn), named by the invocation id
cutpoint delivery inspect-all [--target TARGET_ID] [--format json]
  every invocation in the delivery journal (read-only, no database connection) with
  retained_custody_count, which must be 0 before an uninstall or a rollback
cutpoint delivery inspect <invocation-id> [--format json]
  one invocation's state, diagnostic_code and permitted_actions (read-only)
cutpoint delivery reconcile|resume|retire <invocation-id> --manifest FILE#ROUTE --yes [--format json]
  a live recovery action; run only one listed in permitted_actions. Without --yes it is
  refused (delivery.recovery_confirmation_required) before the manifest is loaded; the
  manifest and selector must match the invocation's sealed recovery authority. Runs
  in-process against the local runtime and the target the route's binding names (its
  url_env must be set; the value is never printed); with --aws it is refused for now
  (delivery.recovery_action_unavailable)
every delivery command reads the journal in the local runtime, or with --aws the deployed
authority table (CUTPOINT_TABLE_NAME, CUTPOINT_BUCKET_NAME)`;

type Options = Record<string, { type: 'string' | 'boolean' }>;
type Values = Record<string, string | boolean | undefined>;

const COMMON: Options = { aws: { type: 'boolean' }, faults: { type: 'string' }, format: { type: 'string' } };
const LIVE: Options = { manifest: { type: 'string' }, yes: { type: 'boolean' } };
const LIVE_ACTIONS: readonly LiveAction[] = ['reconcile', 'resume', 'retire'];

/** The live action exists in the grammar but not on this runtime (`--aws`): refused, nothing touched. */
export class RecoveryActionUnavailableError extends CutpointError {
  constructor(action: LiveAction, where: string) {
    super('Delivery.RecoveryActionUnavailable', 'delivery.recovery_action_unavailable', `${action} is not yet available ${where}; nothing was mutated`);
  }
}

const ACTIONS: Record<LiveAction, (input: RecoveryInput, deps: RecoveryDeps) => Promise<RecoveryResult>> = { reconcile, resume, retire };

/** The manifest file named by --manifest cannot be read. Names the path, never content. */
export class ManifestUnavailableError extends CutpointError {
  constructor(file: string, reason: string) {
    super('Delivery.ManifestUnavailable', 'delivery.manifest_unavailable', `manifest ${file} could not be read (${reason}); nothing was mutated`);
  }
}

export async function deliveryCommand(args: string[]): Promise<unknown> {
  const [verb, ...rest] = args;
  if (verb === 'run') return deliveryRunCommand(rest);
  const live = LIVE_ACTIONS.find((a) => a === verb);
  if (verb !== 'inspect-all' && verb !== 'inspect' && !live) {
    throw new UsageError(`unknown delivery subcommand ${JSON.stringify(verb ?? '')}\n${deliveryHelp}`);
  }
  const options: Options = verb === 'inspect-all' ? { ...COMMON, target: { type: 'string' } } : live ? { ...COMMON, ...LIVE } : COMMON;
  const { values, positionals } = parse(rest, options);
  // The whole grammar is checked before anything is touched (exit 2 wins over exit 1).
  if (values.format !== undefined && values.format !== 'json') throw new UsageError('--format accepts only json');
  if (verb === 'inspect-all') {
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  } else {
    const [id, ...extra] = positionals;
    if (id === undefined) throw new UsageError(`delivery ${verb} needs an <invocation-id>\n${deliveryHelp}`);
    if (extra.length) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
    if (live && typeof values.manifest !== 'string') throw new UsageError(`delivery ${verb} needs --manifest FILE#ROUTE`);
  }
  const target = targetOf(values);
  try {
    if (verb === 'inspect-all') {
      const targetId = typeof values.target === 'string' ? validateTargetId(values.target) : undefined;
      return await inspectAll(await target.ports(), targetId === undefined ? {} : { targetId });
    }
    const id = positionals[0] as string;
    if (!live) return await inspectInvocation(await target.ports(), id);
    return await liveAction(target, live, id, values);
  } finally {
    target.done();
  }
}

/**
 * The front door every live action shares (seed 004), in this order, each refusal exiting
 * 1 with nothing mutated: confirmation (before the manifest is loaded or the journal
 * opened), the invocation id and selector as given, the journal record, the
 * state-to-action guide, the manifest, and the sealed recovery authority; then (local
 * runtime only) the target binding, and the action itself (recovery/*.ts), whose
 * projection is the command's output.
 */
async function liveAction(target: Target, action: LiveAction, invocationId: string, values: Values): Promise<unknown> {
  assertConfirmed(action, values.yes === true);
  const id = validateInvocationId(invocationId);
  const given = parseSelector(values.manifest as string);
  // The seal digests the selector with the file as the caller resolved it: absolute.
  const selector: Selector = { file: resolve(given.file), route: given.route };
  const record = await loadInvocation(await target.ports(), id);
  assertActionPermitted(record.state, record.facts, action);
  const manifestText = await readManifest(selector.file);
  const route = selectRoute(parseManifest(manifestText, selector.file), selector);
  assertOperatorAuthority(record.sealed, { invocationId: id, manifestText, selector, route });
  if (target.kind === 'aws') throw new RecoveryActionUnavailableError(action, 'on AWS (run it against the local runtime)');
  // The live action itself, in-process against the local runtime: it observes the target's
  // identity and the work root, rechecks the whole seal, takes custody in a new recovery
  // session, acts source-free and prints the projection.
  const targetPort = await openLocalTarget(route.targetBinding, typeof values.faults === 'string' ? values.faults : undefined);
  try {
    const result = await ACTIONS[action]({ invocationId: id, manifestText, selector: selectorText(selector) }, { ports: await target.ports(), target: targetPort, route });
    return result.projection;
  } finally {
    await targetPort.close();
  }
}

/**
 * Compares what the operator supplied (invocation, manifest text, selector, bindings)
 * with the seal. This door opens no connection, so the target identity and the work
 * root are carried over from the seal here; the live action observes both and checks the
 * whole seal again before it mutates anything (recovery-session.ts).
 */
function assertOperatorAuthority(sealed: SealedAuthority, input: Omit<AuthorityInput, 'targetIdentity' | 'workRoot' | 'selector'> & { selector: Selector }): void {
  const recomputed = recomputeAuthority({ ...input, selector: selectorText(input.selector), targetIdentity: { deferred: 'live-action' }, workRoot: '/' });
  assertAuthority(sealed, { ...recomputed, identityDigest: sealed.identityDigest, workRootDigest: sealed.workRootDigest });
}

async function readManifest(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new ManifestUnavailableError(file, (error as NodeJS.ErrnoException).code ?? 'unreadable');
  }
}

function parse(args: string[], options: Options) {
  try {
    return parseArgs({ args, allowPositionals: true, strict: true, options });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
