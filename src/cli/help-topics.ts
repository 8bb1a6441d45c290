/**
 * What the help shows besides each command's own help text (which stays beside its
 * command): the one-line summary of every command, every subcommand's examples, and the
 * one-line description of every option. Plain data, no imports: `cutpoint --help`,
 * `cutpoint <command> <sub> --help` and a refused command read it without loading any
 * command module.
 */

export interface CommandTopic {
  /** One line in `cutpoint --help`. */
  summary: string;
  /** Subcommand → 1-3 examples, each a complete command line. */
  subcommands: Record<string, readonly string[]>;
  /** Options the usage lines leave to the notes: `*` every subcommand's, else one's. */
  options?: Record<string, readonly string[]>;
}

export const TOPICS: Record<string, CommandTopic> = {
  demo: {
    summary: 'a self-contained demo on throw-away local components (npm start)',
    subcommands: {
      delivery: ['cutpoint demo', 'cutpoint demo delivery --format text'],
      generation: ['cutpoint demo generation', 'CUTPOINT_FAULTS=generation.commit.cas:fail cutpoint demo generation'],
      quality: ['cutpoint demo quality'],
    },
  },
  local: {
    summary: 'start, stop and show the local runtime (DynamoDB Local, the S3 emulator)',
    subcommands: {
      up: ['cutpoint local up', 'cutpoint local up --dynamodb-port 18000 --s3-port 14566'],
      down: ['cutpoint local down'],
      status: ['cutpoint local status', 'cutpoint local status --format text'],
    },
  },
  flow: {
    summary: 'run one state machine (statemachines/<flow>.asl.json) locally or on AWS',
    subcommands: {
      run: [
        'cutpoint flow run commit-generation --input @input.json',
        'cutpoint flow run stream-trim --input \'{"stream":"orders","partition":0,"to":10}\' --faults stream.trim.cas:lose-response',
        'cutpoint flow run stream-trim --input @input.json --aws --profile ops --region eu-west-1 --name trim-orders-0-10',
      ],
    },
  },
  object: {
    summary: 'store and read immutable objects with their SHA-256',
    subcommands: {
      put: [
        'cutpoint object put reports/2026-12-01.csv --file report.csv',
        'gzip -c report.csv | cutpoint object put reports/2026-12-01.csv.gz',
      ],
      get: ['cutpoint object get reports/2026-12-01.csv --sha256 HEX'],
    },
  },
  stream: {
    summary: 'the stream log: create, append, read, consume, trim, compact, collect',
    subcommands: {
      create: [
        'cutpoint stream create orders --partitions 4',
        'cutpoint stream create orders --partitions 4 --attempt-window 2d',
      ],
      takeover: [
        'cutpoint stream takeover orders --partition 0',
        'cutpoint stream takeover orders --partition 0 --owner ingest@host-a',
      ],
      append: [
        'cutpoint stream append orders --partition 0 --attempt a1 --file batch.txt',
        'printf "one\\ntwo\\n" | cutpoint stream append orders --partition 0 --attempt a2',
        'cutpoint stream append orders --partition 0 --attempt load-7 --from events.jsonl --max-records 500',
      ],
      resolve: [
        'cutpoint stream resolve orders --partition 0 --attempt a1',
        'cutpoint stream resolve orders --partition 0 --writer 3f9c1a7e',
      ],
      read: [
        'cutpoint stream read orders --partition 0 --from 0 --max-records 10 --text',
        'cutpoint stream read orders --partition 0 --from 0 --format text',
      ],
      describe: ['cutpoint stream describe orders', 'cutpoint stream describe orders --format text'],
      trim: ['cutpoint stream trim orders --partition 0 --to 1000'],
      consume: [
        'cutpoint stream consume orders --partition 0 --group billing --max 100 --text',
        'cutpoint stream consume orders --partition 0 --group billing --follow',
      ],
      cursors: ['cutpoint stream cursors orders --partition 0 --format text'],
      seek: ['cutpoint stream seek orders --partition 0 --group billing --to 500 --yes'],
      policy: ['cutpoint stream policy orders --groups billing,audit', 'cutpoint stream policy orders --groups ""'],
      gc: ['cutpoint stream gc orders --partition 0 --dry-run', 'cutpoint stream gc orders --partition 0 --grace 6h'],
      leases: ['cutpoint stream leases orders --partition 0'],
      quarantine: [
        'cutpoint stream quarantine orders --partition 0',
        'cutpoint stream quarantine orders --partition 0 --release KEY',
      ],
      compact: [
        'cutpoint stream compact orders --partition 0',
        'cutpoint stream compact orders --partition 0 --max-ranges 8 --aws',
      ],
      materialize: ['cutpoint stream materialize orders --partition 0 --max 32'],
    },
    options: Object.fromEntries([
      ['*', ['--aws', '--faults']],
      ...['takeover', 'append', 'resolve', 'trim', 'gc', 'compact', 'materialize'].map((s) => [
        s,
        ['--state-machine-arn', '--name'],
      ]),
    ]),
  },
  delivery: {
    summary: 'run a delivery route; inspect and recover its invocations (docs/runbook)',
    subcommands: {
      run: [
        'cutpoint delivery run --manifest route.yaml#daily',
        'cutpoint delivery run --manifest route.yaml#daily --aws',
      ],
      'inspect-all': [
        'cutpoint delivery inspect-all',
        'cutpoint delivery inspect-all --target TARGET_ID --format text',
      ],
      inspect: ['cutpoint delivery inspect inv-ID', 'cutpoint delivery inspect inv-ID --format text'],
      reconcile: ['cutpoint delivery reconcile inv-ID --manifest route.yaml#daily --yes'],
      resume: ['cutpoint delivery resume inv-ID --manifest route.yaml#daily --yes'],
      retire: ['cutpoint delivery retire inv-ID --manifest route.yaml#daily --yes'],
      expire: [
        'cutpoint delivery expire --retention-days 7 --dry-run',
        'cutpoint delivery expire --retention-days 30 --aws',
      ],
    },
    options: {
      '*': ['--aws', '--faults'],
      run: ['--state-machine-arn'],
      reconcile: ['--state-machine-arn', '--name'],
      resume: ['--state-machine-arn', '--name'],
      retire: ['--state-machine-arn', '--name'],
      expire: ['--retention-days', '--dry-run', '--state-machine-arn', '--name'],
    },
  },
  quality: {
    summary: 'ClickHouse publication quality governance: inspect, diagnose, observe, replay',
    subcommands: {
      'inspect-all': ['cutpoint quality inspect-all', 'cutpoint quality inspect-all --aws --format text'],
      inspect: ['cutpoint quality inspect inv-ID'],
      diagnose: ['cutpoint quality diagnose inv-ID --manifest publish.yaml#daily'],
      observe: ['cutpoint quality observe inv-ID --manifest publish.yaml#daily --yes'],
      replay: ['cutpoint quality replay inv-ID --manifest publish.yaml#daily'],
    },
    options: { '*': ['--faults'], observe: ['--state-machine-arn', '--name'] },
  },
  faults: {
    summary: 'list the cut points CUTPOINT_FAULTS (or --faults) may name',
    subcommands: {
      list: ['cutpoint faults list', 'cutpoint faults list --format text'],
    },
  },
  gameday: {
    summary: 'arm every cut point of a flow in turn, recover each, and check the invariants',
    subcommands: {},
  },
  cost: {
    summary: 'what one delivered window and one appended batch cost on AWS, measured locally',
    subcommands: {},
  },
};

