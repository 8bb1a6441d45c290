import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/main.js';
import { CLI_REFERENCE, cliReference } from '../../src/docs/cli-reference/generate.js';
import { REPO_ROOT } from '../../src/local/asl.js';

/** docs/cli.md is generated from the help texts (`npm run docs:cli`): a help text changed without it fails here. */
describe('the CLI reference (docs/cli.md)', () => {
  it('is what `npm run docs:cli` writes from the help texts now, one section per command', async () => {
    const text = await cliReference();
    for (const name of Object.keys(COMMANDS)) expect(text).toContain(`## cutpoint ${name}\n`);
    expect(readFileSync(`${REPO_ROOT}${CLI_REFERENCE}`, 'utf8'), 'run `npm run docs:cli` and commit docs/cli.md').toBe(
      text,
    );
  });
});
