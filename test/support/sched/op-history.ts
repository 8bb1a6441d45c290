/**
 * A schedule's history of client operations, as Jepsen records one: each operation is an
 * `invoke` by a process, later completed by `ok` (it took effect, with its result), `fail`
 * (it certainly did not) or `info` (unknown: it may have, at any time after its invoke).
 * Only one actor moves at a time under the scheduler, so the order operations are recorded
 * in is their real-time order: `index` orders them.
 */
export type OpType = 'invoke' | 'ok' | 'fail' | 'info';

export interface Op<V = unknown> {
  index: number;
  process: string;
  type: OpType;
  /** The operation's function: append, resolve, read, … */
  f: string;
  value: V;
}

/** An operation invoked and not yet completed: complete it exactly once. */
export interface Pending {
  readonly invoke: Op;
  ok(value: unknown): void;
  fail(value: unknown): void;
  info(value: unknown): void;
}

export class OpHistory {
  readonly ops: Op[] = [];

  invoke(process: string, f: string, value: unknown): Pending {
    const invoke = this.add(process, 'invoke', f, value);
    let done = false;
    const complete = (type: Exclude<OpType, 'invoke'>) => (result: unknown) => {
      if (done) throw new Error(`history bug: ${f} by ${process} (op ${invoke.index}) completed twice`);
      done = true;
      this.add(process, type, f, result);
    };
    return { invoke, ok: complete('ok'), fail: complete('fail'), info: complete('info') };
  }

  /** Each invoke with its completion (undefined while none came), in invoke order. */
  pairs(f?: string): Array<{ invoke: Op; completion?: Op }> {
    const open = new Map<string, { invoke: Op; completion?: Op }>();
    const out: Array<{ invoke: Op; completion?: Op }> = [];
    for (const op of this.ops) {
      if (op.type === 'invoke') {
        const pair = { invoke: op };
        open.set(op.process, pair);
        if (f === undefined || op.f === f) out.push(pair);
      } else {
        const pair = open.get(op.process);
        if (pair) pair.completion = op;
        open.delete(op.process);
      }
    }
    return out;
  }

  private add(process: string, type: OpType, f: string, value: unknown): Op {
    const op: Op = { index: this.ops.length, process, type, f, value };
    this.ops.push(op);
    return op;
  }
}
