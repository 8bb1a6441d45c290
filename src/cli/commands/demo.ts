import { ownEntry } from '../../domain/own-entry.js';
import { quoted } from '../../domain/echo.js';
import { UsageError } from '../io.js';
import { unexpectedArgument } from '../grammar.js';

export const demoHelp = `cutpoint demo [delivery]   (npm start)
  starts throw-away local components (DynamoDB Local, the S3 emulator, embedded
  ClickHouse and embedded PostgreSQL), seeds 3 days of synthetic events, delivers the last
  closed day with every publication COMMIT response lost, so the run stops in
  PUBLICATION_UNKNOWN; then inspect → reconcile → resume (source-free) to
  CUSTODY_RELEASED. Stdout: one JSON document with each step's projection and the
  outcome (every window row exactly once, checkpoint advanced once); progress on stderr
cutpoint demo generation
  the generation-commit flow with a lost response at the commit CAS (override with
  CUTPOINT_FAULTS): recovery reloads the exact winner; prints the JSON outcome
cutpoint demo quality
  a ClickHouse publication (publish-clickhouse, one EXCHANGE) on throw-away local components
  (DynamoDB Local, the S3 emulator, chdb in its own process behind HTTP) whose EXCHANGE
  answer is lost → reconcile proves it by table UUID → an observation overruns its deadline
  (TARGET_PENDING, guard released, remote termination UNVERIFIED) → a later observation →
  COMPLETE → resume to CUSTODY_RELEASED → the replay receipt. Stdout: one JSON document
  with each step's command and projection and the outcome (every window row exactly once,
  one dispatch, replay changed nothing); progress on stderr`;

/** Each demo's module loads only when it runs (they start every local component). */
const DEMOS: Record<string, () => Promise<unknown>> = {
  delivery: async () => (await import('../../demo/delivery-demo.js')).deliveryDemo(),
  generation: async () => (await import('../../demo/generation-demo.js')).generationDemo(),
  quality: async () => (await import('../../demo/quality-demo.js')).qualityDemo(),
};

/** `cutpoint demo [delivery|generation|quality]`. */
export async function demoCommand(args: string[]): Promise<unknown> {
  const [name = 'delivery', ...extra] = args;
  const demo = ownEntry(DEMOS, name);
  if (!demo) throw new UsageError(`unknown demo ${quoted(name)}\n${demoHelp}`);
  if (extra.length) throw unexpectedArgument(extra[0]);
  return demo();
}
