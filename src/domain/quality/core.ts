import { canonicalDigest } from '../digest.js';
import type { CapsuleDigests } from './capsule.js';
import { QualityRefusalError } from './errors.js';
import type { OriginalProbe } from './probes.js';

/**
 * The immutable core (docs/rules.md#immutable-core): sealed at PREPARE, never rewritten. Each component has
 * its own digest (with its own kind, so two components never collide) and the core digest
 * binds them with the operation's identity, the published generation and the seal. The
 * same functions recompute every digest for observe, replay and diagnose (N22).
 */

export const CORE_KIND = 'cutpoint.quality-core.v2';

/** policy: the route's `quality` block exactly as authored (after YAML parsing). */
export function policyDigest(qualityBlock: unknown): string {
  return canonicalDigest({ kind: 'cutpoint.quality-policy.v1', quality: qualityBlock });
}

export const OBSERVE_DEADLINE_MAX_S = 600;
export const REPLAY_WINDOW_MAX_DAYS = 35;
export const RETRY_MAX_ATTEMPTS = 3;
export const RETRY_MAX_ELAPSED_MS = 10_000;

/**
 * Read-only observation retry: off (the default), or exactly bounded for KEEPER_NO_NODE
 * (docs/rules.md#observation-failures).
 */
export type ObservationRetryPolicy =
  { kind: 'off' } | { kind: 'keeper_no_node'; maxAttempts: number; maxElapsedMs: number };

/** The effective plan: everything that decides admission, after defaults. */
export interface AdmissionPlan {
  probes: readonly OriginalProbe[];
  observeDeadlineSeconds: number;
  reapBoundMs: number;
  retry: ObservationRetryPolicy;
  replayWindowDays: number;
}

function refuse(message: string): never {
  throw new QualityRefusalError('quality.admission_invalid', message);
}

function assertIntIn(value: number, min: number, max: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < min || value > max)
    refuse(`${what} must be an integer in [${min}, ${max}]`);
}

export function admissionDigest(plan: AdmissionPlan): string {
  if (plan.probes.length === 0 || plan.probes.some((p) => p.required !== true)) {
    throw new QualityRefusalError('quality.required_cannot_degrade', 'every probe of the effective plan is required');
  }
  assertIntIn(plan.observeDeadlineSeconds, 1, OBSERVE_DEADLINE_MAX_S, 'observe deadline (s)');
  assertIntIn(plan.reapBoundMs, 1, 60_000, 'reap bound (ms)');
  assertIntIn(plan.replayWindowDays, 1, REPLAY_WINDOW_MAX_DAYS, 'replay window (days)');
  if (plan.retry.kind === 'keeper_no_node') {
    assertIntIn(plan.retry.maxAttempts, 1, RETRY_MAX_ATTEMPTS, 'retry max attempts');
    assertIntIn(plan.retry.maxElapsedMs, 1, RETRY_MAX_ELAPSED_MS, 'retry max elapsed (ms)');
  } else if (plan.retry.kind !== 'off') {
    refuse('retry policy must be off or keeper_no_node');
  }
  return canonicalDigest({
    kind: 'cutpoint.quality-admission.v1',
    probes: plan.probes,
    observeDeadlineSeconds: plan.observeDeadlineSeconds,
    reapBoundMs: plan.reapBoundMs,
    retry: plan.retry,
    replayWindowDays: plan.replayWindowDays,
  });
}

export interface InventoryColumn {
  name: string;
  type: string;
  /** 1-based, as system.columns prints it. */
  position: number;
}

/** The candidate as built: its columns (system.columns), engine, sorting key, and what was loaded into it. */
export interface Inventory {
  columns: readonly InventoryColumn[];
  engine: string;
  sortingKey: string;
  loadReceiptsDigest: string;
  totalRows: number;
}

export function inventoryDigest(inventory: Inventory): string {
  const columns = [...inventory.columns].sort((a, b) => a.position - b.position);
  columns.forEach((c, i) => {
    if (c.position !== i + 1) refuse('inventory column positions must be 1..n without gaps or repeats');
  });
  if (!Number.isSafeInteger(inventory.totalRows) || inventory.totalRows < 0)
    refuse('inventory total rows must be a non-negative integer');
  return canonicalDigest({
    kind: 'cutpoint.quality-inventory.v1',
    columns: columns.map((c) => ({ name: c.name, type: c.type, position: c.position })),
    engine: inventory.engine,
    sortingKey: inventory.sortingKey,
    loadReceiptsDigest: inventory.loadReceiptsDigest,
    totalRows: inventory.totalRows,
  });
}

export function probesDigest(probes: readonly OriginalProbe[]): string {
  return canonicalDigest({ kind: 'cutpoint.quality-probes.v1', probes });
}

/**
 * `DescribeTable` of the authority table at PREPARE (docs/rules.md#authority-binding).
 * `tableId` is null where the store has none (DynamoDB Local).
 */
export interface AuthorityBinding {
  tableArn: string;
  tableId: string | null;
  /** ISO-8601 instant. */
  creationDateTime: string;
}

/** CreationDateTime is digested as a normalized instant, so `…:00Z` and `…:00.000Z` seal the same table. */
export function authorityBindingDigest(binding: AuthorityBinding): string {
  const at = Date.parse(binding.creationDateTime);
  if (typeof binding.creationDateTime !== 'string' || Number.isNaN(at))
    refuse('authority binding creationDateTime must be an ISO-8601 instant');
  return canonicalDigest({
    kind: 'cutpoint.quality-authority-binding.v1',
    tableArn: binding.tableArn,
    tableId: binding.tableId ?? null,
    creationDateTime: new Date(at).toISOString(),
  });
}

export interface CoreIdentity {
  invocationId: string;
  route: string;
  targetId: string;
  candidateUuid: string;
  /** The delivery seal's digest (manifest, selector, target identity). */
  sealDigest: string;
}

export function immutableCoreDigest(identity: CoreIdentity, digests: CapsuleDigests): string {
  return canonicalDigest({
    kind: CORE_KIND,
    invocationId: identity.invocationId,
    route: identity.route,
    targetId: identity.targetId,
    policyDigest: digests.policy,
    admissionDigest: digests.admission,
    inventoryDigest: digests.inventory,
    generation: { candidateUuid: identity.candidateUuid },
    probesDigest: digests.probes,
    authorityBindingDigest: digests.authorityBinding,
    sealDigest: identity.sealDigest,
    capsuleSchema: 2,
  });
}

export interface CoreInputs extends CoreIdentity {
  qualityBlock: unknown;
  plan: AdmissionPlan;
  inventory: Inventory;
  authorityBinding: AuthorityBinding;
}

/** Every component digest and the core digest from the raw inputs: what PREPARE seals and replay recomputes. */
export function sealCore(inputs: CoreInputs): { coreDigest: string; digests: CapsuleDigests } {
  const digests: CapsuleDigests = {
    policy: policyDigest(inputs.qualityBlock),
    admission: admissionDigest(inputs.plan),
    inventory: inventoryDigest(inputs.inventory),
    probes: probesDigest(inputs.plan.probes),
    authorityBinding: authorityBindingDigest(inputs.authorityBinding),
  };
  return { coreDigest: immutableCoreDigest(inputs, digests), digests };
}
