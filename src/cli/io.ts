import { echoedWithin } from '../domain/echo.js';
import { diagnosticOf, escapeControlCharacters } from '../domain/errors.js';
import { redact } from '../domain/redact.js';
import { renderResult, type OutputFormat } from './format.js';

export { readInputBytes, readInputFile, readJsonInput, readStdin, INPUT_LIMITS, type InputSource } from './input.js';

/** Exit codes every operator command shares (docs/operate.md, "Errors and outputs"). */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Argument grammar errors: exit 2, before anything runs. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * What a command returns when it wrote its own stdout as it went (`stream consume`: JSON
 * lines, one per record): nothing more is printed.
 */
export const STREAMED: unique symbol = Symbol('streamed');

let outputFormat: OutputFormat = 'json';

/** The `--format` of the command running now (main sets it before the command runs). */
export function setOutputFormat(format: OutputFormat): void {
  outputFormat = format;
}

/**
 * The command's result on stdout in the `--format` given: one JSON document (default), or
 * readable text. Also what a command prints before it exits 1 short of its goal.
 */
export function printResult(result: unknown): void {
  if (result === STREAMED) return;
  process.stdout.write(`${renderResult(result, outputFormat)}\n`);
}

/** Human-readable progress on stderr; stdout stays machine-readable. */
export function progress(message: string): void {
  process.stderr.write(`cutpoint: ${escapeControlCharacters(message, { keepNewlines: true })}\n`);
}

/**
 * A stable diagnostic code and a short message on stderr; never a stack or a secret. One
 * line: control characters an argument carried (ESC, CR, LF, …) are escaped, so no input
 * can forge a second diagnostic or drive the terminal; no echoed run of characters is
 * longer than the echo rule allows (src/domain/echo.ts), whichever message carried it; and
 * the one redactor (src/domain/redact.ts) takes out credentials and where internal
 * endpoints listen (a driver's `connect ECONNREFUSED 127.0.0.1:8123` in a flow's cause).
 */
export function printDiagnostic(error: unknown): void {
  const d = diagnosticOf(error);
  process.stderr.write(`${d.code}: ${echoedWithin(redact(d.message))}\n`);
}

/**
 * A usage error (exit 2): the message escaped to one line, then the command's help text
 * (ours, printed as is) when the message ends with one of `helps`.
 */
export function printUsageError(error: UsageError, helps: readonly string[]): void {
  const help = helps.find((h) => error.message === h || error.message.endsWith(`\n${h}`));
  const head =
    help === undefined ? error.message : error.message.slice(0, Math.max(0, error.message.length - help.length - 1));
  process.stderr.write(
    `cli.usage: ${head === '' ? 'see the usage below' : escapeControlCharacters(echoedWithin(head))}\n${help === undefined ? '' : `${help}\n`}`,
  );
}
