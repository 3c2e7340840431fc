/**
 * The packages as the registry would get them: `npm pack` of each (its `prepack` builds it), the tarball's file
 * list, then a project outside the repository with the tarballs unpacked as its `@rlvr/*` packages (third-party
 * dependencies linked from the repository's node_modules, so nothing is fetched), imported with `import` and with
 * `require` (Node >= 20.19 requires ES modules), and the installed bins run.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { satisfies } from 'semver';
import { beforeAll, describe, expect, it } from 'vitest';
import { BINS, PACKAGES, ROOT } from './packages.js';
import { run, usageOf } from './run.js';

interface Manifest {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

interface Packed {
  filename: string;
  files: { path: string }[];
}

const work = mkdtempSync(join(tmpdir(), 'rlvr-pack-'));
const app = join(work, 'app');
const packed = new Map<string, Packed>();

beforeAll(async () => {
  for (const p of PACKAGES) {
    const r = await run('npm', ['pack', '--json', '--pack-destination', work], join(ROOT, p.dir));
    if (r.status !== 0) throw new Error(`npm pack ${p.name} failed:\n${r.stderr}`);
    const [info] = JSON.parse(r.stdout.slice(r.stdout.indexOf('['))) as Packed[];
    packed.set(p.name, info!);
  }
  const modules = join(app, 'node_modules');
  mkdirSync(join(modules, '@rlvr'), { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry.startsWith('@rlvr') || entry.startsWith('.')) continue;
    symlinkSync(join(ROOT, 'node_modules', entry), join(modules, entry));
  }
  for (const p of PACKAGES) {
    const dest = join(modules, '@rlvr', p.name.slice('@rlvr/'.length));
    mkdirSync(dest);
    const r = await run('tar', ['-xzf', join(work, packed.get(p.name)!.filename), '--strip-components=1', '-C', dest], work);
    if (r.status !== 0) throw new Error(`unpacking ${p.name}: ${r.stderr}`);
  }
});

describe.each(PACKAGES)('$name from its tarball', (p) => {
  it('holds the build, its bins and README, and no tests or sources', async () => {
    const files = packed.get(p.name)!.files.map((f) => f.path);
    expect(files).toContain('package.json');
    expect(files).toContain('README.md');
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    for (const path of Object.values(p.bin)) expect(files).toContain(path.slice(2));
    expect(files.filter((f) => /\.test\.|^src\/|tsbuildinfo/.test(f))).toEqual([]);
  });

  it('declares its @rlvr dependencies as caret ranges that the sibling packages satisfy', () => {
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules', p.name, 'package.json'), 'utf8')) as Manifest;
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'] as const) {
      for (const [dep, range] of Object.entries(manifest[field] ?? {})) {
        const sibling = PACKAGES.find((q) => q.name === dep);
        if (!sibling) continue;
        // a caret range (changesets keeps it at the released version): patch releases of a sibling are taken, and
        // one copy of @rlvr/core serves every package (an exact pin would install a second one)
        expect({ dep, range }).toEqual({ dep, range: expect.stringMatching(/^\^\d+\.\d+\.\d+$/) });
        expect({ dep, range, satisfiedBy: sibling.version }).toEqual({
          dep,
          range,
          satisfiedBy: expect.toSatisfy((v: string) => satisfies(v, range)),
        });
      }
    }
  });

  it.each(p.subpaths)('%s loads with import and with require', async (sub) => {
    // a pattern subpath (./schema/*.json) is checked on every file of the tarball it matches
    const pattern = new RegExp(`^${sub.slice(2).replace(/[.]/g, '\\.').replace('*', '[^/]+')}$`);
    const targets = sub.includes('*')
      ? packed
          .get(p.name)!
          .files.map((f) => f.path)
          .filter((f) => pattern.test(f))
      : [sub.slice(2)];
    expect(targets.length).toBeGreaterThan(0);
    for (const target of targets) {
      const spec = target === '' ? p.name : `${p.name}/${target}`;
      // a JSON module's value is its default export; an ES module's is its namespace
      const esmCode = target.endsWith('.json')
        ? `const m = await import(${JSON.stringify(spec)}, { with: { type: 'json' } }); console.log(String(Object.keys(m.default).length))`
        : `const m = await import(${JSON.stringify(spec)}); console.log(String(Object.keys(m).length))`;
      const esm = await run(process.execPath, ['--no-warnings', '--input-type=module', '-e', esmCode], app);
      expect({ spec, status: esm.status, stderr: esm.stderr }).toEqual({ spec, status: 0, stderr: '' });
      expect(Number(esm.stdout)).toBeGreaterThan(0);
      const cjs = await run(
        process.execPath,
        ['--no-warnings', '-e', `console.log(String(Object.keys(require(${JSON.stringify(spec)})).length))`],
        app,
      );
      expect({ spec, status: cjs.status, stderr: cjs.stderr }).toEqual({ spec, status: 0, stderr: '' });
      expect(cjs.stdout).toBe(esm.stdout);
    }
  });
});

describe('@rlvr/policy without the @tensorflow/tfjs union package', () => {
  it('declares tfjs-core and its backends only, ships its gradient bundle, and differentiates with it', async () => {
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules/@rlvr/policy/package.json'), 'utf8')) as Manifest;
    expect(
      Object.keys(manifest.dependencies ?? {})
        .filter((d) => d.startsWith('@tensorflow/'))
        .sort(),
    ).toEqual([
      '@tensorflow/tfjs-backend-cpu',
      '@tensorflow/tfjs-backend-wasm',
      '@tensorflow/tfjs-backend-webgpu',
      '@tensorflow/tfjs-core',
    ]);
    expect(packed.get('@rlvr/policy')!.files.map((f) => f.path)).toContain('vendor/tf-gradients.js');
    // tfjs-core alone has no gradient for Square or MatMul; loading @rlvr/policy registers them (both module systems)
    const code = (load: string) =>
      `${load}; const g = tf.grads((x, w) => tf.sum(tf.square(tf.matMul(x, w))))([tf.tensor2d([[1, 2]]), tf.tensor2d([[3], [4]])]);` +
      ' console.log(JSON.stringify(g.map((t) => Array.from(t.dataSync()))))';
    const expected = `${JSON.stringify([
      [66, 88],
      [22, 44],
    ])}\n`; // d/dx (xw)^2 = 2(xw) w^T, d/dw = 2 x^T (xw); xw = 11
    const esm = await run(
      process.execPath,
      [
        '--no-warnings',
        '--input-type=module',
        '-e',
        code(
          "const tf = await import('@tensorflow/tfjs-core'); const p = await import('@rlvr/policy'); await p.selectBackend({ backend: 'cpu' }, { info() {} })",
        ),
      ],
      app,
    );
    expect({ status: esm.status, stderr: esm.stderr, stdout: esm.stdout }).toEqual({ status: 0, stderr: '', stdout: expected });
    const cjs = await run(
      process.execPath,
      [
        '--no-warnings',
        '-e',
        `(async () => { ${code("const tf = require('@tensorflow/tfjs-core'); const p = require('@rlvr/policy'); await p.selectBackend({ backend: 'cpu' }, { info() {} })")} })()`,
      ],
      app,
    );
    expect({ status: cjs.status, stderr: cjs.stderr, stdout: cjs.stdout }).toEqual({ status: 0, stderr: '', stdout: expected });
  });
});

/** The packages whose install pulls in no TensorFlow.js: no `@tensorflow/*` dependency, none through a sibling. */
function tfjsFree(): string[] {
  const deps = (name: string): string[] => {
    const m = JSON.parse(readFileSync(join(ROOT, PACKAGES.find((p) => p.name === name)!.dir, 'package.json'), 'utf8')) as Manifest;
    return Object.keys({ ...m.dependencies, ...m.peerDependencies, ...m.optionalDependencies });
  };
  const free = (name: string): boolean =>
    deps(name).every((d) => !d.startsWith('@tensorflow/') && (PACKAGES.every((p) => p.name !== d) || free(d)));
  return PACKAGES.map((p) => p.name).filter(free);
}

