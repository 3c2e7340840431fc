/**
 * The README's flow, through the installed bins only: a micro `rlvr train`, stopped after 2
 * steps and resumed to 3, `rlvr report` of the run, the trained policy served by `rlvr-serve`
 * on loopback, and `rlvr eval` of that endpoint, which must grade every problem exactly like
 * `rlvr eval` of the model directory (greedy decoding: the same completions either way).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { syntheticGenerator } from '@rlvr/rollout';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const require = createRequire(import.meta.url);
const bin = (pkg: string, name: string): string => {
  const manifest = require.resolve(`${pkg}/package.json`);
  return join(dirname(manifest), (JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> }).bin[name]!);
};
const RLVR = bin('@rlvr/reference-trainer', 'rlvr');
const SERVE = bin('@rlvr/rollout', 'rlvr-serve');

/** The child's environment without colour, so output compares as plain text. */
const env = (): NodeJS.ProcessEnv => {
  const { FORCE_COLOR: _f, ...rest } = process.env;
  return { ...rest, NO_COLOR: '1' };
};

function run(script: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: env() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let root: string;
let server: ChildProcess | undefined;
beforeAll(async () => {
  for (const f of [RLVR, SERVE]) if (!existsSync(f)) throw new Error(`${f} is missing: build first (npm run build)`);
  root = await mkdtemp(join(tmpdir(), 'rlvr-e2e-'));
});
afterAll(async () => {
  server?.kill();
  await rm(root, { recursive: true, force: true });
});

describe('the rlvr bins end to end', () => {
  test('the whole flow through the CLIs', async () => {
    const config = join(root, 'micro.json');
    await writeFile(
      config,
      JSON.stringify({
        steps: 3,
        rollout: { prompts: 2, groupSize: 4, maxNewTokens: 24 },
        eval: { every: 0, problems: 6, n: 2, maxNewTokens: 24 },
        checkpointEvery: 1,
        backend: 'wasm',
      }),
    );
    const out = join(root, 'run');
    const first = await run(RLVR, 'train', '--config', config, '--out', out, '--steps', '2', '-q');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/rlvr train: done: grail, seed 0, 2\/2 steps/);
    const resumed = await run(RLVR, 'train', '--config', config, '--out', out, '--resume', '--report');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('(step 2)');
    expect(resumed.stdout).toContain(`report: ${join(out, 'report.html')}`);
    const steps = (await readFile(join(out, 'metrics.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { step: number }).step);
    expect(steps).toEqual([0, 1, 2, 3]);
    const html = await readFile(join(out, 'report.html'), 'utf8');
    expect(html.match(/<svg/g)?.length).toBeGreaterThan(5);

    // problems the trained policy has never seen
    const data = join(root, 'synth.jsonl');
    const rows = syntheticGenerator({ minSteps: 1, maxSteps: 2, digits: 1 })
      .tasks('e2e-eval', 8)
      .map((t) => ({ question: t.question, answer: t.answer }));
    await writeFile(data, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');

    server = spawn(process.execPath, [SERVE, '--model', join(out, 'model'), '--port', '0', '--backend', 'wasm'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: env(),
    });
    const firstLine = await new Promise<string>((resolve, reject) => {
      const lines = createInterface({ input: server!.stdout! });
      lines.once('line', resolve);
      server!.once('exit', (code) => reject(new Error(`rlvr-serve exited with ${code}`)));
    });
    const url = /on (http:\/\/\S+)/.exec(firstLine)?.[1];
    expect(url, firstLine).toBeDefined();

    const common = ['--dataset', data, '--preset', 'synthetic', '--n', '2', '--temperature', '0', '--max-tokens', '32', '-q'];
    const viaServer = await run(RLVR, 'eval', '--endpoint', url!, ...common, '--out', join(root, 'endpoint.json'));
    expect(viaServer.code, viaServer.stderr).toBe(0);
    const local = await run(RLVR, 'eval', '--model', join(out, 'model'), '--backend', 'wasm', ...common, '--out', join(root, 'local.json'));
    expect(local.code, local.stderr).toBe(0);
    const counts = async (f: string) => {
      const r = JSON.parse(await readFile(join(root, f), 'utf8')) as { datasets: { correct: number[] }[] };
      return r.datasets.map((d) => d.correct);
    };
    const endpointCounts = await counts('endpoint.json');
    expect(endpointCounts).toEqual(await counts('local.json'));
    expect(endpointCounts[0]).toHaveLength(8);
    // the warm-up-based policy solves some of them (deterministic: greedy, fixed problems)
    expect(endpointCounts[0]!.some((c) => c > 0)).toBe(true);
  });

  test('a third-party weighting as a plugin: grpo+entropy trains on the policy-entropy signal', async () => {
    const out = join(root, 'entropy');
    const plugin = fileURLToPath(new URL('../fixtures/entropy-plugin.mjs', import.meta.url));
    const config = join(root, 'entropy.json');
    await writeFile(
      config,
      JSON.stringify({
        steps: 2,
        rollout: { prompts: 2, groupSize: 4, maxNewTokens: 24 },
        eval: { every: 0, problems: 4, n: 1, greedy: false, maxNewTokens: 24 },
        backend: 'wasm',
      }),
    );
    const r = await run(RLVR, 'train', '--config', config, '--estimator', 'grpo+entropy', '--plugin', plugin, '--out', out, '-q');
    expect(r.code, r.stderr).toBe(0);
    const steps = (await readFile(join(out, 'metrics.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    expect(steps.map((m) => m.step)).toEqual([0, 1, 2]);
    // entropy weights: 1 for a token as uncertain as its rollout's average, clipped to [0.25, 4]
    for (const m of steps.slice(1)) {
      expect(m['weights/all/std']).toBeGreaterThan(0);
      expect(m['weights/all/min']).toBeGreaterThanOrEqual(0.25);
      expect(m['weights/all/max']).toBeLessThanOrEqual(4);
    }
    const unknown = await run(RLVR, 'train', '--config', config, '--estimator', 'grpo+entropy', '--out', join(root, 'no-plugin'));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^rlvr train: field estimator: unknown advantage estimator "grpo\+entropy".*\n$/);
  });
});
