import { readFileSync } from 'node:fs';

/**
 * Reading the code blocks of the project's Markdown (README.md, docs/*.md) for the tests
 * that prove what they show works: a block is addressed by the HTML comment right before
 * it (`<!-- flow-input: deliver-window -->`, invisible when rendered), a section by its
 * heading.
 */

export const repoFile = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The fenced block right after `<!-- <marker> -->` (one blank line allowed), or undefined. */
export function markedBlock(text: string, marker: string): { lang: string; body: string } | undefined {
  const escaped = marker.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`<!-- ${escaped} -->\\n\\n?\`\`\`([a-z]*)\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(text);
  return match ? { lang: match[1]!, body: match[2]! } : undefined;
}

/** Every marker of a kind (`flow-input`): the names after the colon, in order. */
export function markerNames(text: string, kind: string): string[] {
  return [...text.matchAll(new RegExp(`<!-- ${kind}: ([a-z0-9_-]+) -->`, 'g'))].map((m) => m[1]!);
}

/** The text under a heading (`## Title`, any level), up to the next heading of the same or a higher level. */
export function section(text: string, heading: string): string | undefined {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '') === heading);
  if (start < 0) return undefined;
  const level = /^#+/.exec(lines[start]!)![0].length;
  let inFence = false;
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    if (lines[i]!.startsWith('```')) inFence = !inFence;
    const m = /^(#+) /.exec(lines[i]!);
    if (!inFence && m && m[1]!.length <= level) {
      end = i;
      break;
    }
  }
  return lines.slice(start + 1, end).join('\n');
}

/** The fenced blocks of a text with their language (`sh`, `json`, `yaml`…). */
export function fencedBlocks(text: string): Array<{ lang: string; body: string }> {
  return [...text.matchAll(/```([a-z]*)\n([\s\S]*?)\n```/g)].map((m) => ({ lang: m[1]!, body: m[2]! }));
}
