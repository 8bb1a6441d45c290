import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/main.js';
import { TOPICS } from '../../src/cli/help-topics.js';
import { AWS_OPTIONS } from '../../src/cli/aws-runtime.js';
import { REPO_ROOT } from '../../src/local/asl.js';

/**
 * The docs cannot drift from the repository: every relative link in README.md and docs/
 * names a file that exists (and, with `#anchor`, a heading or `<a id>` of that file), and
 * every `cutpoint …` command in a shell block names a command, a subcommand and options the
 * CLI has (its help text shows them). The pictures, the runbook and the CLI reference have
 * their own drift tests (they are generated).
 */
const markdown = execFileSync('git', ['ls-files', 'README.md', 'docs'], { cwd: REPO_ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f.endsWith('.md') && existsSync(join(REPO_ROOT, f)));
const text = (file: string) => readFileSync(join(REPO_ROOT, file), 'utf8');

/** GitHub's heading slug: lower case, punctuation dropped, spaces to dashes. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchorsOf(file: string): Set<string> {
  const body = text(file);
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of body.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (heading) {
      const base = slug(heading[1]!.replace(/`/g, ''));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n ? `${base}-${n}` : base);
    }
  }
  for (const m of body.matchAll(/<a id="([^"]+)"><\/a>/g)) anchors.add(m[1]!);
  return anchors;
}

/** Relative links outside code blocks and code spans: `[text](target)`. */
function linksOf(body: string): string[] {
  const prose = body.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

/** An option the command's help shows, one every command takes, or (with --aws in the help) an AWS option. */
const known = (help: string, option: string): boolean =>
  help.includes(`--${option}`) ||
  option === 'format' ||
  option === 'help' ||
  (help.includes('--aws') && option in AWS_OPTIONS);

describe('the docs stand on the repository (README.md, docs/)', () => {
  it('every relative link names a file that exists, and an anchor that file has', () => {
    const broken: string[] = [];
    for (const file of markdown) {
      for (const target of linksOf(text(file))) {
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const resolved = path === '' ? file : normalize(join(dirname(file), decodeURI(path)));
        if (!existsSync(join(REPO_ROOT, resolved))) broken.push(`${file}: ${target} (no ${resolved})`);
        else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
          broken.push(`${file}: ${target} (no #${anchor} in ${resolved})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every cutpoint command in a shell block names a command, subcommand and options the CLI has', async () => {
    const helps = new Map<string, string>();
    for (const [name, load] of Object.entries(COMMANDS)) helps.set(name, (await load()).help);
    const wrong: string[] = [];
    let seen = 0;
    for (const file of markdown) {
      for (const block of text(file).matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
        for (const line of block[1]!.replace(/\\\n\s*/g, ' ').split('\n')) {
          const m = /(?:^|[\s;(|&$])(?:npx )?cutpoint ([a-z]+)(?: ([a-z][a-z-]*))?((?: [^#\n]*)?)/.exec(line);
          if (!m || line.trimStart().startsWith('#')) continue;
          seen++;
          const [, command, sub, rest] = m as unknown as [string, string, string | undefined, string];
          const help = helps.get(command);
          if (!help) {
            wrong.push(`${file}: ${line.trim()} (no command ${command})`);
            continue;
          }
          const subs = Object.keys(TOPICS[command]?.subcommands ?? {});
          if (sub && subs.length && !subs.includes(sub) && !sub.startsWith('-'))
            wrong.push(`${file}: ${line.trim()} (no ${command} subcommand ${sub})`);
          for (const option of rest.matchAll(/ --([a-z][a-z0-9-]*)/g))
            if (!known(help, option[1]!)) wrong.push(`${file}: ${line.trim()} (${command} has no --${option[1]})`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(seen).toBeGreaterThan(20);
  });

  it('every citation of a docs section by name (docs/<file>.md "Heading") names a heading that file has', () => {
    const tracked = execFileSync(
      'git',
      ['ls-files', 'src', 'functions', 'infra', 'statemachines', 'test', 'eslint', 'bench'],
      {
        cwd: REPO_ROOT,
        encoding: 'utf8',
      },
    )
      .split('\n')
      .filter((f) => /\.(ts|js|json)$/.test(f) && existsSync(join(REPO_ROOT, f)));
    const headings = new Map<string, Set<string>>();
    const headingsOf = (doc: string): Set<string> => {
      let found = headings.get(doc);
      if (!found) {
        found = new Set(
          [...text(doc).matchAll(/^#{1,6} (.+)$/gm)].flatMap((m) => [m[1]!.trim(), m[1]!.replace(/`/g, '').trim()]),
        );
        headings.set(doc, found);
      }
      return found;
    };
    const wrong: string[] = [];
    let cited = 0;
    for (const file of tracked) {
      const body = readFileSync(join(REPO_ROOT, file), 'utf8');
      for (const m of body.matchAll(/(docs\/[a-z-]+\.md),? (["'])((?:(?!\2)[^\n]|\n\s*(?:\*|\/\/)?\s*){2,120}?)\2/g)) {
        const [, doc, , raw] = m as unknown as [string, string, string, string];
        const heading = raw.replace(/\s*\n\s*(?:\*|\/\/)?\s*/g, ' ').trim();
        cited++;
        if (!existsSync(join(REPO_ROOT, doc))) wrong.push(`${file}: ${doc} does not exist`);
        else if (!headingsOf(doc).has(heading)) wrong.push(`${file}: ${doc} has no heading "${heading}"`);
      }
    }
    expect(wrong).toEqual([]);
    expect(cited).toBeGreaterThan(100);
  });

  it('every citation of a docs anchor (docs/<file>.md#anchor) in the code, tests and docs names an anchor that file has', () => {
    const tracked = execFileSync('git', ['ls-files'], { cwd: REPO_ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((f) => /\.(ts|js|json|md)$/.test(f) && existsSync(join(REPO_ROOT, f)));
    const wrong: string[] = [];
    let cited = 0;
    for (const file of tracked) {
      for (const m of readFileSync(join(REPO_ROOT, file), 'utf8').matchAll(
        /(?<![\w/.])(docs\/[a-z0-9/_-]+\.md)#([a-z0-9-]+)/g,
      )) {
        cited++;
        const [, doc, anchor] = m as unknown as [string, string, string];
        if (!existsSync(join(REPO_ROOT, doc))) wrong.push(`${file}: ${doc} does not exist`);
        else if (!anchorsOf(doc).has(anchor)) wrong.push(`${file}: ${doc} has no #${anchor}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(cited).toBeGreaterThan(100);
  });
});
