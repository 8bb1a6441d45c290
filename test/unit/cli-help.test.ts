import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { renderText } from '../../src/cli/format.js';
import { optionText } from '../../src/cli/help.js';
import { TOPICS } from '../../src/cli/help-topics.js';
import { COMMANDS, main } from '../../src/cli/main.js';
import { REPO_ROOT } from '../../src/local/asl.js';
import { captureMain } from './cli-capture.js';

const SUBCOMMANDS = Object.entries(TOPICS).flatMap(([command, topic]) =>
  Object.keys(topic.subcommands).map((sub) => [command, sub] as const),
);

/** The lines of one section (`options:`, `examples:`) of a subcommand's help. */
function section(help: string, name: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf(`${name}:`);
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && l === '');
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

describe('help', () => {
  it('the help table and the command table name the same commands', () => {
    expect(Object.keys(TOPICS)).toEqual(Object.keys(COMMANDS));
  });

  it.each(SUBCOMMANDS)(
    'cutpoint %s %s --help: usage line, every option with one line, 1-3 examples it can run',
    async (command, sub) => {
      const r = await captureMain(main, [command, sub, '--help']);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      const usage = section(r.stdout, 'usage');
      expect(usage.length).toBeGreaterThan(0);
      for (const line of usage.filter((l) => l.startsWith('  cutpoint')))
        expect(line).toMatch(new RegExp(`^ {2}cutpoint ${command}( \\[?[a-z|-]*${sub}|$| [<(])`));
      const options = section(r.stdout, 'options');
      expect(options).toContain(`  ${optionText(command, sub, '--format')}`);
      // Each option has its description: a label, then text.
      for (const line of options)
        expect(line, line).toMatch(/^ {2}--[a-z0-9-]+(, -h)?( [A-Z#|a-z0-9_<>.,@-]+)? {2,}\S/);
      const examples = section(r.stdout, 'examples');
      expect(examples.length).toBeGreaterThanOrEqual(1);
      expect(examples.length).toBeLessThanOrEqual(3);
      const known = options.map((l) => /^ {2}(--[a-z0-9-]+)/.exec(l)?.[1]);
      for (const example of examples) {
        expect(example).toContain(`cutpoint ${command}`);
        for (const [option] of example.matchAll(/ --[a-z0-9-]+/g))
          expect(known, `${example}: ${option}`).toContain(option.trim());
      }
      // `cutpoint help <command> <sub>` is the same text.
      expect((await captureMain(main, ['help', command, sub])).stdout).toBe(r.stdout);
    },
  );

  it("cutpoint <command> --help is the command's help; --version names the package and the Node", async () => {
    const stream = await captureMain(main, ['stream', '--help']);
    expect(stream.stdout).toMatch(/^cutpoint stream create /);
    const version = await captureMain(main, ['--version']);
    expect(version.stdout).toMatch(/^cutpoint \d+\.\d+\.\d+ \(node v\d+\.\d+\.\d+, needs >=\d+\.\d+; source\)\n$/);
    const json = JSON.parse((await captureMain(main, ['--version', '--format', 'json'])).stdout);
    expect(json).toEqual({
      cutpoint: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      node: process.version,
      engines: expect.any(String),
      build: 'source',
    });
  });
});

describe('--format text', () => {
  it('renders key: value lines, nested objects indented, scalar arrays inline, flat object arrays as a table', () => {
    const text = renderText(
      {
        stream: 'orders',
        next: 3,
        suspended: null,
        groups: ['a', 'b'],
        head: { epoch: 2, owner: 'me' },
        records: [
          { offset: 0, data: 'eA==' },
          { offset: 1, data: 'eQ==', text: 'y' },
        ],
        empty: [],
      },
      '',
    );
    expect(text).toBe(
      [
        'stream: orders',
        'next: 3',
        'suspended: -',
        'groups: a, b',
        'head:',
        '  epoch: 2',
        '  owner: me',
        'records:',
        '  OFFSET  DATA  TEXT',
        '  0       eA==  -',
        '  1       eQ==  y',
        'empty: (none)',
      ].join('\n'),
    );
    expect(renderText([{ a: { b: 1 } }], '')).toBe('-\n  a:\n    b: 1');
    expect(renderText('line\nforged: x', '')).toBe('line forged: x');
  });

  it('every command takes it: faults list prints a table of cut points', async () => {
    const r = await captureMain(main, ['faults', 'list', '--format', 'text']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^cutPoints:\n {2}NAME +SUBSYSTEM +FLOWS +COMMANDS +HANDLERS +LIBRARIES$/m);
    expect(r.stdout).toMatch(/^ {2}stream\.trim\.cas +stream /m);
  });
});

describe('the front loads no command and no driver', () => {
  /** Packages and source files `entry` imports statically (what loading it loads). */
  async function staticGraph(entry: string): Promise<{ files: string[]; packages: string[] }> {
    const result = await build({
      absWorkingDir: REPO_ROOT,
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      write: false,
      outdir: 'unused',
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = result.metafile.inputs;
    const files = new Set([entry]);
    const packages = new Set<string>();
    const queue = [entry];
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      for (const i of inputs[file]?.imports ?? []) {
        if (i.kind === 'dynamic-import') continue;
        if (i.external) {
          if (!i.path.startsWith('node:')) packages.add(i.path);
        } else if (!files.has(i.path)) {
          files.add(i.path);
          queue.push(i.path);
        }
      }
    }
    return { files: [...files], packages: [...packages] };
  }

  it('main.ts imports no command module and no package: help, --version and the shared grammar need none', async () => {
    const { files, packages } = await staticGraph('src/cli/main.ts');
    expect(files.filter((f) => f.startsWith('src/cli/commands/'))).toEqual([]);
    expect(packages).toEqual([]);
  });

  it.each(Object.keys(COMMANDS).filter((c) => c !== 'object'))(
    'the %s command loads no driver before its grammar is checked',
    async (command) => {
      const { packages } = await staticGraph(`src/cli/commands/${command}.ts`);
      // yaml and zod parse and shape-check a route manifest: pure libraries, no driver.
      expect(packages.filter((p) => p !== 'yaml' && p !== 'zod')).toEqual([]);
    },
  );
});
