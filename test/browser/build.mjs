/**
 * Build the browser page into OUT (default dist/page): page/main.ts bundled by esbuild with the
 * `browser` export condition (the packages' browser entries: a `node:` import anywhere fails the
 * build), index.html, the embedded checkpoint (packages/reference-trainer/assets/warmup), tiktoken's
 * wasm and the cl100k_base ranks the pruned tokenizer is cut from, and tasks.json: three problems of
 * the embedded task. Run `npm run build` in test/browser first (the packages' dist/).
 *
 *   node test/browser/build.mjs [OUT]
 */
import { realpathSync } from 'node:fs';
import { copyFile, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { syntheticGenerator } from '@rlvr/tasks';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const CHECKPOINT = join(here, '../../packages/reference-trainer/assets/warmup');
const CHECKPOINT_FILES = ['config.json', 'model.safetensors', 'tokenizer.pruned.json', 'tokenizer_config.json'];
/** The embedded default's task (`rlvr train`'s `task`: one to two steps, one-digit amounts). */
const EMBEDDED_TASK = { minSteps: 1, maxSteps: 2, digits: 1 };

/** Build into `out` (replaced whole: built beside it, then renamed). Returns the bundle's size in bytes and its input files. */
export async function buildPage(out = join(here, 'dist/page')) {
  const tmp = `${out}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(join(tmp, 'checkpoint'), { recursive: true });
  await mkdir(join(tmp, 'tiktoken'), { recursive: true });
  const result = await build({
    entryPoints: [join(here, 'page/main.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    outfile: join(tmp, 'app.js'),
    conditions: ['browser'],
    legalComments: 'eof',
    logLevel: 'warning',
    metafile: true,
  });
  const tiktoken = join(dirname(require.resolve('tiktoken/encoders/cl100k_base.json')), '..');
  await Promise.all([
    copyFile(join(here, 'page/index.html'), join(tmp, 'index.html')),
    ...CHECKPOINT_FILES.map((f) => copyFile(join(CHECKPOINT, f), join(tmp, 'checkpoint', f))),
    copyFile(join(tiktoken, 'tiktoken_bg.wasm'), join(tmp, 'tiktoken/tiktoken_bg.wasm')),
    copyFile(join(tiktoken, 'encoders/cl100k_base.json'), join(tmp, 'tiktoken/cl100k_base.json')),
    writeFile(
      join(tmp, 'tasks.json'),
      JSON.stringify(
        syntheticGenerator(EMBEDDED_TASK)
          .tasks('browser-page', 3)
          .map(({ question, answer, solution }) => ({ question, answer, solution })),
      ),
    ),
  ]);
  await rm(out, { recursive: true, force: true });
  await rename(tmp, out);
  return { bytes: Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0), inputs: Object.keys(result.metafile.inputs) };
}

// run as a script (through a symbolic link too: Node gives this module its real path)
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = resolve(process.argv[2] ?? join(here, 'dist/page'));
  const { bytes } = await buildPage(out);
  console.log(`built ${out} (app.js ${(bytes / 2 ** 20).toFixed(1)} MiB); serve it with node test/browser/serve.mjs ${out}`);
}
