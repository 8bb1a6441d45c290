import { ownEntry } from '../../domain/own-entry.js';
import { QualityConfirmationRequiredError } from '../../domain/quality/errors.js';
import { inspectAllQuality, inspectQuality } from '../../quality/inspect.js';
import { UsageError } from '../io.js';
import { parseOptions, unexpectedArgument, unknownSubcommand } from '../grammar.js';
import { AWS_OPTIONS } from '../aws-runtime.js';
import type { ManifestVerb } from './quality-live.js';
import { runtimeOf } from './stream/runtime.js';

export const qualityHelp = `cutpoint quality inspect-all [--format json|text] [--aws]
  every ClickHouse publication under quality governance, with its journal
  state, capsule state, target_commit and governance axes, diagnostic_code and
  permitted_actions, plus retained_custody_count (every journal record holding custody)
  and retained_governance_count (capsules not COMPLETE, held reader guards, capsules
  that cannot be read): both must be 0 before an uninstall, a rollback or an authority
  switch. Read-only; a journal that breaks its own invariants exits 1
  (delivery.recovery_journal_inconsistent)
cutpoint quality inspect <invocation-id> [--format json|text] [--aws]
  one operation's quality governance (cutpoint.quality-governance.v1): both outcome axes
  (a successful publication is not successful governance), the capsule's evidence as
  classified (missing, malformed or unreadable evidence is never a pass), the reader
  guard (held since, by which run; never its token), digests (never a UUID or a value)
  and the permitted_actions. Read-only
cutpoint quality diagnose <invocation-id> --manifest FILE#ROUTE [--format json|text] [--aws]
  read-only comparisons (cutpoint.quality-diagnosis.v1): each sealed digest (policy,
  admission, inventory, generation, immutable_core, seal, authority_binding) beside the
  one recomputed now from the manifest given, the target's system.columns/system.tables
  under the target name and DescribeTable; version continuity; the acceptance probes by
  name and columns; last_error_code, the first refusal a live action would meet. A value
  that cannot be recomputed is null with match "unknown", never true. Writes nothing,
  reads no row value. With --aws it starts the deployed quality-diagnose state machine
  (--state-machine-arn, else CUTPOINT_QUALITY_DIAGNOSE_ARN, else the stack output; a
  fresh execution each time, or --name) with the manifest read here; its Lambda reads
  the binding's secret and prints the same diagnosis
cutpoint quality observe <invocation-id> --manifest FILE#ROUTE --yes [--format json|text] [--aws]
  a live action, only where permitted_actions lists observe: a PUBLISHED operation whose
  capsule is PREPARED or TARGET_PENDING. Without --yes it is a usage error (exit 2,
  quality.confirmation_required) before the manifest is read or a store opened; anything
  the guide does not list is refused (quality.action_not_permitted) before the manifest is
  read; the target binding must be a ClickHouse server (http(s)://…): the bounded reader
  runs in its own process and cannot reach an embedded chdb: directory, so a chdb: binding
  is refused (quality.reader_unreachable) before anything is written. Then the seal is
  rechecked with the target's identity, a new session takes custody, and the original
  probes run on the published generation under the reader guard. COMPLETE: exit 0 and the
  inspect projection plus observation {outcome, remote_termination}. TARGET_PENDING and
  FAILED are persisted outcomes, not crashes, but not success either: exit 1 with empty
  stdout and quality.target_pending (observe again later) or Quality.Failed's code
  (terminal, escalate) on stderr, as delivery resume exits 1 short of its goal;
  Quality.Incomplete (exit 1) means the reader's end was not proved and the guard is kept
  (quiescence procedure). With --aws, after the same guide check on the deployed table and
  the manifest read here, it starts the deployed quality-observe state machine
  (--state-machine-arn, else CUTPOINT_QUALITY_OBSERVE_ARN, else the stack output; a fresh
  execution each time, or --name), whose Lambda reads the binding's secret and runs the same observation; its
  outcome exits as above
cutpoint quality replay <invocation-id> --manifest FILE#ROUTE [--format json|text] [--aws]
  a COMPLETE operation's governance replayed by the same invocation and configuration:
  the seal recomputed, prepared.json and completion.json verified, version continuity,
  the authority binding, the current generation and the replay window; prints the
  receipt (cutpoint.quality-replay-receipt.v1) with the original results. Never writes
  (the stores are opened read-only), never reads the source, never dispatches; missing,
  malformed or unreadable evidence is refused (quality.evidence_missing |
  quality.evidence_malformed | quality.evidence_unreadable), never a pass. With --aws it
  starts the deployed quality-replay state machine (--state-machine-arn, else
  CUTPOINT_QUALITY_REPLAY_ARN, else the stack output; a fresh execution each time, or
  --name) with the manifest read here; its Lambda reads the binding's secret and prints
  the same receipt. A deployed read that is refused exits 1 with the flow's error name
there is no force, clear-guard, skip-quality or redispatch command or option: a held
reader guard follows the quiescence procedure of the runbook, and failed or missing
evidence is preserved and escalated. Reads the journal in the local runtime, or for
inspect, inspect-all and observe with --aws the deployed authority table (CUTPOINT_TABLE_NAME,
CUTPOINT_BUCKET_NAME); a local diagnose, replay or observe reaches the target through the
binding's url_env on this machine (the value is never printed)`;

