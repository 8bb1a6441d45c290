import * as z from 'zod';
import { ManifestSchema } from '../../domain/delivery/manifest-schema.js';
import { FLOW_INPUTS } from '../../engine/flow-input-fields.js';
import { flowInputSchema } from '../../engine/flow-input-schema.js';

/**
 * The JSON Schemas `npm run schemas` writes, each from the zod schema the code validates
 * with: schemas/manifest.schema.json (a route manifest; editors read it through
 * `# yaml-language-server: $schema=…`) and schemas/flow-inputs/<flow>.schema.json (each
 * flow's execution input). test/unit/schemas-drift.test.ts holds the files to this.
 */

export const MANIFEST_SCHEMA_PATH = 'schemas/manifest.schema.json';

const render = (schema: z.ZodType): string =>
  `${JSON.stringify(z.toJSONSchema(schema, { target: 'draft-7', io: 'input' }), null, 2)}\n`;

/** Repository path → file text. */
export function schemaFiles(): Map<string, string> {
  const files = new Map([[MANIFEST_SCHEMA_PATH, render(ManifestSchema)]]);
  for (const [flow, spec] of Object.entries(FLOW_INPUTS)) {
    files.set(`schemas/flow-inputs/${flow}.schema.json`, render(flowInputSchema(flow, spec)));
  }
  return files;
}
