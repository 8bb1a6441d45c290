import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HELP } from '../../src/cli/main.js';
import { qualityHelp } from '../../src/cli/commands/quality.js';
import { runCutpointInProcess } from '../support/cli-runtime.js';

/**
 * `cutpoint quality` grammar (spec §7, F5): every refusal here is decided before anything
 * is opened — the state directory the command would use is never created. No spelling of
 * force, clear, skip or redispatch parses, as a subcommand or as an option.
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
    for (const verb of ['force', 'force-clear', 'clear', 'clear-guard', 'clear-reader', 'skip', 'skip-quality', 'redispatch', 'release-guard', 'observe-force']) {
      expect(await usage(['quality', verb, ID])).toContain(`unknown quality subcommand "${verb}"`);
    }
    for (const verb of ['inspect', 'inspect-all']) {
      const id = verb === 'inspect' ? [ID] : [];
      for (const flag of ['--force', '--force-clear', '--clear', '--clear-guard', '--skip', '--skip-quality', '--redispatch', '--ignore-evidence', '--ignore-guard', '--yes', '--force=true']) {
        expect(await usage(['quality', verb, ...id, flag])).toMatch(/Unknown option/);
      }
    }
    expect(existsSync(stateDir)).toBe(false);
  });

  it('unknown subcommands and options, a format other than json, a missing or extra argument: exit 2', async () => {
    await usage(['quality']);
    await usage(['quality', 'frobnicate']);
    await usage(['quality', 'inspect']);
    await usage(['quality', 'inspect', '--format', 'json']);
    await usage(['quality', 'inspect', ID, 'extra']);
    await usage(['quality', 'inspect', ID, '--format', 'yaml']);
    await usage(['quality', 'inspect', ID, '--format']);
    await usage(['quality', 'inspect', ID, '--manifest', 'x.yaml#daily']);
    await usage(['quality', 'inspect-all', 'extra']);
    await usage(['quality', 'inspect-all', '--format', 'text']);
    await usage(['quality', 'inspect-all', '--target', 'pub_ch.pub.events']);
    await usage(['quality', 'inspect-all', '--format', 'json', '--format', 'json']);
    expect(existsSync(stateDir)).toBe(false);
  });

  it('is listed in the CLI help, which names no force-clear command', () => {
    expect(HELP).toContain('cutpoint quality inspect-all [--format json]');
    expect(HELP).toContain('cutpoint quality inspect <invocation-id> [--format json]');
    for (const line of qualityHelp.split('\n').filter((l) => l.startsWith('cutpoint '))) {
      expect(line).toMatch(/^cutpoint quality inspect(-all)? /);
    }
  });
});
