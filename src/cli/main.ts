import { costCommand, costHelp } from './commands/cost.js';
import { deliveryCommand, deliveryHelp } from './commands/delivery.js';
import { demoCommand, demoHelp } from './commands/demo.js';
import { faultsCommand, faultsHelp } from './commands/faults.js';
import { flowCommand, flowHelp } from './commands/flow.js';
import { localCommand, localHelp } from './commands/local.js';
import { objectCommand, objectHelp } from './commands/object.js';
import { qualityCommand, qualityHelp } from './commands/quality.js';
import { streamCommand, streamHelp } from './commands/stream.js';
import { escapeControlCharacters } from '../domain/errors.js';
import { EXIT, printDiagnostic, printResult, printUsageError, UsageError } from './io.js';

interface Command {
  run: (args: string[]) => Promise<unknown>;
  help: string;
}

const COMMANDS: Record<string, Command> = {
  demo: { run: demoCommand, help: demoHelp },
  local: { run: localCommand, help: localHelp },
  flow: { run: flowCommand, help: flowHelp },
  object: { run: objectCommand, help: objectHelp },
  stream: { run: streamCommand, help: streamHelp },
  delivery: { run: deliveryCommand, help: deliveryHelp },
  quality: { run: qualityCommand, help: qualityHelp },
  faults: { run: faultsCommand, help: faultsHelp },
  cost: { run: costCommand, help: costHelp },
};

export const HELP = `cutpoint — exactly-once delivery and publication on AWS that survives crashes,
timeouts and lost responses.

usage: cutpoint <command> [options]      cutpoint <command> --help

commands:
${Object.values(COMMANDS)
  .map((c) => c.help.replace(/^/gm, '  '))
  .join('\n\n')}

Every command honours CUTPOINT_FAULTS (e.g. "generation.commit.cas:lose-response") to
rehearse a fault at a named cut point locally (\`cutpoint faults list\` names them all).
Results are JSON on stdout; diagnostics go to stderr; exit 0 on success, 1 on failure, 2
on a usage error. --help (or -h) anywhere prints the command's help and does nothing else.`;

/** `--help`/`-h` among the arguments (before a `--` that ends the options). */
function asksForHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}

/**
 * An option given twice (`--from 0 --from 2`): refused rather than letting the last one
 * win silently. No option of any command may repeat.
 */
function repeatedOption(args: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const arg of args) {
    if (arg === '--') return undefined;
    if (!arg.startsWith('--')) continue;
    const name = arg.slice(2).split('=')[0] as string;
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

/** Runs one command; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    // `cutpoint help <command>` is that command's help.
    const topic = name === 'help' && args[0] !== undefined ? COMMANDS[args[0]] : undefined;
    process.stdout.write(`${topic?.help ?? HELP}\n`);
    return name ? EXIT.ok : EXIT.usage;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`cli.unknown_command: unknown command ${escapeControlCharacters(JSON.stringify(name))}; see cutpoint --help\n`);
    return EXIT.usage;
  }
  // Decided here, before any command parses or touches anything: help acts on nothing.
  if (asksForHelp(args)) {
    process.stdout.write(`${command.help}\n`);
    return EXIT.ok;
  }
  try {
    const repeated = repeatedOption(args);
    if (repeated !== undefined) throw new UsageError(`--${repeated} is given more than once`);
    printResult(await command.run(args));
    return EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError) {
      printUsageError(error, Object.values(COMMANDS).map((c) => c.help));
      return EXIT.usage;
    }
    printDiagnostic(error);
    return EXIT.failed;
  }
}
