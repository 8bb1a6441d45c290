import { build } from 'esbuild';
const entry = process.argv[2];
const r = await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', packages: 'external', write: false, outdir: '/tmp/x', metafile: true, logLevel: 'silent' });
const inputs = r.metafile.inputs;
// BFS from entry, static imports only
const seen = new Map([[entry, null]]); const q = [entry]; const pk = new Map();
while (q.length) { const f = q.shift(); for (const i of inputs[f]?.imports ?? []) { if (i.kind === 'dynamic-import') continue; if (i.external) { if (!i.path.startsWith('node:') && !pk.has(i.path)) pk.set(i.path, f); continue; } if (!seen.has(i.path)) { seen.set(i.path, f); q.push(i.path); } } }
const chain = (f) => { const c = []; while (f) { c.push(f); f = seen.get(f); } return c.reverse().join(' > '); };
for (const [p, f] of pk) console.log(p, ' <= ', chain(f));
console.log(seen.size, 'src files');
