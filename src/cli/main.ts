import { readFileSync } from 'node:fs';
import { CutpointError, escapeControlCharacters } from '../domain/errors.js';
import { quoted } from '../domain/echo.js';
import { ownEntry } from '../domain/own-entry.js';
import { OUTPUT_FORMATS, type OutputFormat } from './format.js';
import { hasSubcommand, subcommandHelp, TOP_HELP } from './help.js';
import { EXIT, printDiagnostic, printResult, printUsageError, setOutputFormat, UsageError } from './io.js';
import { unexpectedArgument } from './grammar.js';
import { setCliProcess } from '../telemetry/process-role.js';
import { isRuntimeMissing } from '../adapters/local-engines.js';

/**
 * The CLI's front: help, --version, --format and the grammar shared by every command are
 * decided here from light modules; a command's module (and the drivers it needs) is
 * loaded only when that command runs or shows its own help.
 */

interface CommandModule {
  run: (args: string[]) => Promise<unknown>;
  help: string;
}

export const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  demo: async () => {
    const m = await import('./commands/demo.js');
    return { run: m.demoCommand, help: m.demoHelp };
  },
  local: async () => {
    const m = await import('./commands/local.js');
    return { run: m.localCommand, help: m.localHelp };
  },
  flow: async () => {
    const m = await import('./commands/flow.js');
    return { run: m.flowCommand, help: m.flowHelp };
  },
  object: async () => {
    const m = await import('./commands/object.js');
    return { run: m.objectCommand, help: m.objectHelp };
  },
  stream: async () => {
    const m = await import('./commands/stream.js');
    return { run: m.streamCommand, help: m.streamHelp };
  },
  delivery: async () => {
    const m = await import('./commands/delivery.js');
    return { run: m.deliveryCommand, help: m.deliveryHelp };
  },
  quality: async () => {
    const m = await import('./commands/quality.js');
    return { run: m.qualityCommand, help: m.qualityHelp };
  },
  faults: async () => {
    const m = await import('./commands/faults.js');
    return { run: m.faultsCommand, help: m.faultsHelp };
  },
  gameday: async () => {
    const m = await import('./commands/gameday.js');
    return { run: m.gamedayCommand, help: m.gamedayHelp };
  },
  cost: async () => {
    const m = await import('./commands/cost.js');
    return { run: m.costCommand, help: m.costHelp };
  },
};

/** `cutpoint --help`: the table of commands (each command's own help: `cutpoint <command> --help`). */
export const HELP = TOP_HELP;

/** Every command's help text, in the table's order (loads every command module). */
export async function allHelp(): Promise<string> {
  const helps = await Promise.all(Object.values(COMMANDS).map(async (load) => (await load()).help));
  return helps.join('\n\n');
}

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

/**
 * `--format json|text` (every command's output format), taken out of the arguments before
 * the command sees them. `stream append` took its input format as `--format lines|raw`
 * before: that spelling is refused naming `--input-format`.
 */
export function outputFormatOf(command: string, args: readonly string[]): { format: OutputFormat; rest: string[] } {
  const rest: string[] = [];
  let format: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      rest.push(...args.slice(i));
      break;
    }
    if (arg === '--format' || arg.startsWith('--format=')) {
      const value = arg === '--format' ? args[++i] : arg.slice('--format='.length);
      if (value === undefined || value === '' || value.startsWith('--'))
        throw new UsageError('--format needs json or text');
      format = value;
    } else rest.push(arg);
  }
  if (format === undefined) return { format: 'json', rest };
  if ((OUTPUT_FORMATS as readonly string[]).includes(format)) return { format: format as OutputFormat, rest };
  if (command === 'stream' && rest[0] === 'append' && (format === 'lines' || format === 'raw')) {
    throw new UsageError(
      `--format is the output format (json or text); stream append takes its input format as --input-format ${format}`,
    );
  }
  throw new UsageError(`--format must be json or text, got ${quoted(format)}`);
}

/** The value of `--name VALUE` / `--name=VALUE` before a `--`, if given. */
function optionValue(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') return undefined;
    if (arg === `--${name}`) return args[i + 1];
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return undefined;
}

/**
 * `--faults SPEC` is part of the command line: a spec that does not parse, or names a cut
 * point or kind that does not exist, is a usage error (exit 2) naming the fault code.
 * (CUTPOINT_FAULTS, from the environment, stays a refusal: exit 1.)
 */
