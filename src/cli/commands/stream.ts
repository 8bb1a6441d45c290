import { parseAttemptWindow } from '../../domain/attempt-time.js';
import { CutpointError } from '../../domain/errors.js';
import { ownEntry } from '../../domain/own-entry.js';
import { validateLane, type AppendOutcome, type LaneRef } from '../../domain/stream.js';
import { createStream } from '../../stream/create-stream.js';
import { describeStream } from '../../stream/describe.js';
import { MAX_READ_RECORDS, readStream } from '../../stream/read.js';
import { quoted } from '../../domain/echo.js';
import { UsageError } from '../io.js';
import { parseOptions, unexpectedArgument, unknownSubcommand } from '../grammar.js';
import { AWS_OPTIONS } from '../aws-runtime.js';
import { activeSession } from '../session-store.js';
import { takeover } from './stream/takeover.js';
import { CURSOR_HANDLERS, cursorHelp } from './stream/consume.js';
import { appendFromFile, checkFileAppend, FILE_APPEND_OPTIONS } from './stream/append-file-command.js';
import { executionName } from './stream/execution-name.js';
import { COMPACT_HANDLERS, compactHelp } from './stream/compact.js';
import { checkGc, gc, gcHelp, leases } from './stream/gc.js';
import { MATERIALIZE_HANDLERS, materializeHelp } from './stream/materialize.js';
import { QUARANTINE_HANDLERS, quarantineHelp } from './stream/quarantine.js';
import { attemptOf, integer, integerIn } from './stream/options.js';
import { checkResolve, resolveAttemptCommand, resolveWriterCommand } from './stream/resolve.js';
import { appendResult, failedFlowError, isRejection, resolveCommand } from './stream/outcomes.js';
import { assertFlowInputFits, readRecords, type RecordFormat } from './stream/records.js';
import { freshNameHint, runtimeOf, type Runtime } from './stream/runtime.js';

export const streamHelp = `cutpoint stream create <stream> --partitions N [--attempt-window 7d]
  creates the stream's lanes (re-running it reports existing lanes, never resets them);
  the attempt window (1h..365d, default 7d) is how long a time-marked attempt id
  (a segment t<unix ms>, e.g. orders.t1765100000000) may be re-run: older ones are refused
cutpoint stream takeover <stream> --partition P [--owner NAME]
  a new owner session with a higher epoch; the CLI keeps it in .cutpoint/sessions/ for
  later appends (prints owner and epoch, never the session id)
cutpoint stream append <stream> --partition P --attempt ID [--file F | stdin]
  [--input-format lines|raw]
  appends one batch, one record per line (raw: the whole input is one record) under the
  attempt id; exit 0 KNOWN_COMMITTED, exit 1 KNOWN_NOT_COMMITTED (append again with a new
  attempt) or MAY_HAVE_COMMITTED (the lane is suspended: resolve this same attempt)
cutpoint stream append <stream> --partition P --attempt ID --from FILE.jsonl
  [--max-records N] [--max-bytes N]
  streams a JSON Lines file (one record per line, checked whole before anything is
  written) through the group-commit producer: groups of at most N records / N bytes, one
  WAL object and one head CAS each, attempts ID-g0, ID-g1 …; progress on stderr, one
  summary on stdout. A re-run with the same ID and knobs finds the committed groups again
  (nothing twice); a group that does not commit stops the file and the refusal names
  exactly which lines committed at which offsets, and which did not
cutpoint stream resolve <stream> --partition P --attempt ID
  settles a MAY_HAVE_COMMITTED attempt (committed or proven not) and lifts the suspension
cutpoint stream resolve <stream> --partition P --writer WRITER
  settles every attempt of a LaneWriter that died holding the lane (the writer that
  stream.lane_suspended and stream describe name), prints each one's outcome
  (KNOWN_COMMITTED with its range, or KNOWN_NOT_COMMITTED: append those records again),
  then releases the lane; an interrupted run is run again the same way
cutpoint stream read <stream> --partition P --from OFFSET [--max-records N] [--text]
  committed records from OFFSET, each checksum-verified (data base64; --text adds UTF-8);
  \`next\` is where to read on, never past the committed end: OFFSET at the end returns no
  records (next = OFFSET), past it is refused (stream.offset_out_of_range)
cutpoint stream describe <stream> [--partitions N]
  every lane's committed end, trim offset, attempt window, owner epoch and suspension
cutpoint stream trim <stream> --partition P --to OFFSET
  makes offsets below OFFSET unreadable (their bytes become collectable); refused past
  a cursor the stream's retention policy names (stream.trim_past_cursor)
${cursorHelp}
${gcHelp}
${quarantineHelp}
${compactHelp}
${materializeHelp}
every stream command takes --faults SPEC (or CUTPOINT_FAULTS) to rehearse a cut point on
the local runtime, and --aws to act on the deployed system: takeover, append, resolve,
trim, gc, materialize and compact then start the deployed state machine (--state-machine-arn
ARN, else CUTPOINT_STREAM_TAKEOVER_ARN, _APPEND_ARN, _RESOLVE_APPEND_ARN, _TRIM_ARN, _GC_ARN,
_MATERIALIZE_ARN, _COMPACT_ARN, else the stacks' <Flow>StateMachineArn outputs) under an execution name derived from the command's identity,
so a re-run finds the same execution (gc, materialize, compact: a fresh name per run, each a
fresh look at the lane; --name overrides it);
create, read and describe use CUTPOINT_TABLE_NAME and CUTPOINT_BUCKET_NAME`;

