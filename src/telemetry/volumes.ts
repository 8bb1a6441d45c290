/**
 * RowsDelivered/BytesDelivered and RecordsAppended/BytesAppended {Flow}: what one step made
 * visible, read from the step's own input and result (never from the use case). Counted
 * only by the call that did it: a retry that finds its work already journaled
 * (`acted: false`, no `headVersion`) counts nothing, so a metric never counts twice what
 * the store holds once (it may miss a rare lost-response commit that a later read proved).
 */

export interface Volume {
  flow: string;
  /** Rows delivered or records appended. */
  count: number;
  bytes?: number;
  kind: 'delivered' | 'appended';
}

/** The steps whose result makes data visible, and the flow they count for. */
export const VOLUME_STEP_FLOWS: Readonly<Record<string, string>> = {
  DeliveryPublish: 'deliver-window',
  PublicationDispatch: 'publish-clickhouse',
  StreamCommitHead: 'stream-append',
};

const nat = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
const obj = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;

/**
 * A delivery step's result that moved the journal to PUBLISHED (`acted: true`): the rows of
 * its publication fact (SQL receipt) or of its candidate (ClickHouse exchange), the bytes
 * of the verified parts it published.
 */
function delivered(flow: string, result: unknown): Volume | undefined {
  const out = obj(result);
  if (out?.state !== 'PUBLISHED' || out.acted !== true) return undefined;
  const facts = obj(obj(obj(out.known)?.invocation)?.facts);
  const rows = nat(obj(facts?.publication)?.rows) ?? nat(obj(facts?.candidate)?.rows);
  if (rows === undefined) return undefined;
  const bytes = nat(obj(facts?.parts)?.bytes);
  return { flow, count: rows, kind: 'delivered', ...(bytes !== undefined ? { bytes } : {}) };
}

/** A head CAS this call applied (KNOWN_COMMITTED with the new head version): its records and the WAL object's bytes. */
function appended(flow: string, event: unknown, result: unknown): Volume | undefined {
  const out = obj(result);
  if (out?.status !== 'KNOWN_COMMITTED' || nat(out.headVersion) === undefined) return undefined;
  const records = nat(out.recordCount);
  if (records === undefined) return undefined;
  const bytes = nat(obj(obj(event)?.wal)?.walSize);
  return { flow, count: records, kind: 'appended', ...(bytes !== undefined ? { bytes } : {}) };
}

export function volumeOf(step: string, event: unknown, result: unknown): Volume | undefined {
  const flow = VOLUME_STEP_FLOWS[step];
  if (flow === undefined) return undefined;
  return step === 'StreamCommitHead' ? appended(flow, event, result) : delivered(flow, result);
}
