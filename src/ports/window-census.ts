import type { TableRef } from '../domain/delivery/target-types.js';

/**
 * A read-only count of one window of a delivery target: how many rows it holds and how
 * many distinct keys among them. Not part of delivery (which proves its rows by receipts):
 * the game day's invariant check compares it before and after each drill, so a row
 * written twice or a window half-published shows up in what the target holds.
 */
export interface WindowCensusRequest {
  table: TableRef;
  timeColumn: string;
  keyColumns: readonly string[];
  window: { start: Date; end: Date };
}

export interface WindowCensus {
  rows: number;
  distinctKeys: number;
}

export interface WindowCensusPort {
  census(request: WindowCensusRequest): Promise<WindowCensus>;
  close(): Promise<void>;
}