type Options = Record<string, { type: 'string' | 'boolean' }>;

const COMMON: Options = { ...AWS_OPTIONS, faults: { type: 'string' } };
const FLOW: Options = { 'state-machine-arn': { type: 'string' }, name: { type: 'string' } };

type Values = Record<string, string | boolean | undefined>;

export async function streamCommand(args: string[]): Promise<unknown> {
  const [verb, ...rest] = args;
  // Own entries only: `stream __proto__` or `stream constructor` is an unknown subcommand.
  const handler = ownEntry(HANDLERS, verb);
  if (!verb || !handler) throw unknownSubcommand('stream', verb, streamHelp);
  const { values, positionals } = parseOptions(rest, { ...COMMON, ...handler.options });
  const [stream, ...extra] = positionals;
  if (!stream) throw new UsageError(`stream ${verb} needs a <stream>\n${streamHelp}`);
  if (extra.length) throw unexpectedArgument(extra[0]);
  // The whole grammar is checked before anything is touched (exit 2 wins over exit 1).
  const lane = 'partition' in handler.options ? laneOf(stream, values) : undefined;
  handler.check?.(values);
  const request = { stream, lane: lane as LaneRef, values };
  const runtime = runtimeOf(values, handler.flowOf ? handler.flowOf(values) : handler.flow);
  try {
    return await handler.run(runtime, request);
  } finally {
    runtime.done();
  }
}

interface Request {
  stream: string;
  /** Set for every verb that takes --partition. */
  lane: LaneRef;
  values: Values;
}

interface Handler {
  /** The verb's options besides --aws and --faults (parseArgs, strict). */
  options: Options;
  /** Grammar checks beyond parseArgs (UsageError, exit 2), before anything is touched. */
  check?: (values: Values) => void;
  /** The flow the command starts (on AWS: the deployed state machine). */
  flow?: string;
  /** Where the flow depends on the options (`flow` otherwise). */
  flowOf?: (values: Values) => string | undefined;
  run: (runtime: Runtime, request: Request) => Promise<unknown>;
}

const HANDLERS: Record<string, Handler> = {
  create: {
    options: { partitions: { type: 'string' }, 'attempt-window': { type: 'string' } },
    check: checkCreate,
    run: (t, r) => create(t, r.stream, r.values),
  },
  takeover: {
    options: { partition: { type: 'string' }, owner: { type: 'string' }, ...FLOW },
    flow: 'stream-takeover',
    run: (t, r) => takeover(t, r.lane, r.values),
  },
  append: {
    options: {
      partition: { type: 'string' },
      attempt: { type: 'string' },
      file: { type: 'string' },
      'input-format': { type: 'string' },
      ...FILE_APPEND_OPTIONS,
      ...FLOW,
    },
    flow: 'stream-append',
    // --from runs the producer in-process (the library append): no state machine to name.
    flowOf: (v) => (v.from === undefined ? 'stream-append' : undefined),
    check: (v) => (v.from === undefined ? checkAppend(v) : checkFileAppend(v, attemptOf(v))),
    run: (t, r) =>
      r.values.from === undefined
        ? append(t, r.lane, r.values)
        : appendFromFile(t, r.lane, r.values, attemptOf(r.values)),
  },
  resolve: {
    options: { partition: { type: 'string' }, attempt: { type: 'string' }, writer: { type: 'string' }, ...FLOW },
    flow: 'stream-resolve-append',
    check: checkResolve,
    run: (t, r) =>
      r.values.writer === undefined
        ? resolveAttemptCommand(t, r.lane, r.values)
        : resolveWriterCommand(t, r.lane, r.values),
  },
  read: {
    options: {
      partition: { type: 'string' },
      from: { type: 'string' },
      'max-records': { type: 'string' },
      text: { type: 'boolean' },
    },
    check: checkRead,
    run: (t, r) => read(t, r.lane, r.values),
  },
  describe: {
    options: { partitions: { type: 'string' } },
    check: (v) => v.partitions !== undefined && integer(v, 'partitions'),
    run: (t, r) => describe(t, r.stream, r.values),
  },
  trim: {
    options: { partition: { type: 'string' }, to: { type: 'string' }, ...FLOW },
    flow: 'stream-trim',
    check: (v) => integer(v, 'to'),
    run: (t, r) => trim(t, r.lane, r.values),
  },
  ...CURSOR_HANDLERS,
  gc: {
    options: { partition: { type: 'string' }, grace: { type: 'string' }, 'dry-run': { type: 'boolean' }, ...FLOW },
    flow: 'stream-gc',
    check: checkGc,
    run: (t, r) => gc(t, r.lane, r.values),
  },
  leases: {
    options: { partition: { type: 'string' } },
    run: (t, r) => leases(t, r.lane),
  },
  ...QUARANTINE_HANDLERS,
  ...COMPACT_HANDLERS,
  ...MATERIALIZE_HANDLERS,
};

