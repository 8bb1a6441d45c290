import { deliveryPages } from './delivery.js';
import { generationPages } from './generation.js';
import type { RunbookPage } from './model.js';
import { qualityPages } from './quality.js';
import { renderIndex, renderPage } from './render.js';
import { quarantinePage } from './stream-quarantine.js';
import { streamPages } from './stream.js';

/** Where the pages live, relative to the repository root. */
export const RUNBOOK_DIR = 'docs/runbook';

export function runbookPages(): RunbookPage[] {
  return [...deliveryPages(), ...qualityPages(), ...streamPages(), quarantinePage(), ...generationPages()];
}

/** Every runbook file, path (relative to the repository root) → content, in memory. */
export function runbookFiles(): Map<string, string> {
  const pages = runbookPages();
  const files = new Map<string, string>([[`${RUNBOOK_DIR}/README.md`, renderIndex(pages)]]);
  for (const page of pages) {
    const path = `${RUNBOOK_DIR}/${page.subsystem}/${page.state}.md`;
    if (files.has(path)) throw new Error(`two runbook pages for ${path}`);
    files.set(path, renderPage(page));
  }
  return files;
}
