import { runCutpointInProcess, startCliRuntime, type CliRuntime } from '../support/cli-runtime.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CutpointConfig } from '../../src/config.js';
import { runDeliverySteps } from '../../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import { begin, type BeginInput } from '../../src/delivery/steps/begin.js';
import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import type { FlowResult } from '../../src/local/flow-runner.js';
import type { Ports } from '../../src/ports/index.js';
import { itemsMentioning, scanTable, targetSnapshot } from '../support/delivery-snapshot.js';
import {
  generateEvents,
  newInvocationId,
  openEventSource,
  openWarehouse,
  runDeliveryFlow,
  type EventSource,
  type Warehouse,
} from '../support/delivery-world.js';
import { TRANSACTION_MODE } from '../../src/delivery/transaction-mode.js';

/**
 * Bad input (issue acceptance): "malformed manifests, unknown selectors, wrong digests,
 * unknown or corrupted invocation ids, missing --yes — each exits with its stable
 * diagnostic and mutates nothing (checked by comparing the journal and target before and
 * after)." Real components: the CLI against a local runtime of its own (DynamoDB Local
 * + S3 emulator), embedded ClickHouse as the source of the original run, embedded
 * PostgreSQL as the target — whose connection the command IS given, so every refusal below
 * is a refusal, not an inability to connect: the same command with correct input mutates
 * (the control test proves it). The whole matrix runs through the CLI's `main` in this
 * process (argv in; exit code, stdout and stderr out — the bin only adds process startup,
 * a few seconds each on a loaded machine; the exit status a real process gets from main's
 * result is cli.test.ts's).
 */

const PG_ENV = 'CUTPOINT_BAD_INPUT_PG_URL';
const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  warehouse: { kind: postgres, url_env: ${PG_ENV} }
routes:
  daily:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: warehouse, table: dwh.events, key_columns: [event_id], mode: replace_window }
    chunk_rows: 400
  spare:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: warehouse, table: dwh.events_spare, key_columns: [event_id], mode: replace_window }
`;
const rows = generateEvents(2000, 144_000);

let root = '';
let stateDir = '';
let manifestFile = '';
let config: CutpointConfig;
let ports: Ports;
/** Embedded ClickHouse (the source of the original runs) and embedded PostgreSQL (the target): test/support/delivery-world.ts. */
let clickhouse: EventSource;
let warehouse: Warehouse;
const faultsBefore = process.env.CUTPOINT_FAULTS;

/** PUBLICATION_UNKNOWN (the COMMIT applied, its acknowledgement lost): permitted [reconcile]. */
let unknownId = '';
/** EMPTY_STAGING with its owned stage recorded: permitted [retire]. */
let stagedId = '';

/** Where the target adapter keeps its receipts by default (the CLI's target uses the default). */
const RECEIPTS = { schema: 'public', table: 'cutpoint_receipts' };

let runtime: CliRuntime | undefined;

beforeAll(async () => {
  runtime = await startCliRuntime('bad-input', manifestText);
  ({ root, stateDir, manifestFile, config, ports } = runtime);
  process.env.CUTPOINT_FAULTS = '';

  clickhouse = await openEventSource(rows);
  // The receipt table the CLI's target uses (the adapter's default location).
  warehouse = await openWarehouse({ tables: ['events', 'events_spare'], receiptTable: 'adapter default' });
  // The variable the binding names, for the in-process CLI (the child gets it in its env).
  process.env[PG_ENV] = warehouse.pgServer.connectionString;
  const { target, targetFaults } = warehouse;

  const manifest = parseManifest(manifestText, manifestFile);
  const depsOf = (route: string): DeliveryDeps => ({
    ports,
    target,
    mode: TRANSACTION_MODE,
    source: clickhouse.source,
    route: selectRoute(manifest, route),
  });
  const input = (invocationId: string, route: string): BeginInput => ({
    invocationId,
    session: `run-${invocationId.slice(4, 14)}`,
    manifestText,
    selector: `${manifestFile}#${route}`,
  });

  unknownId = newInvocationId();
  const daily = depsOf('daily');
  const begun = await begin(input(unknownId, 'daily'), daily);
  targetFaults.arm('delivery.publish.commit:lose-response*');
  try {
    expect((await runDeliverySteps(begun, daily)).state).toBe('PUBLICATION_UNKNOWN');
  } finally {
    targetFaults.disarm();
  }
  stagedId = newInvocationId();
  const spare = depsOf('spare');
  const staged = await begin(input(stagedId, 'spare'), spare);
  expect(await createStaging(staged, spare)).toMatchObject({ state: 'EMPTY_STAGING', acted: true });
}, 240_000);