/** `--attempt-window` is a duration with its unit in range, or a grammar error (exit 2), before anything is touched. */
function checkCreate(values: Values): void {
  integer(values, 'partitions');
  const window = values['attempt-window'];
  if (window === undefined) return;
  try {
    parseAttemptWindow(window);
  } catch (error) {
    throw new UsageError(`--attempt-window: ${(error as Error).message}, got ${quoted(String(window))}`);
  }
}

async function create(runtime: Runtime, stream: string, values: Values): Promise<unknown> {
  const partitions = integer(values, 'partitions');
  const attemptWindow = values['attempt-window'];
  return createStream(
    { stream, partitions, ...(attemptWindow !== undefined && { attemptWindow }) },
    await runtime.ports(),
  );
}

function checkAppend(values: Values): void {
  attemptOf(values);
  for (const name of ['max-records', 'max-bytes'])
    if (values[name] !== undefined) throw new UsageError(`--${name} needs --from FILE.jsonl`);
  const input = values['input-format'];
  if (input !== undefined && input !== 'lines' && input !== 'raw')
    throw new UsageError(`--input-format must be lines or raw, got ${quoted(input as string)}`);
}

async function append(runtime: Runtime, lane: LaneRef, values: Values): Promise<unknown> {
  const attemptId = attemptOf(values);
  const aws = runtime.kind === 'aws';
  const format = (values['input-format'] ?? 'lines') as RecordFormat;
  const fence = await activeSession(lane, runtime.kind);
  const records = await readRecords(typeof values.file === 'string' ? values.file : undefined, format);
  const input = { ...lane, attemptId, session: fence, records: records.map((r) => Buffer.from(r).toString('base64')) };
  assertFlowInputFits(input);
  const run = await runtime
    .run('stream-append', executionName('append', lane.stream, lane.partition, attemptId), input)
    .catch((error: unknown) => {
      // A lost response of the Express start: only this attempt's identity can settle it.
      if (error instanceof CutpointError && error.code === 'flow.start_unknown') {
        throw new CutpointError(
          error.name,
          error.code,
          `${error.message}: re-run it with the same --attempt ${attemptId}, or run: ${resolveCommand(lane, attemptId, aws)} (never a new attempt for these records)`,
        );
      }
      throw error;
    });
  if (run.status !== 'SUCCEEDED') {
    // Rejected before anything changed; any other failure may have left the attempt
    // anywhere up to the head CAS: only its own identity can settle it.
    throw failedFlowError(
      run,
      isRejection(run)
        ? undefined
        : `the outcome of attempt ${attemptId} is unknown to this command: re-run it with the same --attempt, or run: ${resolveCommand(lane, attemptId, aws)} (never a new attempt for these records)`,
    );
  }
  return appendResult(run.output as AppendOutcome, lane, attemptId, aws);
}

/** --max-records out of the read's range is the command line's error (exit 2), like every knob's range. */
function checkRead(values: Values): void {
  integer(values, 'from');
  if (values['max-records'] !== undefined) integerIn(values, 'max-records', 1, MAX_READ_RECORDS);
}

async function read(runtime: Runtime, lane: LaneRef, values: Values): Promise<unknown> {
  const input = {
    ...lane,
    from: integer(values, 'from'),
    ...(values['max-records'] !== undefined && { maxRecords: integerIn(values, 'max-records', 1, MAX_READ_RECORDS) }),
  };
  const result = await readStream(input, await runtime.ports());
  if (!values.text) return result;
  return {
    ...result,
    records: result.records.map((r) => ({ ...r, text: Buffer.from(r.data, 'base64').toString('utf8') })),
  };
}

async function describe(runtime: Runtime, stream: string, values: Values): Promise<unknown> {
  return describeStream(
    { stream, ...(values.partitions !== undefined && { partitions: integer(values, 'partitions') }) },
    await runtime.ports(),
  );
}

/** The stream-trim flow, deployed or local: a monotonic CAS of the trim offset; the same target again is success. */
async function trim(runtime: Runtime, lane: LaneRef, values: Values): Promise<unknown> {
  const to = integer(values, 'to');
  const run = await runtime.run('stream-trim', executionName('trim', lane.stream, lane.partition, to), { ...lane, to });
  if (run.status !== 'SUCCEEDED') throw failedFlowError(run, freshNameHint(runtime));
  return run.output;
}

function laneOf(stream: string, values: Values): LaneRef {
  return validateLane({ stream, partition: integer(values, 'partition') });
}
