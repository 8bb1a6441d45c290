// `npm run pack:check` (CI runs it after the tests): the CLI as an operator installs it.
// npm pack → install the tarball with production dependencies only into an empty
// directory → the installed size must stay within the budget (the local runtime's engines,
// workspace packages/local, are not production dependencies) → `cutpoint --help`,
// `--version`, an `--aws` command without credentials (a credentials or stack diagnostic,
// never a missing module) and a local command (the local runtime's install hint, exit 2)
// all work there. Needs the npm registry; nothing else. Exit 1 on any failed check.
import { execFileSync, spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BUDGET_MB = 150;
const root = fileURLToPath(new URL('../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'cutpoint-pack-'));
const failures = [];

function check(ok, what) {
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}\n`);
  if (!ok) failures.push(what);
}

/** Bytes under `dir` (files' own sizes; links not followed). */
function sizeOf(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? sizeOf(path) : lstatSync(path).size;
  }
  return total;
}

try {
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: root, encoding: 'utf8' }),
  )[0];
  const tarball = join(work, packed.filename);
  process.stdout.write(`packed ${packed.filename}: ${packed.entryCount} files, ${packed.size} bytes\n`);
  check(
    packed.files.some((f) => f.path === 'dist/cli/main.js'),
    'the tarball holds the built CLI (dist/cli/main.js)',
  );

  const home = join(work, 'home');
  const app = join(work, 'app');
  for (const dir of [home, app]) execFileSync('mkdir', ['-p', dir]);
  writeFileSync(join(app, 'package.json'), '{ "private": true }\n');
  execFileSync('npm', ['install', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', tarball], {
    cwd: app,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const mb = sizeOf(join(app, 'node_modules')) / 1e6;
  process.stdout.write(`installed size: ${mb.toFixed(1)} MB (budget ${BUDGET_MB} MB)\n`);
  check(mb <= BUDGET_MB, `installed size ${mb.toFixed(1)} MB <= ${BUDGET_MB} MB`);

  // No credentials anywhere: no variables, no shared files, no instance metadata.
  const env = { PATH: process.env.PATH, HOME: home, AWS_REGION: 'eu-west-1', AWS_EC2_METADATA_DISABLED: 'true' };
  env.AWS_CONFIG_FILE = join(home, 'none');
  env.AWS_SHARED_CREDENTIALS_FILE = join(home, 'none');
  const bin = join(app, 'node_modules', 'cutpoint', 'bin', 'cutpoint.js');
  const cutpoint = (...args) => {
    const r = spawnSync(process.execPath, [bin, ...args], { cwd: app, env, encoding: 'utf8', timeout: 60_000 });
    process.stdout.write(`$ cutpoint ${args.join(' ')} → exit ${r.status}\n${r.stderr}`);
    return r;
  };
  const noMissingModule = (r) => !/ERR_MODULE_NOT_FOUND|Cannot find (module|package)/.test(r.stdout + r.stderr);

  const help = cutpoint('--help');
  check(help.status === 0 && help.stdout.includes('usage: cutpoint'), 'cutpoint --help prints the usage');
  const version = cutpoint('--version');
  check(
    version.status === 0 && /^cutpoint \S+ \(node .*; bundle\)$/.test(version.stdout.trim()),
    'cutpoint --version runs the bundle',
  );
  const aws = cutpoint('delivery', 'inspect-all', '--aws', '--stack', 'CutpointPackCheck');
  check(
    (aws.status === 1 || aws.status === 2) && noMissingModule(aws) && /credential|stack/i.test(aws.stderr),
    'an --aws command without credentials fails with a credentials/stack diagnostic',
  );
  env.CUTPOINT_STATE_DIR = join(work, 'state');
  const local = cutpoint('local', 'up');
  check(
    local.status === 2 && /^local\.runtime_missing: .*npm install /m.test(local.stderr) && noMissingModule(local),
    'a local command says how to install the local runtime (local.runtime_missing, exit 2)',
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (failures.length) {
  process.stderr.write(`pack check: ${failures.length} check(s) failed\n`);
  process.exit(1);
}
process.stdout.write('pack check: every check passed\n');
