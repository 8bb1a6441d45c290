import { ownEntry } from '../domain/own-entry.js';
import { OPTION_TEXT, TOPICS } from './help-topics.js';

/**
 * The help texts: `cutpoint --help` (a table of commands, from help-topics.ts alone) and
 * `cutpoint <command> <sub> --help` (the usage lines and description of that subcommand
 * cut from its command's help text, its options one line each, its examples).
 */

export const COMMAND_NAMES = Object.keys(TOPICS);

/** `text` in lines of at most `width` characters, broken at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}

export const TOP_HELP = `cutpoint — exactly-once delivery and publication on AWS that survives crashes,
timeouts and lost responses.

usage: cutpoint <command> <subcommand> [options]
       cutpoint <command> [<subcommand>] --help      (or: cutpoint help <command> [<subcommand>])
       cutpoint --version

commands:
${COMMAND_NAMES.map((name) => {
  const topic = TOPICS[name] as (typeof TOPICS)[string];
  return [
    `  ${name.padEnd(10)} ${topic.summary}`,
    ...wrap(Object.keys(topic.subcommands).join(' | '), 76).map((l) => `             ${l}`),
  ].join('\n');
}).join('\n')}

options every command takes:
  ${OPTION_TEXT['--format']}
  ${OPTION_TEXT['--help']}

examples:
  cutpoint demo                                    (npm start)
  cutpoint stream append --help
  cutpoint delivery inspect-all --format text

Every command honours CUTPOINT_FAULTS (e.g. "generation.commit.cas:lose-response") to
rehearse a fault at a named cut point locally (\`cutpoint faults list\` names them all).
Results go to stdout (JSON unless --format text); diagnostics go to stderr as
"<code>: <message>" with stdout empty. Exit status: 0 success, 1 refused or failed,
2 usage error (an unknown command, subcommand or option, a missing or malformed argument,
or a local command where the local runtime is not installed).`;

/** `--x` options a usage line shows, in order. */
function optionsOf(lines: readonly string[]): string[] {
  const seen: string[] = [];
  for (const line of lines)
    for (const m of line.matchAll(/--([a-z][a-z0-9-]*)/g)) if (!seen.includes(`--${m[1]}`)) seen.push(`--${m[1]}`);
  return seen;
}

/** The one-line description of `option` as `command sub` takes it. */
export function optionText(command: string, sub: string, option: string): string | undefined {
  return (
    ownEntry(OPTION_TEXT, `${command} ${sub} ${option}`) ??
    ownEntry(OPTION_TEXT, `${command} ${option}`) ??
    ownEntry(OPTION_TEXT, option)
  );
}

/**
 * The blocks of a command's help text (`cutpoint <command> <verbs> …` and its indented
 * lines) that document `sub` (`a|b|c` documents a, b and c; `[a]`, a default, documents a),
 * and the notes between or after
 * the blocks.
 */
function blocksOf(commandHelp: string, command: string, sub: string): { blocks: string[][]; notes: string[] } {
  const blocks: string[][] = [];
  const notes: string[] = [];
  let current: string[] | undefined;
  let inNotes = false;
  for (const line of commandHelp.split('\n')) {
    const m = new RegExp(`^cutpoint ${command}(?: \\[?([a-z][a-z|-]*)\\]?)?`).exec(line);
    if (m) {
      inNotes = false;
      const subs = m[1]?.split('|') ?? [];
      current = subs.includes(sub) || (subs.length === 0 && sub === '') ? [line] : undefined;
      if (current) blocks.push(current);
    } else if (/^\s/.test(line) && !inNotes) {
      current?.push(line);
    } else {
      // A run of unindented lines between blocks is one note.
      if (inNotes) notes[notes.length - 1] += `\n${line}`;
      else notes.push(line);
      inNotes = true;
      current = undefined;
    }
  }
  return { blocks, notes };
}

/** True when `command` has a subcommand `sub` the help documents. */
export function hasSubcommand(command: string, sub: string): boolean {
  const topic = ownEntry(TOPICS, command);
  return topic !== undefined && Object.hasOwn(topic.subcommands, sub);
}

const CONTINUATION = /^\s+\[?--/;

/** A block's usage (its first line and the option lines continuing it) and its description. */
function split(block: readonly string[]): { usage: string; description: string[] } {
  let end = 1;
  while (end < block.length && CONTINUATION.test(block[end] as string)) end++;
  return {
    usage: block
      .slice(0, end)
      .map((l, i) => (i === 0 ? l : `    ${l.trim()}`))
      .join('\n'),
    description: block.slice(end),
  };
}

/**
 * `cutpoint <command> <sub> --help`: usage, description, every option with one line, the
 * examples, and the notes of the command's help that concern this subcommand.
 */
export function subcommandHelp(command: string, sub: string, commandHelp: string): string {
  const { blocks, notes } = blocksOf(commandHelp, command, sub);
  const parts = blocks.map(split);
  const topic = ownEntry(TOPICS, command);
  const extra = [...(topic?.options?.['*'] ?? []), ...((topic?.options && ownEntry(topic.options, sub)) ?? [])];
  const options = [...new Set([...optionsOf([...parts.map((p) => p.usage), extra.join(' ')]), '--format', '--help'])];
  const relevant = notes.filter((n) => new RegExp(`(^|[\\s,(])(every|${sub})\\b`).test(n));
  return [
    'usage:',
    ...parts.map((p) => `  ${p.usage}`),
    '',
    ...parts.flatMap((p) => p.description),
    '',
    'options:',
    ...options.map((o) => `  ${optionText(command, sub, o) ?? o}`),
    '',
    'examples:',
    ...((topic && ownEntry(topic.subcommands, sub)) ?? []).map((e) => `  ${e}`),
    ...(relevant.length ? ['', ...relevant] : []),
  ].join('\n');
}
