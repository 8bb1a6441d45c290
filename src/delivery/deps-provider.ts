import { parseManifest, parseSelector, selectRoute } from '../domain/delivery/manifest.js';
import type { SelectedRoute } from '../domain/delivery/manifest-types.js';
import { ValidationError } from '../domain/errors.js';
import type { DeliveryDeps } from './deps.js';

/**
 * Deps for one deliver-window Task, from the Task's input. The manifest travels in the
 * execution input (`manifestText` + `selector`, the exact text begin seals) and the flow
 * hands both to every Task: no S3 round trip, and the sealed manifest digest is checked
 * against the journal by the steps themselves, so a Task cannot be pointed at another
 * route unnoticed (`delivery.route_mismatch`). A Lambda's providers are in
 * functions/lib/delivery-deps.ts; the CLI, the cost model and the tests build their own.
 */
export type DeliveryDepsProvider = (event: unknown) => Promise<DeliveryDeps>;

/** The route a Task input names: `{ manifestText, selector }` (`/path/route.yaml#daily`). */
export function routeOfEvent(event: unknown): SelectedRoute {
  const v = event as { manifestText?: unknown; selector?: unknown } | null;
  if (!v || typeof v !== 'object' || typeof v.manifestText !== 'string' || typeof v.selector !== 'string') {
    throw new ValidationError(
      'delivery.step_input_invalid',
      'a deliver-window Task needs manifestText and selector in its input',
    );
  }
  const selector = parseSelector(v.selector);
  return selectRoute(parseManifest(v.manifestText, selector.file), selector);
}