afterAll(async () => {
  if (faultsBefore === undefined) delete process.env.CUTPOINT_FAULTS;
  else process.env.CUTPOINT_FAULTS = faultsBefore;
  delete process.env[PG_ENV];
  await warehouse?.close();
  await clickhouse?.close();
  await runtime?.stop();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI's `main` in this process: argv in, exit code and both streams out; the runtime and the target binding's variable in its env. */
function cutpoint(args: string[]): Promise<Run> {
  return runCutpointInProcess(args, {
    cwd: root,
    env: { CUTPOINT_STATE_DIR: stateDir, [PG_ENV]: warehouse.pgServer.connectionString },
  });
}

/** A refusal: exit 1, empty stdout, exactly one `<code>: <message>` line on stderr. */
function refused(r: Run, code: string, what: string): string {
  expect(r, `${what}: ${r.stderr}`).toMatchObject({ code: 1, stdout: '' });
  const lines = r.stderr.split('\n').filter((l) => l && !l.startsWith('cutpoint: '));
  expect(lines, what).toHaveLength(1);
  expect(lines[0], what).toMatch(new RegExp(`^${code.replace(/\./g, '\\.')}: `));
  expect(r.stderr, what).not.toContain(warehouse.pgServer.connectionString);
  return lines[0] as string;
}

const liveArgs = (action: string, invocationId: string, manifest: string, yes = true) => [
  'delivery',
  action,
  invocationId,
  '--manifest',
  manifest,
  ...(yes ? ['--yes'] : []),
  '--format',
  'json',
];
const live = (action: string, invocationId: string, manifest: string, yes = true) =>
  cutpoint(liveArgs(action, invocationId, manifest, yes));

/** The raw journal (every item of the table, by Scan) and the target (rows + digests, receipts, stages). */
async function world(): Promise<{ journal: string; target: string }> {
  const [journal, tgt] = await Promise.all([
    scanTable(config),
    targetSnapshot(warehouse.admin, 'dwh', ['events', 'events_spare'], RECEIPTS),
  ]);
  return { journal, target: JSON.stringify(tgt) };
}

/** Writes a manifest variant into the temp directory; returns its path. */
async function variant(name: string, text: string): Promise<string> {
  const file = join(root, name);
  await writeFile(file, text);
  return file;
}

const WELL_FORMED_UNKNOWN = 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa';
/** Wrong final character (the last base32 digit must carry two zero bits): a corrupted id. */
const CORRUPTED = [
  `${WELL_FORMED_UNKNOWN.slice(0, -1)}b`,
  WELL_FORMED_UNKNOWN.slice(0, -1),
  WELL_FORMED_UNKNOWN.toUpperCase(),
  'inv-aaaaaaaaaaaaaaaaaaaaaaaa1a',
];

describe('bad input to the recovery CLI mutates nothing', () => {
  let before: { journal: string; target: string };

  beforeAll(async () => {
    before = await world();
    // The fixture is what the tests think it is: live rows, a receipt and two owned stages.
    const tgt = JSON.parse(before.target) as {
      tables: Record<string, { rows: number }>;
      receipts: unknown[];
      stages: string[];
    };
    expect(tgt.tables.events?.rows).toBe(1200);
    expect(tgt.receipts).toHaveLength(1);
    expect(tgt.stages).toHaveLength(2);
    expect((await loadInvocation(ports, unknownId)).state).toBe('PUBLICATION_UNKNOWN');
  });

  it('missing --yes: exit 1 delivery.recovery_confirmation_required for every live action, before the manifest is read (it does not exist) or the id is checked', async () => {
    const missing = join(root, 'does-not-exist.yaml');
    for (const action of ['reconcile', 'resume', 'retire']) {
      for (const id of [unknownId, stagedId, WELL_FORMED_UNKNOWN, 'not-an-id']) {
        const line = refused(
          await live(action, id, `${missing}#daily`, false),
          'delivery.recovery_confirmation_required',
          `${action} ${id}`,
        );
        expect(line).toContain(action);
      }
    }
    // Even a selector without a route: confirmation is checked first.
    refused(
      await live('reconcile', unknownId, missing, false),
      'delivery.recovery_confirmation_required',
      'no selector',
    );
    expect(await world()).toEqual(before);
  }, 120_000);

  it('malformed manifests: a YAML syntax error is delivery.manifest_unparsable, a schema error (unknown key) delivery.manifest_invalid, an unreadable file delivery.manifest_unavailable', async () => {
    const yamlBroken = await variant('yaml-broken.yaml', 'version: 1\nroutes: [\n');
    const dupKey = await variant('dup-key.yaml', manifestText.replace('version: 1\n', 'version: 1\nversion: 1\n'));
    const unknownKey = await variant(
      'unknown-key.yaml',
      manifestText.replace('    chunk_rows: 400\n', '    chunk_rows: 400\n    chunk_size: 9\n'),
    );
    const wrongType = await variant('wrong-type.yaml', manifestText.replace('chunk_rows: 400', 'chunk_rows: many'));
    refused(await live('reconcile', unknownId, `${yamlBroken}#daily`), 'delivery.manifest_unparsable', 'yaml syntax');
    refused(await live('reconcile', unknownId, `${dupKey}#daily`), 'delivery.manifest_unparsable', 'duplicate key');
    const line = refused(
      await live('reconcile', unknownId, `${unknownKey}#daily`),
      'delivery.manifest_invalid',
      'unknown key',
    );
    expect(line).toContain('routes.daily.chunk_size');
    refused(await live('reconcile', unknownId, `${wrongType}#daily`), 'delivery.manifest_invalid', 'wrong type');
    refused(await live('retire', stagedId, `${unknownKey}#spare`), 'delivery.manifest_invalid', 'unknown key, retire');
    refused(
      await live('reconcile', unknownId, `${join(root, 'nope.yaml')}#daily`),
      'delivery.manifest_unavailable',
      'no file',
    );
    refused(await live('reconcile', unknownId, `${root}#daily`), 'delivery.manifest_unavailable', 'a directory');
    expect(await world()).toEqual(before);
  }, 120_000);

  it('selectors: an unknown route is delivery.selector_unknown; bad selector grammar is delivery.selector_invalid', async () => {
    const unknown = refused(
      await live('reconcile', unknownId, `${manifestFile}#nope`),
      'delivery.selector_unknown',
      '#nope',
    );
    expect(unknown).toContain('daily, spare');
    refused(await live('retire', stagedId, `${manifestFile}#weekly`), 'delivery.selector_unknown', '#weekly');
    for (const selector of [
      manifestFile,
      `${manifestFile}#`,
      `${manifestFile}#Daily`,
      `${manifestFile}#da ily`,
      '#daily',
    ]) {
      refused(await live('reconcile', unknownId, selector), 'delivery.selector_invalid', selector);
    }
    expect(await world()).toEqual(before);
  }, 120_000);

  it('wrong digests: a manifest edited after sealing, another route, another file with the same text — delivery.recovery_authority_mismatch naming fields, never digests', async () => {
    const edited = await variant('edited.yaml', manifestText.replace('chunk_rows: 400', 'chunk_rows: 401'));
    const commented = await variant('commented.yaml', `${manifestText}# a comment is an edit too\n`);
    const copy = await variant('copy.yaml', manifestText);
    const e = refused(
      await live('reconcile', unknownId, `${edited}#daily`),
      'delivery.recovery_authority_mismatch',
      'edited',
    );
    expect(e).toContain('manifestDigest');
    expect(e).not.toMatch(/[0-9a-f]{64}/);
    refused(
      await live('reconcile', unknownId, `${commented}#daily`),
      'delivery.recovery_authority_mismatch',
      'commented',
    );
    const c = refused(
      await live('reconcile', unknownId, `${copy}#daily`),
      'delivery.recovery_authority_mismatch',
      'copy',
    );
    expect(c).toContain('selectorDigest');
    expect(c).not.toContain('manifestDigest');
    // The other route of the same manifest: permitted action, readable manifest, wrong seal.
    refused(
      await live('reconcile', unknownId, `${manifestFile}#spare`),
      'delivery.recovery_authority_mismatch',
      '#spare',
    );
    refused(
      await live('retire', stagedId, `${manifestFile}#daily`),
      'delivery.recovery_authority_mismatch',
      'retire #daily',
    );
    // The manifest edited in place after sealing.
    await writeFile(manifestFile, manifestText.replace('chunk_rows: 400', 'chunk_rows: 399'));
    try {
      refused(
        await live('reconcile', unknownId, `${manifestFile}#daily`),
        'delivery.recovery_authority_mismatch',
        'edited in place',
      );
    } finally {
      await writeFile(manifestFile, manifestText);
    }
    expect(await world()).toEqual(before);
  }, 120_000);

  it('invocation ids: unknown but well-formed is delivery.recovery_journal_unavailable; corrupted is delivery.invocation_id_invalid, never echoed — for inspect and every live action', async () => {
    refused(
      await cutpoint(['delivery', 'inspect', WELL_FORMED_UNKNOWN, '--format', 'json']),
      'delivery.recovery_journal_unavailable',
      'inspect unknown',
    );
    for (const action of ['reconcile', 'resume', 'retire']) {
      refused(
        await live(action, WELL_FORMED_UNKNOWN, `${manifestFile}#daily`),
        'delivery.recovery_journal_unavailable',
        `${action} unknown`,
      );
    }
    for (const id of [
      ...CORRUPTED,
      `${unknownId}x`,
      unknownId.replace('inv-', 'inv_'),
      'inv-SECRET-PASTE-1234567890ab',
    ]) {
      const inspect = refused(
        await cutpoint(['delivery', 'inspect', id, '--format', 'json']),
        'delivery.invocation_id_invalid',
        `inspect ${id}`,
      );
      expect(inspect).not.toContain(id);
      const line = refused(
        await live('reconcile', id, `${manifestFile}#daily`),
        'delivery.invocation_id_invalid',
        `reconcile ${id}`,
      );
      expect(line).not.toContain(id);
    }
    expect(await world()).toEqual(before);
  }, 120_000);

  it('an action not in permitted_actions is delivery.recovery_action_not_permitted, from the journal alone', async () => {
    const missing = join(root, 'does-not-exist.yaml');
    const r = refused(
      await live('resume', unknownId, `${missing}#daily`),
      'delivery.recovery_action_not_permitted',
      'resume PUBLICATION_UNKNOWN',
    );
    expect(r).toContain('PUBLICATION_UNKNOWN');
    refused(
      await live('retire', unknownId, `${manifestFile}#daily`),
      'delivery.recovery_action_not_permitted',
      'retire PUBLICATION_UNKNOWN',
    );
    refused(
      await live('reconcile', stagedId, `${manifestFile}#spare`),
      'delivery.recovery_action_not_permitted',
      'reconcile EMPTY_STAGING',
    );
    refused(
      await live('resume', stagedId, `${manifestFile}#spare`),
      'delivery.recovery_action_not_permitted',
      'resume EMPTY_STAGING',
    );
    expect(await world()).toEqual(before);
  }, 120_000);

  it('grammar errors exit 2 (cli.usage) with nothing on stdout, before anything starts', async () => {
    for (const args of [
      ['delivery', 'reconcile', unknownId, '--yes'],
      ['delivery', 'reconcile', unknownId, '--manifest'],
      ['delivery', 'retire', stagedId, '--manifest', `${manifestFile}#spare`, '--yes=no'],
      ['delivery', 'resume', unknownId, '--manifest', `${manifestFile}#daily`, '--yes', '--format', 'yaml'],
      ['delivery', 'reconcile', unknownId, 'extra', '--manifest', `${manifestFile}#daily`, '--yes'],
      ['delivery', 'reconcile', unknownId, '--manifest', `${manifestFile}#daily`, '--yes', '--bogus'],
    ]) {
      const r = await cutpoint(args);
      expect(r, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr, args.join(' ')).toMatch(/^cli\.usage: /);
    }
    expect(await world()).toEqual(before);
  }, 120_000);

  it('one refusal per category, one after another — the same exit codes and diagnostics, nothing mutated', async () => {
    const missing = join(root, 'does-not-exist.yaml');
    const broken = await variant('bin-broken.yaml', 'version: 1\nroutes: [\n');
    const unknownKey = await variant(
      'bin-unknown-key.yaml',
      manifestText.replace('version: 1', 'version: 1\nextra: true'),
    );
    const edited = await variant('bin-edited.yaml', `${manifestText}# edited\n`);
    const cases: Array<[string[], number, string]> = [
      [liveArgs('reconcile', unknownId, `${missing}#daily`, false), 1, 'delivery.recovery_confirmation_required'],
      [liveArgs('reconcile', unknownId, `${broken}#daily`), 1, 'delivery.manifest_unparsable'],
      [liveArgs('reconcile', unknownId, `${unknownKey}#daily`), 1, 'delivery.manifest_invalid'],
      [liveArgs('reconcile', unknownId, `${manifestFile}#nope`), 1, 'delivery.selector_unknown'],
      [liveArgs('reconcile', unknownId, manifestFile), 1, 'delivery.selector_invalid'],
      [liveArgs('reconcile', unknownId, `${edited}#daily`), 1, 'delivery.recovery_authority_mismatch'],
      [liveArgs('retire', WELL_FORMED_UNKNOWN, `${manifestFile}#daily`), 1, 'delivery.recovery_journal_unavailable'],
      [liveArgs('reconcile', CORRUPTED[0] as string, `${manifestFile}#daily`), 1, 'delivery.invocation_id_invalid'],
      [liveArgs('resume', unknownId, `${manifestFile}#daily`), 1, 'delivery.recovery_action_not_permitted'],
      [['delivery', 'reconcile', unknownId, '--yes'], 2, 'cli.usage'],
    ];
    // In-process runs one at a time (they share this process's env and streams).
    const runs: Run[] = [];
    for (const [args] of cases) runs.push(await cutpoint(args));
    cases.forEach(([args, code, diagnostic], i) => {
      const r = runs[i] as Run;
      if (code === 1) refused(r, diagnostic, args.join(' '));
      else {
        expect(r, args.join(' ')).toMatchObject({ code, stdout: '' });
        expect(r.stderr).toMatch(new RegExp(`^${diagnostic.replace(/\./g, '\\.')}: `));
      }
    });
    expect(await world()).toEqual(before);
  });

  it('control: the same commands with correct input do mutate — reconcile → PUBLISHED, retire → RETIRED (so every refusal above was a real one)', async () => {
    expect(await world()).toEqual(before);
    const reconciled = await live('reconcile', unknownId, `${manifestFile}#daily`);
    expect(reconciled.code, reconciled.stderr).toBe(0);
    expect(JSON.parse(reconciled.stdout)).toMatchObject({
      invocation_id: unknownId,
      state: 'PUBLISHED',
      permitted_actions: ['resume'],
    });
    const retired = await live('retire', stagedId, `${manifestFile}#spare`);
    expect(retired.code, retired.stderr).toBe(0);
    expect(JSON.parse(retired.stdout)).toMatchObject({
      invocation_id: stagedId,
      state: 'RETIRED',
      holds_custody: false,
    });
    const after = await world();
    expect(after.journal).not.toBe(before.journal);
    expect(JSON.parse(after.target)).toMatchObject({ stages: [expect.any(String)] });
  }, 120_000);
});

describe('bad input to the deliver-window flow writes nothing', () => {
  const run = (input: unknown): Promise<FlowResult> =>
    runDeliveryFlow('deliver-window', input, { ports, target: warehouse.target, source: clickhouse.source });

  it.each([
    [
      'a malformed manifestText (YAML syntax)',
      (id: string) => ({
        invocationId: id,
        session: 's-1',
        manifestText: 'version: 1\nroutes: [\n',
        selector: `${manifestFile}#daily`,
      }),
      'YAML',
    ],
    [
      'a schema error in manifestText (unknown key)',
      (id: string) => ({
        invocationId: id,
        session: 's-1',
        manifestText: manifestText.replace('version: 1', 'version: 1\nextra: true'),
        selector: `${manifestFile}#daily`,
      }),
      'unknown key',
    ],
    [
      'an unknown route selector',
      (id: string) => ({ invocationId: id, session: 's-1', manifestText, selector: `${manifestFile}#nope` }),
      'no route nope',
    ],
    [
      'a selector without a route',
      (id: string) => ({ invocationId: id, session: 's-1', manifestText, selector: manifestFile }),
      'manifest selector must be',
    ],
    [
      'a corrupted invocation id',
      (id: string) => ({
        invocationId: `${id.slice(0, -1)}b`,
        session: 's-1',
        manifestText,
        selector: `${manifestFile}#daily`,
      }),
      'invocation id ends in a character that cannot end an id',
    ],
    [
      'a missing manifestText',
      (id: string) => ({ invocationId: id, session: 's-1', selector: `${manifestFile}#daily` }),
      'manifestText',
    ],
  ] as const)(
    '%s: Delivery.StepRefused from Begin (Cutpoint.ValidationError), nothing in the journal, the target untouched',
    async (_what, input, causeFragment) => {
      const invocationId = newInvocationId();
      const journalBefore = await scanTable(config);
      const targetBefore = JSON.stringify(
        await targetSnapshot(warehouse.admin, 'dwh', ['events', 'events_spare'], RECEIPTS),
      );
      const result = await run(input(invocationId));
      expect(result).toMatchObject({ status: 'FAILED', error: 'Delivery.StepRefused' });
      expect(result.cause).toContain(causeFragment);
      expect(result.events.filter((e) => e.type === 'StateEntered').map((e) => e.state)).toEqual([
        'Begin',
        'StepRefused',
      ]);
      expect(result.events.some((e) => e.state === 'Begin' && e.error === 'Cutpoint.ValidationError')).toBe(true);
      const journalAfter = await scanTable(config);
      expect(journalAfter).toBe(journalBefore);
      expect(itemsMentioning(journalAfter, invocationId.slice(0, -1))).toEqual([]);
      expect(JSON.stringify(await targetSnapshot(warehouse.admin, 'dwh', ['events', 'events_spare'], RECEIPTS))).toBe(
        targetBefore,
      );
    },
  );
});