type Options = Record<string, { type: 'string' | 'boolean' }>;
const READ: Options = { ...AWS_OPTIONS, faults: { type: 'string' } };
const WITH_MANIFEST: Options = { faults: { type: 'string' }, manifest: { type: 'string' } };
// --aws: the deployed quality-<verb> flow (ARN by flag, environment or stack output; a fresh execution, or --name).
const DEPLOYED: Options = { ...AWS_OPTIONS, 'state-machine-arn': { type: 'string' }, name: { type: 'string' } };
const VERBS: Record<string, Options> = {
  inspect: READ,
  'inspect-all': READ,
  diagnose: { ...WITH_MANIFEST, ...DEPLOYED },
  observe: { ...WITH_MANIFEST, yes: { type: 'boolean' }, ...DEPLOYED },
  replay: { ...WITH_MANIFEST, ...DEPLOYED },
};

/**
 * `cutpoint quality …` — the operator surface of quality governance. The whole grammar is
 * checked before anything is opened (exit 2 wins over exit 1); no spelling of a force,
 * clear, skip or redispatch parses (unknown subcommand or option: exit 2).
 */
export async function qualityCommand(args: string[]): Promise<unknown> {
  const [verb, ...rest] = args;
  const options = ownEntry(VERBS, verb);
  if (!verb || !options) throw unknownSubcommand('quality', verb, qualityHelp);
  const { values, positionals } = parseOptions(rest, options);
  if (verb === 'inspect-all') {
    if (positionals.length) throw unexpectedArgument(positionals[0]);
  } else {
    if (positionals[0] === undefined) throw new UsageError(`quality ${verb} needs an <invocation-id>\n${qualityHelp}`);
    if (positionals.length > 1) throw unexpectedArgument(positionals[1]);
  }
  if (verb === 'diagnose' || verb === 'replay' || verb === 'observe') {
    if (typeof values.manifest !== 'string') throw new UsageError(`quality ${verb} needs --manifest FILE#ROUTE`);
  }
  // F5 (docs/testing.md#governance-acceptance): a live action's confirmation is part of its
  // grammar (exit 2), refused before the manifest is read or a store opened; the line names the
  // stable code.
  if (verb === 'observe' && values.yes !== true) {
    const refusal = new QualityConfirmationRequiredError('observe');
    throw new UsageError(`${refusal.code}: ${refusal.message}`);
  }
  // observe, replay and diagnose --aws start the deployed quality-<verb> flow (its ARN: flag, environment or stack output).
  const deployed = values.aws === true && verb !== 'inspect' && verb !== 'inspect-all';
  const runtime = runtimeOf(values, deployed ? `quality-${verb}` : undefined);
  try {
    if (verb === 'inspect-all') return await inspectAllQuality(await runtime.ports());
    if (verb === 'inspect') return await inspectQuality(await runtime.ports(), positionals[0]);
    const { manifestCommand } = await import('./quality-live.js');
    return await manifestCommand(runtime, {
      verb: verb as ManifestVerb,
      invocationId: positionals[0] as string,
      manifest: values.manifest as string,
    });
  } finally {
    runtime.done();
  }
}
