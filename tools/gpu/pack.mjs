// Pack what tools/gpu/measure.mjs needs on a GPU machine that reaches no registry: the built @rlvr
// packages and their runtime dependencies, trimmed (no types, maps or tests; tfjs's Node bundles and
// wasm binaries only; Dawn's linux-x64 binary only), with the script, into tools/gpu/pack/ (under
// 64 MiB, checked). Build first (npm run build), with the optional peer installed (npm i webgpu).
//   node tools/gpu/pack.mjs        then on the GPU machine: node tools/gpu/pack/measure.mjs
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
const out = join(root, 'tools/gpu/pack');
const LIMIT = 64 * 1024 * 1024;

/** The directory of package `name` as Node resolves it from `from` (a package directory). */
function packageDir(name, from) {
  for (let d = from; ; d = dirname(d)) {
    const p = join(d, 'node_modules', name);
    if (existsSync(join(p, 'package.json'))) return p;
    if (d === dirname(d)) throw new Error(`${name} is not installed (needed by ${relative(root, from)})`);
  }
}

/** Whether a file of package `name` goes into the pack. */
function keep(name, rel) {
  if (/\.(d\.ts|d\.mts|map|md|ts)$/.test(rel) && !rel.endsWith('.cts')) return false;
  if (/(^|\/)(test|tests|__tests__|src)\//.test(rel) && !name.startsWith('@rlvr/')) return false;
  if (/\.test\./.test(rel) || rel.endsWith('.tsbuildinfo')) return false;
  if (name === 'tiktoken') return !rel.startsWith('lite/') && !/^encoders\/.*\.c?js$/.test(rel); // the encoders are read as JSON
  if (name === 'webgpu') return rel === 'package.json' || rel === 'index.js' || rel.startsWith('dist/linux-x64/');
  if (name.startsWith('@tensorflow/')) return rel === 'package.json' || /^dist\/[^/]*(\.node\.js|\.wasm|wasm[^/]*\.js)$/.test(rel);
  if (name.startsWith('@rlvr/')) return rel === 'package.json' || /^(dist|bin|vendor|assets|schema)\//.test(rel);
  return true;
}

function* files(dir, base = dir) {
  for (const e of readdirSync(dir)) {
    if (e === 'node_modules') continue;
    const p = join(dir, e);
    if (statSync(p).isDirectory()) yield* files(p, base);
    else yield relative(base, p);
  }
}

rmSync(out, { recursive: true, force: true });
const seen = new Map(); // name -> source dir
const queue = [
  ['@rlvr/reference-trainer', root],
  ['webgpu', root],
];
while (queue.length > 0) {
  const [name, from] = queue.shift();
  if (seen.has(name)) continue;
  const dir = packageDir(name, from);
  seen.set(name, dir);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  for (const dep of Object.keys(manifest.dependencies ?? {})) if (dep !== '@webgpu/types' && dep !== 'debug') queue.push([dep, dir]);
}
let bytes = 0;
for (const [name, dir] of seen) {
  for (const rel of files(dir)) {
    if (!keep(name, rel)) continue;
    const to = join(out, 'node_modules', name, rel);
    mkdirSync(dirname(to), { recursive: true });
    cpSync(join(dir, rel), to);
    bytes += statSync(to).size;
  }
}
for (const f of ['measure.mjs', 'torch_reference.py']) cpSync(join(root, 'tools/gpu', f), join(out, f));
console.log(`tools/gpu/pack: ${seen.size} packages, ${(bytes / 2 ** 20).toFixed(1)} MiB`);
if (bytes > LIMIT) {
  console.error(`over the 64 MiB a GPU machine is sent: trim more in tools/gpu/pack.mjs`);
  process.exit(1);
}
