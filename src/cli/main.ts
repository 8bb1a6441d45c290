import { deliveryCommand, deliveryHelp } from './commands/delivery.js';
import { demoCommand, demoHelp } from './commands/demo.js';
import { flowCommand, flowHelp } from './commands/flow.js';
import { localCommand, localHelp } from './commands/local.js';
import { objectCommand, objectHelp } from './commands/object.js';
import { streamCommand, streamHelp } from './commands/stream.js';
import { EXIT, printDiagnostic, printResult, UsageError } from './io.js';

const HELP = `cutpoint — exactly-once delivery and publication on AWS that survives crashes,
timeouts and lost responses.

usage: cutpoint <command> [options]

commands:
${[demoHelp, localHelp, objectHelp, flowHelp, streamHelp, deliveryHelp].map((h) => h.replace(/^/gm, '  ')).join('\n\n')}

Every command honours CUTPOINT_FAULTS (e.g. "generation.commit.cas:lose-response") to
rehearse a fault at a named cut point locally. Results are JSON on stdout; diagnostics go
to stderr; exit 0 on success, 1 on failure, 2 on a usage error.`;

const COMMANDS: Record<string, (args: string[]) => Promise<unknown>> = {
  demo: demoCommand,
  local: localCommand,
  flow: flowCommand,
  object: objectCommand,
  stream: streamCommand,
  delivery: deliveryCommand,
};

/** Runs one command; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${HELP}\n`);
    return name ? EXIT.ok : EXIT.usage;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`cli.unknown_command: unknown command ${JSON.stringify(name)}; see cutpoint --help\n`);
    return EXIT.usage;
  }
  try {
    printResult(await command(args));
    return EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`cli.usage: ${error.message}\n`);
      return EXIT.usage;
    }
    printDiagnostic(error);
    return EXIT.failed;
  }
}
