import { deliveryDemo } from '../../demo/delivery-demo.js';
import { generationDemo } from '../../demo/generation-demo.js';
import { UsageError } from '../io.js';

export const demoHelp = `cutpoint demo [delivery]   (npm start)
  starts throw-away local components (DynamoDB Local, the S3 emulator, embedded
  ClickHouse and embedded PostgreSQL), seeds 3 days of synthetic events, delivers the last
  closed day with every publication COMMIT response lost, so the run stops in
  PUBLICATION_UNKNOWN; then inspect → reconcile → resume (source-free) to
  CUSTODY_RELEASED. Stdout: one JSON document with each step's projection and the
  outcome (every window row exactly once, checkpoint advanced once); progress on stderr
cutpoint demo generation
  the generation-commit flow with a lost response at the commit CAS (override with
  CUTPOINT_FAULTS): recovery reloads the exact winner; prints the JSON outcome`;

const DEMOS: Record<string, () => Promise<unknown>> = { delivery: deliveryDemo, generation: generationDemo };

/** `cutpoint demo [delivery|generation]`. */
export async function demoCommand(args: string[]): Promise<unknown> {
  const [name = 'delivery', ...extra] = args;
  const demo = DEMOS[name];
  if (!demo) throw new UsageError(`unknown demo ${JSON.stringify(name)}\n${demoHelp}`);
  if (extra.length) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  return demo();
}
