import { ValidationError } from '../../domain/errors.js';
import { MAX_BATCH_BYTES } from '../../domain/stream.js';

/**
 * The group-commit producer's knobs (WarpStream-like):
 * - lingerMs: how long the first waiting batch may wait for others to join its group;
 * - maxBytes: a group's WAL bytes at most (framing included; at most MAX_BATCH_BYTES);
 * - maxRecords: a group's records at most;
 * - maxInFlight: groups appended at once (back-pressure). Above 1 only over an append
 *   that keeps head CASes in order (LaneWriter: pipelinedProducer); through appendBatch
 *   concurrent groups race for the head and may commit out of order.
 */
export interface ProducerKnobs {
  lingerMs: number;
  maxBytes: number;
  maxRecords: number;
  maxInFlight: number;
}

export const DEFAULT_KNOBS: ProducerKnobs = { lingerMs: 2, maxBytes: 1024 * 1024, maxRecords: 10_000, maxInFlight: 1 };

/** WAL framing (src/domain/record-batch.ts): a 7-byte magic line, then a 4-byte length per record. */
export const BATCH_HEADER_BYTES = 7;
export const RECORD_FRAME_BYTES = 4;

const LIMITS: Record<keyof ProducerKnobs, [min: number, max: number]> = {
  lingerMs: [0, 60_000],
  maxBytes: [BATCH_HEADER_BYTES + RECORD_FRAME_BYTES, MAX_BATCH_BYTES],
  maxRecords: [1, 1_000_000],
  maxInFlight: [1, 64],
};

/** Every knob an integer in its range, else `stream.producer_invalid_knob` (nothing is started). */
export function validateKnobs(input: Partial<ProducerKnobs> = {}): ProducerKnobs {
  const knobs = { ...DEFAULT_KNOBS };
  for (const name of Object.keys(LIMITS) as Array<keyof ProducerKnobs>) {
    const value = input[name];
    if (value === undefined) continue;
    const [min, max] = LIMITS[name];
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      throw new ValidationError(
        'stream.producer_invalid_knob',
        `${name} must be an integer in [${min}, ${max}], got ${JSON.stringify(value)}`,
      );
    }
    knobs[name] = value;
  }
  return knobs;
}