/**
 * One line per option, looked up as `<command> <sub> --opt`, then `<command> --opt`, then
 * `--opt`. The label is what the usage line shows.
 */
export const OPTION_TEXT: Record<string, string> = {
  '--format': '--format json|text    the result on stdout: JSON (default) or readable text',
  '--help': '--help, -h            this help; runs nothing',
  '--aws': '--aws                 act on the deployed system instead of the local runtime',
  '--profile': '--profile NAME        with --aws: the AWS profile (else AWS_PROFILE, else default)',
  '--region':
    "--region R            with --aws: the one region every client uses (else AWS_REGION, AWS_DEFAULT_REGION, the profile's)",
  '--stack': '--stack A,B           with --aws: the stacks whose outputs name the table, bucket and state machines',
  '--stage': "--stage NAME          with --aws: that stage's stacks (CutpointStateful-NAME, CutpointWorkflows-NAME)",
  '--faults': '--faults SPEC         rehearse a fault at a cut point locally (see cutpoint faults list)',
  '--state-machine-arn':
    '--state-machine-arn ARN  with --aws: the deployed state machine (else CUTPOINT_<FLOW>_ARN, else the stack output)',
  '--name': '--name NAME           with --aws: the execution name (else derived from the command)',
  '--manifest': '--manifest FILE#ROUTE  the route manifest and the route in it',
  '--yes': '--yes                 confirm a live action',
  '--partition': '--partition P         the lane (partition number)',
  '--partitions': '--partitions N        number of lanes',
  '--attempt-window': '--attempt-window D   how long a time-marked attempt id may be re-run (1h..365d; default 7d)',
  '--owner': '--owner NAME          the owner recorded for the session (default $USER@host)',
  '--attempt': '--attempt ID          the batch identity: re-running with it never appends twice',
  '--writer': '--writer WRITER       every attempt of the LaneWriter that holds the lane (its 8 hex digits)',
  '--file': '--file F              read the input from F (default: stdin)',
  '--input-format':
    '--input-format lines|raw  lines: one record per line (default); raw: the whole input is one record',
  '--from': '--from OFFSET         the first offset to read',
  '--max-records': '--max-records N       at most N records',
  '--max-bytes': '--max-bytes N         at most N bytes per group',
  '--text': '--text                add each record as UTF-8 text beside its base64',
  '--to': '--to OFFSET           the target offset',
  '--group': '--group G             the consumer group',
  '--groups': '--groups A,B          the groups whose cursors a trim may not pass ("" for none)',
  '--max': '--max N               at most N',
  '--batch': '--batch N             records per cursor commit (default 100)',
  '--follow': '--follow              wait for new records (Ctrl-C stops after the batch)',
  '--grace': '--grace DURATION      collect only what is older (30s|10m|6h|2d; default 24h)',
  '--dry-run': '--dry-run             list what would be collected or deleted; write nothing',
  '--retention-days': '--retention-days N   expire what finished more than N days ago (1-3650)',
  '--release': '--release KEY         re-verify the quarantined KEY and lift its quarantine',
  '--max-ranges': '--max-ranges N        compact at most N committed ranges (2-1000, default 16)',
  '--sha256': "--sha256 HEX          the object's expected SHA-256",
  '--input': '--input JSON|@FILE|-  the execution input (inline, a file, or stdin)',
  '--invocation-id': '--invocation-id ID    the invocation id (default: a new one)',
  '--target': "--target TARGET_ID    only this target's invocations",
  '--dynamodb-port': "--dynamodb-port N     DynamoDB Local's port (default CUTPOINT_DYNAMODB_PORT, else 8000)",
  '--s3-port': "--s3-port N           the S3 emulator's port (default CUTPOINT_S3_PORT, else 4566)",
  '--flows': '--flows A,B           the flows to drill (default: every drilled flow)',
  '--kinds': '--kinds rotate|all|K,K  the fault kinds per cut point (default rotate: one each, shifted by --seed)',
  '--seed': '--seed N              which kind the rotation starts with (default 0)',
  'stream append --from': '--from FILE.jsonl     a JSON Lines file through the group-commit producer',
  'stream append --max-records': '--max-records N       with --from: at most N records per group',
  'stream read --max-records': '--max-records N       at most N records (default and maximum: the read limit)',
  'stream materialize --max': '--max N               materialize at most N ranges (default 32)',
  'stream consume --max': '--max N               stop after N records',
};
