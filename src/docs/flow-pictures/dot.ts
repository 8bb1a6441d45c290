import type { AslState } from '../../../statemachines/spec/task.js';
import { nestedMachines, type AslDefinition } from '../../local/asl.js';

/**
 * A flow's picture as Graphviz DOT, from its ASL: every state (Tasks with the cut points
 * their step crosses, Choices as diamonds, Fail and Succeed ends), the success path in solid
 * edges, each Catch as a dashed red edge labelled with what it catches, a Retry as a mark on
 * its Task, and each Map's or Parallel's nested machine as a box of its own. Pure: what
 * marks a Task comes from `marks`.
 */
export interface PictureMarks {
  /** The cut points a Task state's step crosses (none for a service integration). */
  cutPoints(state: string, definition: AslState): readonly string[];
  /** What a Task does besides its step (it starts another flow; a Map writes its results). */
  note(state: string, definition: AslState): string | undefined;
}

const RED = '#b03a2e';
const FONT = 'Helvetica';

const html = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const id = (scope: string, state: string): string => JSON.stringify(`${scope}${state}`);

/** At most two error names, then how many more. */
function errorsLabel(errors: readonly string[]): string {
  const shown = errors.slice(0, 2).join(', ');
  return errors.length > 2 ? `${shown} +${errors.length - 2}` : shown;
}

/** A Retry, as a mark: how many error names it retries on. */
const retryMark = (s: AslState): string[] => {
  const errors = new Set((s.Retry ?? []).flatMap((r) => r.ErrorEquals));
  return errors.size ? [`<font color="#555555">↻ retries ${errors.size} error${errors.size === 1 ? '' : 's'}</font>`] : [];
};

/** A Choice rule, short: `$.state = PUBLISHED`, `$.done is true`; a compound rule by its operator. */
function ruleLabel(rule: Record<string, unknown>): string {
  const variable = typeof rule.Variable === 'string' ? rule.Variable : '';
  for (const op of ['And', 'Or', 'Not'])
    if (op in rule) {
      const n = Array.isArray(rule[op]) ? (rule[op] as unknown[]).length : 1;
      return `${op.toLowerCase()} of ${n} rule${n === 1 ? '' : 's'}`;
    }
  const [op, value] = Object.entries(rule).find(([k]) => k !== 'Variable' && k !== 'Next') ?? ['', ''];
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  if (op.startsWith('IsPresent')) return `${variable} ${value === true ? 'present' : 'absent'}`;
  if (op.startsWith('BooleanEquals')) return `${variable} is ${shown}`;
  const symbol = op.includes('GreaterThanEquals')
    ? '≥'
    : op.includes('LessThanEquals')
      ? '≤'
      : op.includes('GreaterThan')
        ? '>'
        : op.includes('LessThan')
          ? '<'
          : op.includes('Matches')
            ? '~'
            : '=';
  return `${variable} ${symbol} ${shown.length > 28 ? `${shown.slice(0, 27)}…` : shown}`;
}

function nodeOf(scope: string, state: string, s: AslState, marks: PictureMarks): string {
  const title = `<b>${html(state)}</b>`;
  switch (s.Type) {
    case 'Task': {
      const lines = [title];
      const note = marks.note(state, s);
      if (note) lines.push(`<i>${html(note)}</i>`);
      for (const cut of marks.cutPoints(state, s)) lines.push(`<font color="${RED}">✂ ${html(cut)}</font>`);
      lines.push(...retryMark(s));
      return `${id(scope, state)} [label=<${lines.join('<br/>')}>, style="rounded,filled", fillcolor="#eaf2f8"];`;
    }
    case 'Choice':
      return `${id(scope, state)} [label=<${title}>, shape=diamond, style=filled, fillcolor="#fef9e7"];`;
    case 'Fail': {
      const error = typeof s.Error === 'string' ? `<br/>${html(s.Error)}` : '';
      return `${id(scope, state)} [label=<${title}${error}>, shape=octagon, style=filled, fillcolor="#fadbd8"];`;
    }
    case 'Succeed':
      return `${id(scope, state)} [label=<${title}>, shape=box, style="rounded,filled", fillcolor="#d5f5e3"];`;
    case 'Map':
    case 'Parallel': {
      const kind = s.Type === 'Map' ? ((s.ItemReader ? 'Distributed Map' : 'Map') as string) : 'Parallel';
      const note = marks.note(state, s);
      const lines = [title, `<i>${kind}${note ? `: ${html(note)}` : ''}</i>`];
      for (const cut of marks.cutPoints(state, s)) lines.push(`<font color="${RED}">✂ ${html(cut)}</font>`);
      lines.push(...retryMark(s));
      return `${id(scope, state)} [label=<${lines.join('<br/>')}>, shape=box3d, style=filled, fillcolor="#f4ecf7"];`;
    }
    default:
      return `${id(scope, state)} [label=<${title}<br/><i>${html(s.Type)}</i>>, style="rounded,dashed"];`;
  }
}

