import { CutpointError } from '../domain/errors.js';

/**
 * Raised for problems with the local emulator runtime that the user must fix on their
 * machine (missing JRE, port in use, emulator crashed on startup), as opposed to bugs.
 * A stable code (`local.runtime_failed` unless a more precise one applies), so the CLI
 * prints `<code>: <message>` without a stack trace.
 */
export class LocalRuntimeError extends CutpointError {
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super('LocalRuntimeError', options?.code ?? 'local.runtime_failed', message, options);
  }
}

/** A port the local runtime should listen on is taken (another clone's runtime, another program). */
export class LocalPortInUseError extends LocalRuntimeError {
  constructor(service: string, port: number, remedy: string) {
    super(
      `port ${port} for ${service} is already in use (another cutpoint clone's runtime or another program holds it); ${remedy}`,
      { code: 'local.port_in_use' },
    );
  }
}
