import { parseArgs } from 'node:util';
import { inspectAllQuality, inspectQuality } from '../../quality/inspect.js';
import { UsageError } from '../io.js';
import { targetOf } from './stream/target.js';

export const qualityHelp = `cutpoint quality inspect-all [--format json] [--aws]
  every ClickHouse publication under quality governance (seed 000) with its journal
  state, capsule state, target_commit and governance axes, diagnostic_code and
  permitted_actions, plus retained_custody_count (every journal record holding custody)
  and retained_governance_count (capsules not COMPLETE, held reader guards, capsules
  that cannot be read): both must be 0 before an uninstall, a rollback or an authority
  switch. Read-only; a journal that breaks its own invariants exits 1
  (delivery.recovery_journal_inconsistent)
cutpoint quality inspect <invocation-id> [--format json] [--aws]
  one operation's quality governance (cutpoint.quality-governance.v1): both outcome axes
  (a successful publication is not successful governance), the capsule's evidence as
  classified (missing, malformed or unreadable evidence is never a pass), the reader
  guard (held since, by which run; never its token), digests (never a UUID or a value)
  and the permitted_actions. Read-only
there is no force, clear-guard, skip-quality or redispatch command or option: a held
reader guard follows the quiescence procedure of the runbook, and failed or missing
evidence is preserved and escalated. Reads the journal in the local runtime, or with
--aws the deployed authority table (CUTPOINT_TABLE_NAME, CUTPOINT_BUCKET_NAME)`;

const OPTIONS = { aws: { type: 'boolean' }, faults: { type: 'string' }, format: { type: 'string' } } as const;
const VERBS = ['inspect', 'inspect-all'] as const;

/**
 * `cutpoint quality …` — the read-only operator surface. The whole grammar is checked
 * before anything is opened (exit 2 wins over exit 1); no spelling of a force, clear,
 * skip or redispatch parses (unknown subcommand or option: exit 2).
 */
export async function qualityCommand(args: string[]): Promise<unknown> {
  const [verb, ...rest] = args;
  const known = VERBS.find((v) => v === verb);
  if (!known) throw new UsageError(`unknown quality subcommand ${JSON.stringify(verb ?? '')}\n${qualityHelp}`);
  const { values, positionals } = parse(rest);
  if (values.format !== undefined && values.format !== 'json') throw new UsageError('--format accepts only json');
  if (known === 'inspect-all') {
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  } else {
    if (positionals[0] === undefined) throw new UsageError(`quality inspect needs an <invocation-id>\n${qualityHelp}`);
    if (positionals.length > 1) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[1])}`);
  }
  const target = targetOf(values);
  try {
    const ports = await target.ports();
    return known === 'inspect-all' ? await inspectAllQuality(ports) : await inspectQuality(ports, positionals[0]);
  } finally {
    target.done();
  }
}

function parse(args: string[]) {
  try {
    return parseArgs({ args, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
