// `npm run build` (and `prepare`, which `npm ci` runs): the CLI as plain JavaScript in
// dist/cli/, so `cutpoint` starts without transpiling TypeScript. One ESM bundle split by
// dynamic import: the front (help, --version, grammar) is one small file and each command
// loads its own chunk; dependencies stay in node_modules (loaded only by the command that
// needs them). The processes the CLI forks (the local runtime's daemon, the ClickHouse
// host, the bounded reader and its probe worker) are entries of their own beside it, where
// their parents look for them (`./daemon.js` next to the code that forks it). dist/cli/ is
// two levels below the repository like src/<dir>/, so `new URL('../../', import.meta.url)`
// still names the repository root. build.json lists every source file the bundle was
// built from: bin/cutpoint.js uses the bundle only while none of them is newer.
import { rename, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const out = `${root}dist/cli`;
const tmp = `${root}dist/cli.${process.pid}.tmp`;

// esbuild is a devDependency: an install without them (npm ci --omit=dev) keeps the
// sources-through-tsx path and still succeeds.
let build;
try {
  ({ build } = await import('esbuild'));
} catch {
  process.stderr.write('cutpoint: esbuild is not installed; the CLI runs from its TypeScript sources (slower start)\n');
  process.exit(0);
}

const startedAt = Date.now();
await rm(tmp, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: {
    main: 'src/cli/main.ts',
    daemon: 'src/local/daemon.ts',
    'clickhouse-host-server': 'src/local/clickhouse-host-server.ts',
    'probe-worker': 'src/adapters/reader-process/probe-worker.ts',
    child: 'src/adapters/reader-process/child.ts',
  },
  outdir: tmp,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  packages: 'external',
  metafile: true,
  logLevel: 'warning',
});
const inputs = Object.keys(result.metafile.inputs).filter((f) => !f.includes('node_modules/'));
// Written last: a bundle without its build.json is never used.
await writeFile(`${tmp}/build.json`, `${JSON.stringify({ builtAt: startedAt, inputs })}\n`);
await rm(out, { recursive: true, force: true });
await rename(tmp, out);
process.stderr.write(`cutpoint: built dist/cli/ from ${inputs.length} source files in ${Date.now() - startedAt} ms\n`);
