/**
 * The bounded reader: a read-only worker run in its own process, so that a deadline can
 * end it for real (an in-process query cannot be stopped: an aborted chdb query keeps
 * computing in native code). The parent accepts exactly one result message carrying its
 * token while the result channel is open; on a deadline or an error it revokes the
 * channel first, then terminates the process and observes its exit within a bound.
 *
 * What the outcome claims is local only: `localTermination: 'VERIFIED'` means the process
 * (and everything holding its channel or pipes) is gone. Whether a query the worker sent
 * is still running on the server is not known here: `queryOutstanding` says a request may
 * have been in flight at revocation, and the caller prints `remote_termination: UNVERIFIED`.
 */

/** Structured error fields only: never a message text (it may carry values). */
export interface BoundedReadError {
  /** e.g. `WorkerFailed`, `WorkerLoadFailed`, `ReaderExited`, `SpawnFailed`, `ProtocolViolation`, or the worker's own class. */
  class: string;
  code?: string;
  type?: string;
}

/** How the reader process ended, as its parent observed it. */
export interface ReaderExit {
  code: number | null;
  signal: string | null;
}

export type BoundedReadOutcome<R = unknown> =
  | {
      kind: 'RESULT';
      results: R;
      localTermination: 'VERIFIED';
      pid: number;
      exit: ReaderExit;
    }
  | {
      kind: 'DEADLINE' | 'ERROR';
      error?: BoundedReadError;
      /** A request may have been in flight when the channel was revoked (remote termination is then UNVERIFIED). */
      queryOutstanding: boolean;
      localTermination: 'VERIFIED';
      /** Absent when no process was started (deadline already past, spawn failed). */
      pid?: number;
      exit?: ReaderExit;
    }
  | {
      kind: 'INCOMPLETE';
      /** The exit of the reader (or the closing of its pipes by every holder) was not observed within the bound. */
      reason: 'reap_unverified';
      /** What ended the read before termination was attempted; no result is returned either way. */
      interrupted: 'RESULT' | 'DEADLINE' | 'ERROR';
      queryOutstanding: boolean;
      localTermination: 'UNVERIFIED';
      pid: number;
      /** The reader process itself was seen to exit (something it started may still hold its pipes). */
      readerExited: boolean;
    };

export interface BoundedReadRequest {
  /** JSON input for the worker; travels over IPC only (never printed). */
  input: unknown;
  /** The owner token: only a result message echoing it is accepted. */
  token: string;
  /** Epoch milliseconds; the channel is revoked when the clock reaches it. */
  deadlineAt: number;
}

/** What a use case calls: one bounded read by the worker this reader was built for. */
export interface BoundedReader {
  read(request: BoundedReadRequest): Promise<BoundedReadOutcome>;
}

/**
 * The contract a worker module fulfils (it runs in the child process): `run` resolves with
 * JSON results once its reads are finished; `signal` aborts when the parent revokes the
 * channel. An optional `classify` maps a thrown error to structured fields (for instance
 * the ClickHouse classifier); without it the child reports the error's `name` and `code`.
 */
export interface BoundedReadWorker<I = unknown, R = unknown> {
  run(input: I, signal: AbortSignal): Promise<R>;
  classify?(error: unknown): BoundedReadError;
}
