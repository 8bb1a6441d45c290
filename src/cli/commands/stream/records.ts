import { ValidationError } from '../../../domain/errors.js';
import { INPUT_LIMITS, progress, readInputBytes } from '../../io.js';

export type RecordFormat = 'lines' | 'raw';

/**
 * The records of one append, from `--file F` or stdin. `lines`: each LF-terminated line is
 * one record, its bytes as given minus the LF (a final line without LF counts too);
 * `raw`: the whole input is one record. Empty input is refused before anything runs.
 */
export async function readRecords(file: string | undefined, format: RecordFormat): Promise<Uint8Array[]> {
  if (file === undefined && process.stdin.isTTY) progress('reading records from stdin, one per line (end with Ctrl-D)');
  const bytes = await readInputBytes(file, INPUT_LIMITS.records, 'append records');
  if (bytes.byteLength === 0) throw new ValidationError('stream.empty_batch', 'no records: the input is empty');
  if (format === 'raw') return [bytes];
  const records: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < bytes.byteLength; i++) {
    if (bytes[i] === 0x0a) {
      records.push(bytes.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < bytes.byteLength) records.push(bytes.subarray(start));
  return records;
}

/** Step Functions caps an execution's input at 256 KiB; the local runner keeps the same cap. */
export const MAX_FLOW_INPUT_BYTES = 256 * 1024;

export function assertFlowInputFits(input: unknown): void {
  const size = Buffer.byteLength(JSON.stringify(input));
  if (size > MAX_FLOW_INPUT_BYTES) {
    throw new ValidationError(
      'stream.batch_too_large',
      `the append's flow input is ${size} bytes (records travel base64-encoded); a state machine input may be at most ${MAX_FLOW_INPUT_BYTES}: split the records over several appends`,
    );
  }
}
