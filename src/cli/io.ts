import { diagnosticOf } from '../domain/errors.js';

/** Exit codes every operator command shares (DESIGN.md, "Outputs, errors, exit codes"). */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Argument grammar errors: exit 2, before anything runs. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** One JSON document on stdout: the command's result. */
export function printResult(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

/** Human-readable progress on stderr; stdout stays machine-readable. */
export function progress(message: string): void {
  process.stderr.write(`cutpoint: ${message}\n`);
}

/** A stable diagnostic code and a short message on stderr; never a stack or a secret. */
export function printDiagnostic(error: unknown): void {
  const d = diagnosticOf(error);
  process.stderr.write(`${d.code}: ${d.message}\n`);
}
