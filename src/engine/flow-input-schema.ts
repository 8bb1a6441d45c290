import * as z from 'zod';
import { FLOW_INPUTS, RECOVERY_ENVELOPE, type FlowInputSpec } from './flow-input-fields.js';

/**
 * Each flow's execution input as a zod schema, built from FLOW_INPUTS (the one table of
 * the fields a flow reads): assertFlowInput (flow-input.ts) checks an input through it, and
 * `npm run schemas` writes it as schemas/flow-inputs/<flow>.schema.json. A field's value is
 * the flow's own to judge (its first Task's use case); the schema holds the field names.
 */

/** An object carrying only these fields, each optional. */
export function fieldsSchema(fields: readonly string[]) {
  return z.strictObject(Object.fromEntries(fields.map((field) => [field, z.unknown().optional()])));
}

/** A recovery start: the failed execution and its input as JSON text (src/recovery/dispatch.ts). */
export const RecoveryEnvelopeSchema = z.strictObject({
  [RECOVERY_ENVELOPE[0]]: z.string().min(1),
  [RECOVERY_ENVELOPE[1]]: z.string().meta({ contentMediaType: 'application/json' }),
});

/** The fields an original input may carry: those of the flows this one recovers. */
export function recoveredFields(spec: FlowInputSpec): readonly string[] {
  return [...new Set((spec.recovers ?? []).flatMap((flow) => FLOW_INPUTS[flow]?.fields ?? []))];
}

/** A flow's whole execution input: its fields, or for a flow that recovers others, a recovery start too. */
export function flowInputSchema(flow: string, spec: FlowInputSpec): z.ZodType {
  const own = fieldsSchema(spec.fields);
  const schema = spec.recovers ? z.union([own, RecoveryEnvelopeSchema]) : own;
  return schema.meta({ title: `${flow} execution input`, description: 'docs/deploy.md "Flow inputs"' });
}
