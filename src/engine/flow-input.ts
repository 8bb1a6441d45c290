import { quoted } from '../domain/echo.js';
import { ValidationError } from '../domain/errors.js';
import type * as z from 'zod';
import { flowInputCap, flowInputSpec, RECOVERY_ENVELOPE } from './flow-input-fields.js';
import { fieldsSchema, recoveredFields, RecoveryEnvelopeSchema } from './flow-input-schema.js';

/**
 * The one check of a flow's execution input (docs/deploy.md "Flow inputs"), made by `cutpoint
 * flow run` before anything runs and by every flow's first Task (`firstTaskInput`) before
 * anything is written — so a start from the console, `aws stepfunctions start-execution`
 * or an EventBridge rule is held to it too. Refused with Cutpoint.ValidationError:
 * - an input that is not a JSON object: `flow.input_not_object`;
 * - an own field the flow does not read (FLOW_INPUTS), `constructor` and `__proto__`
 *   included: `flow.input_unknown_field`, naming it;
 * - more than the flow's cap (64 KiB, or Step Functions' 256 KiB for a `bulk` input) as
 *   compact JSON in UTF-8: `flow.input_too_large`;
 * - for a flow that recovers others, a `{recoveryOf, originalInput}` whose recoveryOf is not
 *   a string or whose originalInput is not the JSON text of an object:
 *   `flow.recovery_input_invalid`; the original's fields are checked against the
 *   recovered flows' fields (`flow.input_unknown_field`).
 */
export function assertFlowInput(flow: string, input: unknown): void {
  const spec = flowInputSpec(flow);
  if (!spec) throw new ValidationError('flow.unknown_flow', `no flow ${quoted(flow)} declares its input fields`);
  const given = objectOf(flow, input, 'its execution input');
  const recovery = spec.recovers !== undefined && Object.hasOwn(given, 'recoveryOf');
  const shape = (recovery ? RecoveryEnvelopeSchema : fieldsSchema(spec.fields)).safeParse(ownFields(given));
  refuseUnknownFields(flow, shape, recovery ? RECOVERY_ENVELOPE : spec.fields);
  const bytes = Buffer.byteLength(JSON.stringify(input));
  const cap = flowInputCap(spec);
  if (bytes > cap) {
    throw new ValidationError(
      'flow.input_too_large',
      `${flow}'s execution input is ${bytes} bytes of JSON; it may be at most ${cap} (${cap / 1024} KiB); nothing was written`,
    );
  }
  if (!recovery) return;
  const original = originalOf(flow, given, shape);
  const fields = recoveredFields(spec);
  refuseUnknownFields(flow, fieldsSchema(fields).safeParse(original), fields);
}

/**
 * A flow's first Task's input: its Parameters add `flow` (the flow's name, a literal) and
 * `executionInput` (`$$.Execution.Input`, the context object's copy of the execution input,
 * whatever states ran before) to the step's own `input` where it passes one. The
 * execution input is checked against that flow's fields (assertFlowInput); the step's own
 * input is returned: the Task's `input`, or else the execution input itself (a Task whose
 * state is still the execution input takes it from the context, not twice; for a recovery
 * start, the original input the flow's first states unwrap). A Task that
 * passes no `flow` or `executionInput` is refused: every run of that flow fails loudly
 * rather than running unchecked.
 */
export function firstTaskInput(event: unknown): unknown {
  const task = (typeof event === 'object' && event !== null ? event : {}) as {
    flow?: unknown;
    executionInput?: unknown;
    input?: unknown;
  };
  if (typeof task.flow !== 'string' || !Object.hasOwn(task, 'executionInput')) {
    throw new ValidationError(
      'flow.first_task_invalid',
      "a flow's first Task passes its flow's name (flow) and $$.Execution.Input (executionInput); this one does not",
    );
  }
  assertFlowInput(task.flow, task.executionInput);
  if (Object.hasOwn(task, 'input')) return task.input;
  // A recovery start's state, once the flow unwrapped it, is the original input (checked above).
  const given = task.executionInput as Record<string, unknown>;
  return Object.hasOwn(given, 'recoveryOf') ? JSON.parse(given.originalInput as string) : given;
}

/**
 * A delivery step's deps provider behind the first Task's check: the execution input is
 * refused before the provider parses the manifest or reads a secret. The step gets its
 * Task input as the flow passes it (its own fields, `flow` and `executionInput` besides).
 */
export function executionInputFirst<D>(provider: (event: unknown) => Promise<D>): (event: unknown) => Promise<D> {
  return async (event) => {
    firstTaskInput(event);
    return provider(event);
  };
}

function objectOf(flow: string, value: unknown, what: string): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
  throw new ValidationError(
    'flow.input_not_object',
    `${flow}: ${what} must be a JSON object, not ${kind}; nothing was written`,
  );
}

/** A copy of the own fields: what an object inherits is not its input (the schema would read it). */
const ownFields = (given: Record<string, unknown>) => Object.fromEntries(Object.entries(given));

/**
 * The schema's unknown field, the first one named. Own keys only: a JSON `constructor` or
 * `__proto__` is a field like any other, and no flow reads one.
 */
function refuseUnknownFields(flow: string, result: z.ZodSafeParseResult<unknown>, fields: readonly string[]): void {
  const issue = result.error?.issues.find((i) => i.code === 'unrecognized_keys');
  const unknown = issue?.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  if (unknown === undefined) return;
  throw new ValidationError(
    'flow.input_unknown_field',
    `${flow} reads no input field ${quoted(unknown)} (its fields: ${fields.join(', ')}); nothing was written`,
  );
}

/** A recovery start's original input, once RecoveryEnvelopeSchema found its two fields well typed. */
function originalOf(
  flow: string,
  envelope: Record<string, unknown>,
  shape: z.ZodSafeParseResult<unknown>,
): Record<string, unknown> {
  const invalid = (why: string) =>
    new ValidationError('flow.recovery_input_invalid', `${flow}: a recovery start's ${why}; nothing was written`);
  const wrong = new Set(shape.error?.issues.map((i) => i.path[0]));
  if (wrong.has('recoveryOf')) throw invalid('recoveryOf must name the failed execution (a string)');
  if (wrong.has('originalInput')) throw invalid("originalInput must be the failed execution's input as JSON text");
  const originalInput = envelope.originalInput as string;
  let original: unknown;
  try {
    original = JSON.parse(originalInput);
  } catch {
    throw invalid('originalInput is not JSON text');
  }
  return objectOf(flow, original, "a recovery start's original input");
}
