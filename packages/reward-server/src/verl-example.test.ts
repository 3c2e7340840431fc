/**
 * docs/examples/verl_reward.py, run by Debian's Python (standard library only) against real servers on loopback:
 * per-response `compute_score`, the batch hook, fail-over past a dead replica, a 4xx surfacing as an error, and the
 * gold shapes verl hands over (a GSM8K `#### 72` solution, numbers, dicts, lists; None refused with a ValueError).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mathReward } from '@rlvr/math-verify';
import { RewardServer } from './server.js';
import { makeCases } from './test-utils/cases.js';

const PY = '/usr/bin/python3';
const EXAMPLE = fileURLToPath(new URL('../../../docs/examples/verl_reward.py', import.meta.url));

/** Runs the example asynchronously: the servers live in this process, so blocking on the child would starve them. */
function runExample(
  urls: string[],
  rows: object[],
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(PY, [EXAMPLE, ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', RLVR_REWARD_URLS: urls.join(','), RLVR_REWARD_RETRIES: '2', ...env },
    timeout: 300_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  child.stdin.end(rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

let a: RewardServer;
let b: RewardServer;
let deadUrl: string;
beforeAll(async () => {
  [a, b] = await Promise.all([RewardServer.start({ port: 0, concurrency: 1 }), RewardServer.start({ port: 0, concurrency: 1 })]);
  const dead = await RewardServer.start({ port: 0, concurrency: 1 });
  deadUrl = dead.url;
  await dead.close();
});
afterAll(() => Promise.all([a.close(), b.close()]));

describe.skipIf(!existsSync(PY))('verl custom reward function (docs/examples/verl_reward.py)', () => {
  const cases = makeCases(40);
  const rows = cases.map((c, i) => ({
    data_source: 'math',
    solution_str: c.completion,
    ground_truth: i % 4 === 0 && /^\d+$/.test(c.gold) ? Number(c.gold) : c.gold,
  }));
  const want = cases.map((c) => mathReward(c.completion, c.gold).reward);

  it('compute_score: one request per response, scores equal to in-process mathReward', async () => {
    const r = await runExample([a.url], rows);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n').map(Number)).toEqual(want);
  });

  it('compute_score_batch over two replicas, with a dead one listed first', async () => {
    const before = [a.stats.answers, b.stats.answers];
    const r = await runExample([deadUrl, a.url, b.url], rows, ['--batch']);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n').map(Number)).toEqual(want);
    // the batch is split in contiguous chunks, one per listed URL; the dead URL's chunk failed over to a live one
    expect(a.stats.answers - before[0]! + (b.stats.answers - before[1]!)).toBe(rows.length);
    expect(b.stats.answers - before[1]!).toBeGreaterThan(0);
  });

  it("sends extra_info's problem (or question): a unit the question does not ask is refused, per response and in batch", async () => {
    const q = 'A rope is 20 yards long. How many feet long is it?';
    const unitRows = [
      { data_source: 'math', solution_str: '\\boxed{60 inches}', ground_truth: '60', extra_info: { problem: q } },
      { data_source: 'math', solution_str: '\\boxed{60 inches}', ground_truth: '60', extra_info: { question: q, index: 3 } },
      { data_source: 'math', solution_str: '\\boxed{60 feet}', ground_truth: '60', extra_info: { question: q } },
      { data_source: 'math', solution_str: '\\boxed{60 inches}', ground_truth: '60', extra_info: { index: 4 } },
      { data_source: 'math', solution_str: '\\boxed{60 inches}', ground_truth: '60' },
    ];
    for (const args of [[], ['--batch']]) {
      const r = await runExample([a.url, b.url], unitRows, args);
      expect(r.stderr).toBe('');
      expect(r.stdout.trim().split('\n').map(Number)).toEqual([0, 0, 1, 1, 1]);
    }
  });

  it("reads verl's gold shapes: a GSM8K solution after ####, numbers, a reward_model dict, a one-item list", async () => {
    const sol = 'Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips altogether.\n#### 72';
    const shapeRows = [
      { data_source: 'openai/gsm8k', solution_str: 'so \\boxed{72}', ground_truth: sol },
      { data_source: 'openai/gsm8k', solution_str: 'so \\boxed{71}', ground_truth: sol },
      { data_source: 'openai/gsm8k', solution_str: 'so \\boxed{1200}', ground_truth: 'It costs 1,000 + 200 = 1,200.\n#### 1,200' },
      { data_source: 'math', solution_str: 'so \\boxed{72}', ground_truth: 72 },
      { data_source: 'math', solution_str: 'so \\boxed{72}', ground_truth: 72.0 },
      { data_source: 'math', solution_str: 'so \\boxed{\\frac12}', ground_truth: 0.5 },
      { data_source: 'math', solution_str: 'so \\boxed{5}', ground_truth: { style: 'rule', ground_truth: '5' } },
      { data_source: 'math', solution_str: 'so \\boxed{5}', ground_truth: { answer: 5 } },
      // str() of this dict ends in 7, which the grader read as the gold before
      { data_source: 'math', solution_str: 'so \\boxed{5}', ground_truth: { answer: '5', index: 7 } },
      { data_source: 'math', solution_str: 'so \\boxed{5}', ground_truth: ['5'] },
    ];
    for (const args of [[], ['--batch']]) {
      const r = await runExample([a.url, b.url], shapeRows, args);
      expect(r.stderr).toBe('');
      expect(r.stdout.trim().split('\n').map(Number)).toEqual([1, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
    }
  });

  it('a list of several golds: any-of or all-parts as RLVR_REWARD_LIST_GOLD says, and a ValueError when it is unset', async () => {
    const listRows = [
      { data_source: 'olympiad', solution_str: 'so \\boxed{3}', ground_truth: ['2', '3'] },
      { data_source: 'olympiad', solution_str: 'so \\boxed{2, 3}', ground_truth: ['2', '3'] },
      { data_source: 'olympiad', solution_str: 'so \\boxed{4}', ground_truth: ['2', '3'] },
    ];
    for (const args of [[], ['--batch']]) {
      const any = await runExample([a.url], listRows, args, { RLVR_REWARD_LIST_GOLD: 'any' });
      expect(any.stderr).toBe('');
      expect(any.stdout.trim().split('\n').map(Number)).toEqual([1, 0, 0]);
      const all = await runExample([a.url], listRows, args, { RLVR_REWARD_LIST_GOLD: 'all' });
      expect(all.stdout.trim().split('\n').map(Number)).toEqual([0, 1, 0]);
      const unset = await runExample([a.url], listRows, args);
      expect(unset.status).not.toBe(0);
      expect(unset.stdout).toBe('');
      expect(unset.stderr).toMatch(/ValueError: .*data_source 'olympiad': ground_truth is a list of 2 answers .*RLVR_REWARD_LIST_GOLD=any/);
    }
  });

  it('refuses a gold that is None, empty, a boolean or a dict without an answer, naming the row: never a silent 0', async () => {
    const bad: [unknown, RegExp][] = [
      [null, /ground_truth is None, not an answer/],
      ['', /ground_truth is empty/],
      [true, /ground_truth is True, not an answer/],
      [{ style: 'rule' }, /ground_truth is a dict without 'ground_truth' or 'answer' \(keys: \['style'\]\)/],
      [[], /ground_truth is an empty list/],
    ];
    const before = a.stats.requests;
    for (const [gold, message] of bad) {
      const rows = [
        { data_source: 'math', solution_str: '\\boxed{1}', ground_truth: '1' },
        { data_source: 'openai/gsm8k', solution_str: '\\boxed{1}', ground_truth: gold },
      ];
      const single = await runExample([a.url], rows);
      expect(single.status).not.toBe(0);
      expect(single.stderr).toMatch(new RegExp(`ValueError: data_source 'openai/gsm8k': ${message.source}`));
      const batch = await runExample([a.url], rows, ['--batch']);
      expect(batch.status).not.toBe(0);
      expect(batch.stderr).toMatch(new RegExp(`ValueError: row 1, data_source 'openai/gsm8k': ${message.source}`));
      expect(batch.stdout).toBe('');
    }
    // The batch hook refuses before sending anything; the per-response hook graded only the good first row.
    expect(a.stats.requests - before).toBe(bad.length);
  });

  it('a request the server refuses (here 413) raises with the server message, without retrying', async () => {
    const tiny = await RewardServer.start({ port: 0, concurrency: 1, maxBodyBytes: 64 });
    try {
      const r = await runExample([tiny.url], [{ data_source: 'math', solution_str: 'x'.repeat(100), ground_truth: '1' }]);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(/ValueError: .* refused the request \(413\): .*body_too_large/);
      expect(tiny.stats.requests).toBe(1);
    } finally {
      await tiny.close();
    }
  });
});
