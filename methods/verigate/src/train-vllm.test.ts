import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrmServer, type PrmServer } from './test-utils/prm-server.js';

// The plugin is this package's build (nx builds it before its tests): what a user passes to --plugin.
const PLUGIN = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const RLVR = join(dirname(createRequire(import.meta.url).resolve('@rlvr/reference-trainer/package.json')), 'dist', 'cli.js');
const out = mkdtempSync(join(tmpdir(), 'rlvr-verigate-vllm-'));
let server: PrmServer;
beforeAll(async () => {
  server = await startPrmServer('prm');
});
afterAll(async () => {
  await server.close();
  rmSync(out, { recursive: true, force: true });
});

/** `rlvr train` in a child process, not blocking this one (the PRM server answers from here). */
function train(dir: string, steps: number, extra: string[] = []): Promise<{ status: number | null; stderr: string }> {
  const args = [
    RLVR,
    'train',
    ...extra,
    '--plugin',
    PLUGIN,
    '--estimator',
    'verigate',
    // a backend's options are one JSON value (the config holds them as data, checked by the backend's schema)
    '--saliency.process-steps',
    JSON.stringify({ scorer: 'vllm', url: server.url, model: 'prm', timeoutMs: 120_000 }),
    '--steps',
    String(steps),
    '--rollout.prompts',
    '2',
    '--rollout.groupSize',
    '4',
    '--rollout.maxNewTokens',
    '16',
    '--eval.problems',
    '1',
    '--eval.n',
    '1',
    '--eval.maxNewTokens',
    '8',
    '--workers',
    '1',
    '--out',
    join(out, dir),
    '-q',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

describe('rlvr train --plugin with the vLLM process-reward scorer', () => {
  it('trains 2 tiny steps with verigate, process.steps scored by a PRM server speaking vLLM pooling protocol', async () => {
    expect(existsSync(PLUGIN), 'build first (npx tsc -b methods/verigate)').toBe(true);
    const r = await train('ok', 2);
    expect(r.status, r.stderr).toBe(0);
    const metrics = readFileSync(join(out, 'ok', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    expect(metrics.map((m) => m.step)).toEqual([0, 1, 2]);
    for (const m of metrics.slice(1)) expect(m['adv/verigate_degenerate_groups']).toBeGreaterThanOrEqual(0);
    // at most one request per completion (2 steps x 2 prompts x 4), each with the problem as its user turn
    expect(server.received.length).toBeGreaterThan(0);
    expect(server.received.length).toBeLessThanOrEqual(16);
    for (const q of server.received) expect(q.input).toMatch(/<\|im_start\|>user\n\S[\s\S]*<\|im_end\|>\n<\|im_start\|>assistant\n/);
    const config = JSON.parse(readFileSync(join(out, 'ok', 'config.json'), 'utf8')) as { saliency: Record<string, unknown> };
    expect(config.saliency['process-steps']).toMatchObject({ scorer: 'vllm', url: server.url, model: 'prm', timeoutMs: 120000 });
  });

  it('a saliency.refresh of minibatch does not ask the PRM again (process scores do not depend on the parameters)', async () => {
    const before = server.received.length;
    // 2 epochs x 2 mini-batches: four updates a step, each of which would have refreshed the signals
    const r = await train('refresh', 2, ['--saliency.refresh', 'minibatch', '--trainer.epochs', '2', '--trainer.miniBatches', '2']);
    expect(r.status, r.stderr).toBe(0);
    // at most one request per completion (2 steps x 2 prompts x 4): each was asked once, in the behaviour pass
    const asked = server.received.length - before;
    expect(asked).toBeGreaterThan(0);
    expect(asked).toBeLessThanOrEqual(16);
  });

  it("a failing PRM server fails the run with the client's error naming the rollout and the status", async () => {
    server.mode = 'status500';
    try {
      const r = await train('failing', 1);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(/rollout \d+: http:\/\/127\.0\.0\.1:\d+\/pooling answered HTTP 500: .*CUDA out of memory/);
    } finally {
      server.mode = 'ok';
    }
  });
});