/** The edges leaving one state: Next or End, Choice rules and Default, Catchers. */
function edgesOf(scope: string, state: string, s: AslState, end: string): string[] {
  const from = id(scope, state);
  const to = (next: string) => id(scope, next);
  const edges: string[] = [];
  if (typeof s.Next === 'string') edges.push(`${from} -> ${to(s.Next)};`);
  if (s.End === true) edges.push(`${from} -> ${end};`);
  if (s.Type === 'Choice') {
    for (const rule of (s.Choices as Array<Record<string, unknown>> | undefined) ?? [])
      edges.push(`${from} -> ${to(String(rule.Next))} [label=${JSON.stringify(` ${ruleLabel(rule)}`)}];`);
    if (typeof s.Default === 'string') edges.push(`${from} -> ${to(s.Default)} [label=" default", style=dotted];`);
  }
  for (const c of s.Catch ?? [])
    edges.push(
      `${from} -> ${to(c.Next)} [style=dashed, color="${RED}", fontcolor="${RED}", label=${JSON.stringify(` ${errorsLabel(c.ErrorEquals)}`)}];`,
    );
  return edges;
}

/** One machine (the flow, or a Map's or Parallel's nested one) as DOT lines under `scope`. */
function machineLines(definition: AslDefinition, scope: string, marks: PictureMarks): string[] {
  const start = JSON.stringify(`${scope}__start`);
  const end = JSON.stringify(`${scope}__end`);
  const lines = [
    `${start} [label="", shape=circle, width=0.18, style=filled, fillcolor=black];`,
    `${start} -> ${id(scope, definition.StartAt)};`,
  ];
  // The end dot only where a state ends the machine without a Succeed or Fail state.
  if (Object.values(definition.States).some((s) => s.End === true))
    lines.push(`${end} [label="", shape=doublecircle, width=0.14, style=filled, fillcolor=black];`);
  for (const [state, s] of Object.entries(definition.States)) {
    lines.push(nodeOf(scope, state, s, marks), ...edgesOf(scope, state, s, end));
    nestedMachines(s).forEach((machine, i) => {
      const inner = `${scope}${state}/${i}/`;
      lines.push(
        `subgraph ${JSON.stringify(`cluster_${inner}`)} {`,
        `label=<${html(s.Type === 'Map' ? `each item of ${state}` : `branch ${i + 1} of ${state}`)}>; style="rounded,dashed"; color="#7d3c98"; fontsize=9;`,
        ...machineLines(machine, inner, marks),
        '}',
        `${id(scope, state)} -> ${JSON.stringify(`${inner}__start`)} [style=dotted, color="#7d3c98", arrowhead=none];`,
      );
    });
  }
  return lines;
}

/** A description in lines of at most 90 characters, HTML-escaped. */
function wrapped(text: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + word.length + 1 > 90) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].map(html).join('<br/>');
}

export function flowDot(flow: string, description: string, definition: AslDefinition, marks: PictureMarks): string {
  return [
    `digraph ${JSON.stringify(flow)} {`,
    `graph [rankdir=TB, fontname="${FONT}", fontsize=11, nodesep=0.3, ranksep=0.32, labelloc=t, label=<<b>${html(flow)}</b><br/><font point-size="9">${wrapped(description)}</font>>];`,
    `node [fontname="${FONT}", fontsize=9, shape=box, margin="0.12,0.05"];`,
    `edge [fontname="${FONT}", fontsize=8, color="#333333"];`,
    ...machineLines(definition, '', marks),
    '}',
    '',
  ].join('\n');
}
