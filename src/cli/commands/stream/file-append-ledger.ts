import { CutpointError } from '../../../domain/errors.js';
import type { LaneRef } from '../../../domain/stream.js';
import { RECORD_FRAME_BYTES } from '../../../stream/producer/knobs.js';
import type { GroupReport } from '../../../stream/producer/group-producer.js';
import { resolveCommand } from './outcomes.js';

/** Committed offsets [start, end) and the file lines (1-based, inclusive) they hold. */
export interface CommittedRange {
  start: number;
  end: number;
  firstLine: number;
  lastLine: number;
}

export interface FileAppendSummary extends LaneRef {
  file: string;
  outcome: 'KNOWN_COMMITTED';
  records: number;
  bytes: number;
  groups: number;
  /** The groups' attempt ids are `<attemptPrefix>-g0` … `-g<groups - 1>`. */
  attemptPrefix: string;
  firstOffset: number;
  lastOffset: number;
  /** Contiguous committed ranges (one, unless another appender of this session wrote in between). */
  ranges: CommittedRange[];
}

interface Stop {
  group: GroupReport;
  firstLine: number;
  lastLine: number;
}

/**
 * What a file append did, group by group in order: which lines committed at which
 * offsets, and — if it stopped — the group that did not commit and the lines never sent.
 */
export class FileAppendLedger {
  private readonly ranges: CommittedRange[] = [];
  private linesDone = 0;
  private records = 0;
  private bytes = 0;
  private groups = 0;
  private stop: Stop | undefined;
  private readonly startedAt = performance.now();

  constructor(
    private readonly lane: LaneRef,
    private readonly file: string,
    private readonly attemptPrefix: string,
    private readonly total: { records: number; bytes: number },
  ) {}

  get stopped(): boolean {
    return this.stop !== undefined;
  }

  /** One group's end, in sequence order (the file's producer runs one group at a time). */
  record(group: GroupReport): void {
    if (group.sequence !== this.groups + (this.stop ? 1 : 0)) {
      throw new CutpointError(
        'Stream.ProducerInconsistent',
        'stream.producer_inconsistent',
        `group ${group.attemptId} ended out of order`,
      );
    }
    const firstLine = this.linesDone + 1;
    const lastLine = this.linesDone + group.records;
    this.linesDone = lastLine;
    if (group.outcome !== 'KNOWN_COMMITTED' || group.start === undefined || group.end === undefined) {
      this.stop ??= { group, firstLine, lastLine };
      return;
    }
    this.groups++;
    this.records += group.records;
    this.bytes += group.bytes - RECORD_FRAME_BYTES * group.records;
    const last = this.ranges.at(-1);
    if (last && last.end === group.start) {
      last.end = group.end;
      last.lastLine = lastLine;
    } else {
      this.ranges.push({ start: group.start, end: group.end, firstLine, lastLine });
    }
  }

  progressLine(): string {
    const seconds = (performance.now() - this.startedAt) / 1000;
    const rate = seconds > 0 ? Math.round(this.records / seconds) : 0;
    return `appended ${this.records}/${this.total.records} records (${mib(this.bytes)}/${mib(this.total.bytes)} MiB) in ${this.groups} groups, ${rate} records/s`;
  }

  summary(): FileAppendSummary {
    const first = this.ranges[0];
    const last = this.ranges.at(-1);
    if (!first || !last || this.records !== this.total.records) {
      throw new CutpointError(
        'Stream.ProducerInconsistent',
        'stream.producer_inconsistent',
        `${this.records} of ${this.total.records} records committed, without a failed group`,
      );
    }
    return {
      ...this.lane,
      file: this.file,
      outcome: 'KNOWN_COMMITTED',
      records: this.records,
      bytes: this.bytes,
      groups: this.groups,
      attemptPrefix: this.attemptPrefix,
      firstOffset: first.start,
      lastOffset: last.end - 1,
      ranges: this.ranges.map((r) => ({ ...r })),
    };
  }

  /**
   * The refusal of a file that stopped part-way: exactly which lines committed (and at which
   * offsets), which group did not (and how to settle it), and which lines were never sent.
   */
  failure(readError: unknown, aws: boolean): CutpointError {
    const parts: string[] = [this.committedText()];
    const stop = this.stop;
    let name = 'Stream.NotCommitted';
    let code = 'stream.not_committed';
    // An attempt outside the lane's attempt window: neither a resolve nor a new --attempt is
    // advice (past the window the lines may have committed long ago; the error says where to look).
    let outsideWindow = false;
    if (stop) {
      const lines = lineSpan(stop.firstLine, stop.lastLine);
      const { attemptId, outcome, error } = stop.group;
      if (outcome === 'MAY_HAVE_COMMITTED') {
        name = 'Stream.MayHaveCommitted';
        code = 'stream.may_have_committed';
        parts.push(
          `${lines} (attempt ${attemptId}) may have committed: the lane is suspended until you run: ${resolveCommand(this.lane, attemptId, aws)}`,
        );
      } else if (outcome === 'KNOWN_NOT_COMMITTED') {
        parts.push(`${lines} (attempt ${attemptId}) did not commit`);
      } else {
        if (!(error instanceof CutpointError)) return error as CutpointError; // a bug: surfaces as itself
        name = error.name;
        code = error.code;
        outsideWindow = OUTSIDE_WINDOW.has(error.name);
        if (outsideWindow) parts.push(`${lines} (attempt ${attemptId}) refused: ${error.message}`);
        else
          parts.push(
            `${lines} (attempt ${attemptId}) failed (${error.message}); settle that attempt with: ${resolveCommand(this.lane, attemptId, aws)}`,
          );
      }
    } else if (readError !== undefined) {
      if (!(readError instanceof CutpointError)) return readError as CutpointError;
      name = readError.name;
      code = readError.code;
      parts.push(`reading the file stopped after line ${this.linesDone}: ${readError.message}`);
    }
    if (this.linesDone < this.total.records)
      parts.push(`${lineSpan(this.linesDone + 1, this.total.records)} were not sent`);
    if (outsideWindow) return new CutpointError(name, code, `${this.file}: ${parts.join('; ')}`);
    const resume = (this.ranges.at(-1)?.lastLine ?? 0) + 1;
    const fromLine = (line: number) => `the lines from ${line} on (tail -n +${line} FILE)`;
    parts.push(
      stop?.group.outcome === 'MAY_HAVE_COMMITTED'
        ? `then append with a new --attempt ${fromLine(stop.lastLine + 1)} if the resolve reports it committed, else ${fromLine(resume)}`
        : `append ${fromLine(resume)} with a new --attempt`,
    );
    return new CutpointError(name, code, `${this.file}: ${parts.join('; ')}`);
  }

  private committedText(): string {
    if (!this.ranges.length) return 'no line committed';
    const spans = this.ranges.map((r) => `${lineSpan(r.firstLine, r.lastLine)} at offsets [${r.start}, ${r.end})`);
    return `${spans.join(', ')} committed (${this.groups} groups, attempts ${this.attemptPrefix}-g0…g${this.groups - 1})`;
  }
}

/** Refusals of a time-marked attempt outside the lane's attempt window (src/domain/attempt-time.ts). */
const OUTSIDE_WINDOW = new Set(['Stream.AttemptExpired', 'Stream.AttemptTimeFuture']);

function lineSpan(first: number, last: number): string {
  return first === last ? `line ${first}` : `lines ${first}–${last}`;
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