describe('the tfjs-free packages in a strict TypeScript project without @types/node', () => {
  it("compile with the repository's TypeScript, their own declarations checked (types: [], skipLibCheck off)", async () => {
    const names = tfjsFree();
    // what a user installs to drop an estimator, the verifier or the report into their own pipeline
    expect(names).toEqual(expect.arrayContaining(['@rlvr/core', '@rlvr/advantages', '@rlvr/math-verify', '@rlvr/report']));
    const dir = join(work, 'types-app');
    const modules = join(dir, 'node_modules');
    mkdirSync(join(modules, '@rlvr'), { recursive: true });
    // copies, not links: a link resolves to the app's node_modules, where @types/node could be found
    for (const name of names) cpSync(join(app, 'node_modules', name), join(modules, name), { recursive: true });
    const external = new Set(
      names.flatMap((n) =>
        Object.keys((JSON.parse(readFileSync(join(modules, n, 'package.json'), 'utf8')) as Manifest).dependencies ?? {}),
      ),
    );
    for (const dep of [...external].filter((d) => !d.startsWith('@rlvr/')))
      symlinkSync(join(ROOT, 'node_modules', dep), join(modules, dep));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'types-app', private: true, type: 'module' }));
    // a strict project: no ambient types at all (TypeScript 7's default), every declaration file checked
    const compilerOptions = { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: [], noEmit: true };
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { ...compilerOptions, skipLibCheck: false }, files: ['main.ts'] }),
    );
    const imports = names.map((n, i) => `import * as m${i} from '${n}';`).join('\n');
    const use = [
      "import { spanLocator, tokenPieces } from '@rlvr/core';",
      "import type { Command, FlagSpec } from '@rlvr/core';",
      "const flags: FlagSpec = { out: { type: 'string', short: 'o' } };",
      "export const command: Command = { usage: 'usage: x', options: flags, run: async ({ values }) => (values.out === undefined ? 2 : 0) };",
      "export const spans = spanLocator().fromPieces(tokenPieces(['Ġ\\\\', 'boxed', '{', '1', '}'], 'byte-level'));",
    ].join('\n');
    writeFileSync(join(dir, 'main.ts'), `${imports}\n${use}\nexport const all = [${names.map((_, i) => `m${i}`).join(', ')}];\n`);
    const r = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], dir);
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(existsSync(join(modules, '@types'))).toBe(false);
  });
});

