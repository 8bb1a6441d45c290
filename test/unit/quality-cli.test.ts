import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allHelp } from '../../src/cli/main.js';
import { qualityHelp } from '../../src/cli/commands/quality.js';
import { observeFlowFailure, qualityFlowFailure } from '../../src/cli/commands/quality-live.js';
import { runCutpointInProcess } from '../support/cli-runtime.js';

/**
 * `cutpoint quality` grammar (docs/rules.md#quality-commands, F5): every refusal here is
 * decided before anything is opened — the state directory the command would use is never
 * created. No spelling of force, clear, skip or redispatch parses, as a subcommand or as an
 * option.
 */

const ID = 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa';
const stateDir = join(tmpdir(), `cutpoint-quality-grammar-${process.pid}-never-created`);
const cutpoint = (argv: string[]) => runCutpointInProcess(argv, { env: { CUTPOINT_STATE_DIR: stateDir } });

async function usage(argv: string[]): Promise<string> {
  const r = await cutpoint(argv);
  expect({ argv, code: r.code, stdout: r.stdout }).toEqual({ argv, code: 2, stdout: '' });
  expect(r.stderr, argv.join(' ')).toMatch(/^cli\.usage: /);
  return r.stderr;
}

describe('cutpoint quality: grammar', () => {
  it('no spelling of force, clear, skip or redispatch parses: exit 2, nothing on stdout, nothing opened', async () => {
    for (const verb of [
      'force',
      'force-clear',
      'clear',
      'clear-guard',
      'clear-reader',
      'skip',
      'skip-quality',
      'redispatch',
      'release-guard',
      'observe-force',
    ]) {
      expect(await usage(['quality', verb, ID])).toContain(`unknown quality subcommand "${verb}"`);
    }
    const FORCE = [
      '--force',
      '--force-clear',
      '--clear',
      '--clear-guard',
      '--skip',
      '--skip-quality',
      '--redispatch',
      '--ignore-evidence',
      '--ignore-guard',
      '--force=true',
      '--skip-probes',
      '--no-guard',
    ];
    const valid: Record<string, string[]> = {
      inspect: [ID],
      'inspect-all': [],
      diagnose: [ID, '--manifest', 'route.yaml#daily'],
      observe: [ID, '--manifest', 'route.yaml#daily', '--yes'],
      replay: [ID, '--manifest', 'route.yaml#daily'],
    };
    for (const [verb, args] of Object.entries(valid)) {
      for (const flag of FORCE) expect(await usage(['quality', verb, ...args, flag])).toMatch(/Unknown option/);
      // Only observe is a live action: --yes is not an option of the read-only verbs.
      if (verb !== 'observe')
        expect(await usage(['quality', verb, ...args, '--yes'])).toMatch(/Unknown option '--yes'/);
    }
    expect(existsSync(stateDir)).toBe(false);
  });

  it('unknown subcommands and options, a format other than json or text, a missing or extra argument: exit 2', async () => {
    await usage(['quality']);
    await usage(['quality', 'frobnicate']);
    await usage(['quality', 'inspect']);
    await usage(['quality', 'inspect', '--format', 'json']);
    await usage(['quality', 'inspect', ID, 'extra']);
    await usage(['quality', 'inspect', ID, '--format', 'yaml']);
    await usage(['quality', 'inspect', ID, '--format']);
    await usage(['quality', 'inspect', ID, '--manifest', 'x.yaml#daily']);
    await usage(['quality', 'inspect-all', 'extra']);
    await usage(['quality', 'inspect-all', '--format', 'xml']);
    await usage(['quality', 'inspect-all', '--target', 'pub_ch.pub.events']);
    await usage(['quality', 'inspect-all', '--format', 'json', '--format', 'json']);
    for (const verb of ['diagnose', 'observe', 'replay']) {
      const yes = verb === 'observe' ? ['--yes'] : [];
      await usage(['quality', verb, '--manifest', 'route.yaml#daily', ...yes]); // no id
      await usage(['quality', verb, ID, ...yes]); // no manifest
      await usage(['quality', verb, ID, 'extra', '--manifest', 'route.yaml#daily', ...yes]);
      await usage(['quality', verb, ID, '--manifest', 'route.yaml#daily', '--format', 'yaml', ...yes]);
      // The deployed flow's options need --aws, for every verb that starts one.
      for (const flag of [
        ['--name', 'x'],
        ['--state-machine-arn', 'arn:x'],
        ['--region', 'eu-west-1'],
      ])
        await usage(['quality', verb, ID, '--manifest', 'route.yaml#daily', ...flag, ...yes]);
    }
    expect(existsSync(stateDir)).toBe(false);
  });

  it('observe --aws: --state-machine-arn, --name, --profile, --region and --stack need --aws (exit 2, before anything is opened); without an ARN the stacks name it, so no region is aws.region_missing (exit 1)', async () => {
    expect(
      await usage(['quality', 'observe', ID, '--manifest', 'route.yaml#daily', '--yes', '--region', 'eu-west-1']),
    ).toContain('--region needs --aws');
    const noRegion = await runCutpointInProcess(
      ['quality', 'observe', ID, '--manifest', 'route.yaml#daily', '--yes', '--aws'],
      {
        env: {
          CUTPOINT_STATE_DIR: stateDir,
          CUTPOINT_QUALITY_OBSERVE_ARN: undefined,
          AWS_REGION: undefined,
          AWS_DEFAULT_REGION: undefined,
          AWS_PROFILE: undefined,
          AWS_CONFIG_FILE: join(stateDir, 'no-config'),
          AWS_SHARED_CREDENTIALS_FILE: join(stateDir, 'no-credentials'),
        },
      },
    );
    expect({ code: noRegion.code, stdout: noRegion.stdout, stderr: noRegion.stderr.split(':')[0] }).toEqual({
      code: 1,
      stdout: '',
      stderr: 'aws.region_missing',
    });
    expect(await usage(['quality', 'observe', ID, '--manifest', 'route.yaml#daily', '--yes', '--name', 'x'])).toContain(
      '--state-machine-arn and --name need --aws',
    );
    // The confirmation is still grammar, before the ARN.
    expect(await usage(['quality', 'observe', ID, '--manifest', 'route.yaml#daily', '--aws'])).toContain(
      'quality.confirmation_required',
    );
    expect(existsSync(stateDir)).toBe(false);
  });

  it("observe --aws: a deployed flow that did not end COMPLETE exits with the flow's error name and its stable code, the Lambda cause's message only", () => {
    const lambdaCause = JSON.stringify({
      errorType: 'Quality.TargetPending',
      errorMessage: 'the observation ended TARGET_PENDING',
      trace: ['at x'],
    });
    expect(observeFlowFailure('FAILED', 'Quality.TargetPending', lambdaCause)).toMatchObject({
      name: 'Quality.TargetPending',
      code: 'quality.target_pending',
      message: 'observe ended FAILED with Quality.TargetPending: the observation ended TARGET_PENDING',
    });
    expect(observeFlowFailure('FAILED', 'Quality.Failed', 'x')).toMatchObject({ code: 'quality.failed' });
    expect(observeFlowFailure('FAILED', 'Quality.Incomplete', undefined)).toMatchObject({
      code: 'quality.incomplete',
      message: 'observe ended FAILED with Quality.Incomplete',
    });
    expect(observeFlowFailure('TIMED_OUT', undefined, undefined)).toMatchObject({
      name: 'Quality.ObserveFlowFailed',
      code: 'quality.observe_flow_failed',
    });
  });

  it('replay and diagnose --aws: a route that is not governed is quality.not_governed, and an exchange route with no region aws.region_missing, both before any store or AWS call (exit 1)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutpoint-quality-aws-'));
    try {
      const manifest = join(dir, 'route.yaml');
      writeFileSync(
        manifest,
        `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  warehouse: { kind: postgres, url_env: PG_URL }
  lake: { kind: clickhouse, url_env: CH_PUB_URL }
routes:
  daily:
    source: { binding: events_ch, table: analytics.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: rolling, days: 1, boundary: day }
    target: { binding: warehouse, table: dwh.events_daily, key_columns: [event_id], mode: replace_window }
  lake_daily:
    source: { binding: events_ch, table: analytics.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: rolling, days: 1, boundary: day }
    target: { binding: lake, table: reporting.events_daily, key_columns: [event_id], mode: exchange }
    quality: { capsule: v2 }
`,
      );
      const env = {
        CUTPOINT_STATE_DIR: stateDir,
        CUTPOINT_QUALITY_REPLAY_ARN: undefined,
        CUTPOINT_QUALITY_DIAGNOSE_ARN: undefined,
        AWS_REGION: undefined,
        AWS_DEFAULT_REGION: undefined,
        AWS_PROFILE: undefined,
        AWS_CONFIG_FILE: join(stateDir, 'no-config'),
        AWS_SHARED_CREDENTIALS_FILE: join(stateDir, 'no-credentials'),
      };
      for (const verb of ['replay', 'diagnose']) {
        // One at a time: an in-process run captures this process's stdio.
        const run = (route: string) =>
          runCutpointInProcess(['quality', verb, ID, '--manifest', `${manifest}#${route}`, '--aws'], { env });
        const sql = await run('daily');
        const exchange = await run('lake_daily');
        expect({ code: sql.code, stdout: sql.stdout, stderr: sql.stderr.split(':')[0] }, verb).toEqual({
          code: 1,
          stdout: '',
          stderr: 'quality.not_governed',
        });
        expect({ code: exchange.code, stdout: exchange.stdout, stderr: exchange.stderr.split(':')[0] }, verb).toEqual({
          code: 1,
          stdout: '',
          stderr: 'aws.region_missing',
        });
      }
      expect(existsSync(stateDir)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("replay and diagnose --aws: a deployed read that was refused exits with the flow's error name and its stable code where the name has one", () => {
    const cause = JSON.stringify({
      errorType: 'Quality.ReplayWindowClosed',
      errorMessage: 'replay window closed: expired',
    });
    expect(qualityFlowFailure('replay', 'FAILED', 'Quality.ActionNotPermitted', 'x')).toMatchObject({
      name: 'Quality.ActionNotPermitted',
      code: 'quality.action_not_permitted',
      message: 'replay ended FAILED with Quality.ActionNotPermitted: x',
    });
    // Several codes under one name: the name is kept, the code says which flow failed.
    expect(qualityFlowFailure('replay', 'FAILED', 'Quality.ReplayWindowClosed', cause)).toMatchObject({
      name: 'Quality.ReplayWindowClosed',
      code: 'quality.replay_flow_failed',
      message: 'replay ended FAILED with Quality.ReplayWindowClosed: replay window closed: expired',
    });
    expect(qualityFlowFailure('diagnose', 'TIMED_OUT', undefined, undefined)).toMatchObject({
      name: 'Quality.DiagnoseFlowFailed',
      code: 'quality.diagnose_flow_failed',
    });
    expect(qualityFlowFailure('diagnose', 'FAILED', 'Quality.NotGoverned', undefined)).toMatchObject({
      code: 'quality.not_governed',
    });
  });

  it('observe without --yes: exit 2 with quality.confirmation_required, before the manifest is read or a store opened (F5)', async () => {
    // The manifest does not exist and the state directory is never created: neither was touched.
    const stderr = await usage(['quality', 'observe', ID, '--manifest', join(stateDir, 'absent.yaml#daily')]);
    expect(stderr).toMatch(
      /^cli\.usage: quality\.confirmation_required: observe changes quality authority; repeat it with --yes/,
    );
    expect(existsSync(stateDir)).toBe(false);
  });

  it('is listed in the CLI help, which names no force-clear command', async () => {
    const HELP = await allHelp();
    expect(HELP).toContain('cutpoint quality inspect-all [--format json|text]');
    expect(HELP).toContain('cutpoint quality inspect <invocation-id> [--format json|text]');
    expect(HELP).toContain(
      'cutpoint quality diagnose <invocation-id> --manifest FILE#ROUTE [--format json|text] [--aws]',
    );
    expect(HELP).toContain(
      'cutpoint quality observe <invocation-id> --manifest FILE#ROUTE --yes [--format json|text] [--aws]',
    );
    expect(HELP).toContain(
      'cutpoint quality replay <invocation-id> --manifest FILE#ROUTE [--format json|text] [--aws]',
    );
    const commands = qualityHelp.split('\n').filter((l) => l.startsWith('cutpoint '));
    expect(commands).toHaveLength(5);
    for (const line of commands) {
      expect(line).toMatch(/^cutpoint quality (inspect|inspect-all|diagnose|observe|replay) /);
      expect(line).not.toMatch(/force|clear|skip|redispatch|ignore/);
    }
    // The observe help says a chdb: binding is refused, and why.
    expect(qualityHelp).toContain('quality.reader_unreachable');
  });
});
