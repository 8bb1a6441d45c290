import { RUNBOOK_DIR, runbookPageOf, runbookPages } from './ref.js';
import { renderIndex, renderPage } from './render.js';

export { RUNBOOK_DIR, runbookPages };

/** Every runbook file, path (relative to the repository root) → content, in memory. */
export function runbookFiles(): Map<string, string> {
  const pages = runbookPages();
  const files = new Map<string, string>([[`${RUNBOOK_DIR}/README.md`, renderIndex(pages)]]);
  for (const page of pages) {
    const path = runbookPageOf(page.subsystem, page.state, RUNBOOK_DIR);
    if (files.has(path)) throw new Error(`two runbook pages for ${path}`);
    files.set(path, renderPage(page));
  }
  return files;
}
