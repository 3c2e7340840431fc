/**
 * OpenRLHF's side of the protocol with its own libraries: Debian's Python with `requests` and `torch` posts a
 * rollout batch split over three replicas (as `--remote_rm_url a,b,c` does), with queries decoded the way OpenRLHF
 * decodes them (left padding and special tokens kept), and turns every answer field into tensors.
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mathReward } from '@rlvr/math-verify';
import { RewardServer } from './server.js';
import { makeCases } from './test-utils/cases.js';

const PY = '/usr/bin/python3';
const CLIENT = fileURLToPath(new URL('./test-utils/openrlhf_remote_rm.py', import.meta.url));
const hasDeps = spawnSync(PY, ['-c', 'import requests, torch'], { encoding: 'utf8' }).status === 0;

function runClient(job: object): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(PY, [CLIENT], { timeout: 120_000 });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  child.stdin.end(JSON.stringify(job));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

let servers: RewardServer[] = [];
beforeAll(async () => {
  servers = await Promise.all([0, 1, 2].map(() => RewardServer.start({ port: 0, concurrency: 1 })));
});
afterAll(() => Promise.all(servers.map((s) => s.close())));

describe.skipIf(!hasDeps)('OpenRLHF remote reward model client (requests + torch)', () => {
  it('three replicas: rewards, scores and extra_logs concatenate into per-sample tensors, in order', async () => {
    const cases = makeCases(50);
    // left-padded like batch_decode(sequences, skip_special_tokens=False) of a left-padded batch
    const query = cases.map((c, i) => '<|endoftext|>'.repeat(i % 4) + c.prompt + c.completion + '<|im_end|>');
    const want = cases.map((c) => mathReward(c.completion + '<|im_end|>', c.gold).reward);
    const before = servers.map((s) => s.stats.answers);
    const r = await runClient({
      urls: servers.map((s) => `${s.url}/get_reward`),
      query,
      prompts: cases.map((c) => c.prompt),
      labels: cases.map((c) => c.gold),
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.rewards).toEqual(want);
    expect(out.scores).toEqual(want);
    expect(out.extra_logs_mean.prompt_not_found).toBe(0);
    expect(out.extra_logs_mean.timeout).toBe(0);
    // 50 rows over 3 URLs: chunks of 17, 17, 16
    expect(servers.map((s, i) => s.stats.answers - before[i]!)).toEqual([17, 17, 16]);
  }, 300_000);
});
