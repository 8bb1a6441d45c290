/**
 * Raised for problems with the local emulator runtime that the user must fix
 * on their machine (missing JRE, port in use, emulator crashed on startup), as
 * opposed to bugs. The CLI can print `message` as-is, without a stack trace.
 */
export class LocalRuntimeError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LocalRuntimeError';
  }
}