async function checkFaultsOption(args: readonly string[]): Promise<void> {
  const spec = optionValue(args, 'faults');
  if (spec === undefined || spec.trim() === '') return;
  const { parseFaultSpec } = await import('../domain/faults.js');
  const { CUT_POINT_NAMES } = await import('../cut-points.js');
  try {
    parseFaultSpec(spec.trim(), CUT_POINT_NAMES);
  } catch (error) {
    if (error instanceof CutpointError) throw new UsageError(`--faults: ${error.code}: ${error.message}`);
    throw error;
  }
}

/** `cutpoint --version`: the package, the Node running it and which build (one line unless --format json). */
function version(args: readonly string[]): Record<string, string> {
  const given = outputFormatOf('', args);
  const format = args.some((a) => a === '--format' || a.startsWith('--format=')) ? given.format : 'text';
  const { rest } = given;
  if (rest.length) throw unexpectedArgument(rest[0]);
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
    engines?: { node?: string };
  };
  // The bundle of `npm run build` (dist/cli/), or the TypeScript sources through tsx.
  const build = import.meta.url.endsWith('.ts') ? 'source' : 'bundle';
  const info = { cutpoint: pkg.version, node: process.version, engines: pkg.engines?.node ?? '', build };
  process.stdout.write(
    format === 'json'
      ? `${JSON.stringify(info, null, 2)}\n`
      : `cutpoint ${info.cutpoint} (node ${info.node}, needs ${info.engines}; ${build})\n`,
  );
  return info;
}

/** The help of `command` or of its subcommand `sub` (ignored when it names none). */
async function helpOf(command: string, load: () => Promise<CommandModule>, sub: string | undefined): Promise<string> {
  const { help } = await load();
  return sub !== undefined && hasSubcommand(command, sub) ? subcommandHelp(command, sub, help) : help;
}

/** `cutpoint help [<command> [<sub>]]`. */
async function help(args: readonly string[]): Promise<number> {
  const [command, sub, ...extra] = args;
  if (command === undefined) {
    process.stdout.write(`${HELP}\n`);
    return EXIT.ok;
  }
  const load = ownEntry(COMMANDS, command);
  if (!load) return unknownCommand(command);
  if (extra.length) throw unexpectedArgument(extra[0]);
  if (sub !== undefined && !hasSubcommand(command, sub))
    throw new UsageError(`unknown ${command} subcommand ${quoted(sub)}; see cutpoint ${command} --help`);
  process.stdout.write(`${await helpOf(command, load, sub)}\n`);
  return EXIT.ok;
}

function unknownCommand(name: string): number {
  process.stderr.write(
    `cli.unknown_command: unknown command ${escapeControlCharacters(quoted(name))}; see cutpoint --help\n`,
  );
  return EXIT.usage;
}

/** Runs one command; returns the process exit code: 0 success, 1 refused or failed, 2 usage error. */
export async function main(argv: string[]): Promise<number> {
  setOutputFormat('json');
  const [name, ...args] = argv;
  // Bare `cutpoint` is a usage error: the help goes to stderr, stdout stays empty.
  if (name === undefined) {
    process.stderr.write(`${HELP}\n`);
    return EXIT.usage;
  }
  const helps: string[] = [];
  // stdout carries the command's document only: never Lambda telemetry (src/telemetry/process-role.ts).
  setCliProcess(true);
  try {
    if (name === '--help' || name === '-h') {
      process.stdout.write(`${HELP}\n`);
      return EXIT.ok;
    }
    if (name === '--version') {
      version(args);
      return EXIT.ok;
    }
    if (name === 'help') return await help(args);
    const load = ownEntry(COMMANDS, name);
    if (!load) return unknownCommand(name);
    // Decided here, before any command parses or touches anything: help acts on nothing.
    if (asksForHelp(args)) {
      process.stdout.write(`${await helpOf(name, load, args[0])}\n`);
      return EXIT.ok;
    }
    const repeated = repeatedOption(args);
    if (repeated !== undefined) throw new UsageError(`--${repeated} is given more than once`);
    const { format, rest } = outputFormatOf(name, args);
    await checkFaultsOption(rest);
    setOutputFormat(format);
    const command = await load();
    helps.push(command.help);
    printResult(await command.run(rest));
    return EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError) {
      printUsageError(error, helps);
      return EXIT.usage;
    }
    printDiagnostic(error);
    // The local runtime is not installed (src/adapters/local-engines.ts): nothing ran.
    return isRuntimeMissing(error) ? EXIT.usage : EXIT.failed;
  } finally {
    setOutputFormat('json');
    setCliProcess(false);
  }
}