describe('installed bins', () => {
  it.each(BINS)('$name runs from the installed package', async ({ pkg, name, path }) => {
    const bin = join(app, 'node_modules', '@rlvr', pkg.name.slice('@rlvr/'.length), path);
    const r = await run(process.execPath, [bin, '--help'], app);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toMatch(usageOf(name));
  });
});

describe('credit-assignment methods from their tarballs', () => {
  it('@rlvr/entropy-shaping registers through rlvr train --plugin, the README command, and trains 1 step', async () => {
    const out = join(work, 'entropy-run');
    const rlvr = join(app, 'node_modules', '@rlvr', 'reference-trainer', 'dist', 'cli.js');
    // the path the method's README gives: the installed package's build, resolved from the project's root
    const plugin = 'node_modules/@rlvr/entropy-shaping/dist/index.js';
    // a tiny run: the point is the installed packages sharing one registry, not the training
    const tiny = ['--steps', '1', '--rollout.prompts', '2', '--rollout.groupSize', '2', '--rollout.maxNewTokens', '8'];
    const evals = ['--eval.problems', '1', '--eval.n', '1', '--eval.maxNewTokens', '4', '--workers', '1'];
    const r = await run(
      process.execPath,
      [rlvr, 'train', '--plugin', plugin, '--estimator', 'entropy-shaping', ...tiny, ...evals, '--out', out, '-q'],
      app,
    );
    expect({ status: r.status, stderr: r.stderr.split('\n').filter((l) => /error/i.test(l)) }).toEqual({ status: 0, stderr: [] });
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as { estimator: string };
    expect(config.estimator).toBe('entropy-shaping');
    const metrics = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    expect(metrics.map((m) => m.step)).toEqual([0, 1]);
    // the method's own metric: the step ran its advantages, not a fallback estimator's
    expect(metrics[1]!['adv/entropy_shaping_entropy_mean']).toBeGreaterThan(0);
  });

  it("@rlvr/gar registers its estimator and its signal backend through rlvr train --plugin, and trains 1 step on the synthetic task's solutions", async () => {
    const out = join(work, 'gar-run');
    const rlvr = join(app, 'node_modules', '@rlvr', 'reference-trainer', 'dist', 'cli.js');
    const plugin = 'node_modules/@rlvr/gar/dist/index.js';
    const tiny = ['--steps', '1', '--rollout.prompts', '2', '--rollout.groupSize', '2', '--rollout.maxNewTokens', '8'];
    const evals = ['--eval.problems', '1', '--eval.n', '1', '--eval.maxNewTokens', '4', '--workers', '1'];
    const r = await run(
      process.execPath,
      [rlvr, 'train', '--plugin', plugin, '--estimator', 'gar', '--estimatorConfig.beta', '0.1', ...tiny, ...evals, '--out', out, '-q'],
      app,
    );
    expect({ status: r.status, stderr: r.stderr.split('\n').filter((l) => /error/i.test(l)) }).toEqual({ status: 0, stderr: [] });
    const metrics = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    expect(metrics.map((m) => m.step)).toEqual([0, 1]);
    // the plugin's backend ran on the installed trainer's model: a cosine, and not the 0 of "no scores"
    expect(Math.abs(metrics[1]!['adv/gar_cos_mean']!)).toBeLessThanOrEqual(1);
    expect(metrics[1]!['adv/gar_cos_mean']).not.toBe(0);
  });
});
