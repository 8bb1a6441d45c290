#!/usr/bin/env node
// What `cdk deploy --all` uploads, read from a bundled synth (`npx cdk synth --quiet`):
// each stack's template, and each Lambda's asset directory (esbuild's index.mjs and its
// source map, zipped by the CLI at deploy time). Prints a Markdown table on stdout.
// Usage: node scripts/asset-sizes.mjs [cdk.out]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const out = process.argv[2] ?? 'cdk.out';
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
const dirSize = (dir) => readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);

const templates = readdirSync(out)
  .filter((f) => f.endsWith('.template.json'))
  .sort();
if (templates.length === 0) {
  process.stderr.write(`docs.synth_missing: no *.template.json in ${out}; run \`npx cdk synth --quiet\` first\n`);
  process.exit(1);
}
const rows = [];
let unbundled = 0;
let totalCode = 0;
let totalUploaded = 0;
for (const file of templates) {
  const template = JSON.parse(readFileSync(join(out, file), 'utf8'));
  const size = statSync(join(out, file)).size;
  totalUploaded += size;
  rows.push([`template ${file}`, '', kib(size)]);
  for (const resource of Object.values(template.Resources ?? {})) {
    const assetPath = resource.Metadata?.['aws:asset:path'];
    if (resource.Type !== 'AWS::Lambda::Function' || !assetPath) continue;
    const dir = join(out, assetPath);
    const entry = readdirSync(dir).find((name) => name === 'index.mjs');
    if (!entry) unbundled++;
    const code = entry ? statSync(join(dir, entry)).size : 0;
    const uploaded = dirSize(dir);
    totalCode += code;
    totalUploaded += uploaded;
    const path = String(resource.Metadata['aws:cdk:path']).replace(/\/Function\/Resource$/, '');
    rows.push([`function ${path}`, entry ? kib(code) : '(not bundled)', kib(uploaded)]);
  }
}
const functions = rows.filter(([what]) => what.startsWith('function ')).length;
process.stdout.write('| what | index.mjs | uploaded (before zip) |\n|---|---|---|\n');
for (const row of rows) process.stdout.write(`| ${row.join(' | ')} |\n`);
process.stdout.write(`| **total** | ${kib(totalCode)} | ${kib(totalUploaded)} |\n`);
process.stdout.write(
  `\n${templates.length} templates, ${functions} functions${unbundled ? `, ${unbundled} not bundled (synth without bundling?)` : ''}\n`,
);
