import { CutpointError } from '../../domain/errors.js';
import { echoed } from '../../domain/echo.js';
import { INPUT_LIMITS, readInputFile } from '../io.js';

/*
 * What the delivery commands (inspect and the live actions in delivery.ts, the run in
 * delivery-run.ts) and the quality commands report alike when a command cannot start or a
 * flow fails: one module, so the run, loaded only for `delivery run`, does not import its
 * dispatcher back.
 */

/** The manifest file named by --manifest cannot be read. Names the path, never content. */
export class ManifestUnavailableError extends CutpointError {
  constructor(file: string, reason: string) {
    super(
      'Delivery.ManifestUnavailable',
      'delivery.manifest_unavailable',
      `manifest ${echoed(file)} could not be read (${reason}); nothing was mutated`,
    );
  }
}

/** The text of the manifest file --manifest names, within its size bound; unreadable: ManifestUnavailableError. */
export async function readManifestFile(file: string): Promise<string> {
  try {
    return new TextDecoder().decode(await readInputFile(file, INPUT_LIMITS.manifest, 'manifest'));
  } catch (error) {
    throw new ManifestUnavailableError(file, (error as NodeJS.ErrnoException).code ?? 'unreadable');
  }
}

/** A Lambda error's Cause is JSON ({errorType, errorMessage, trace}); only the message leaves. */
export function causeMessage(cause: string): string {
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    if (typeof parsed.errorMessage === 'string') return parsed.errorMessage;
  } catch {
    // a plain-text cause (a Fail state's own)
  }
  return cause;
}
