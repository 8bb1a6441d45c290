import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { echoedWithin, quoted } from '../domain/echo.js';
import { UsageError } from './io.js';

/**
 * The grammar errors every command shares (exit 2), each echoing what it was given as the
 * echo rule allows (src/domain/echo.ts): an option parser's refusal, an argument too many,
 * an unknown subcommand.
 */

/** `args` against `options` (strict); an unknown option, a missing value or a positional where none is taken is a usage error. */
export function parseOptions<O extends ParseArgsOptionsConfig>(args: string[], options: O, allowPositionals = true) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (error) {
    throw new UsageError(echoedWithin((error as Error).message));
  }
}

export function unexpectedArgument(arg: string | undefined): UsageError {
  return new UsageError(`unexpected argument ${quoted(arg ?? '')}`);
}

/** `unknown <command> subcommand "<verb>"`, then the command's help. */
export function unknownSubcommand(command: string, verb: string | undefined, help: string): UsageError {
  return new UsageError(`unknown ${command} subcommand ${quoted(verb ?? '')}\n${help}`);
}
