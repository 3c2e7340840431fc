/**
 * The worker pool, loaded from the built package (`dist/worker-thread.js` is what each thread runs), with real threads.
 * Timeouts are provoked with a genuinely slow item (a sum of 2,001 factorials up to 3000!: seconds in-process).
 */
import { spawnSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MathVerifyError, VerifierPool, mathReward, verifyAnswer } from '@rlvr/math-verify';
import { loadCorpus, profileFor } from '../test/corpus-profile.mjs';

const SLOW = '\\boxed{\\sum_{k=1000}^{3000} k!}';
const rows = loadCorpus(fileURLToPath(new URL('../test/fixtures/math-verify-cases.jsonl', import.meta.url)));

describe('VerifierPool', () => {
  const pool = new VerifierPool({ concurrency: 2, timeoutMs: 5_000 });
  afterAll(() => pool.close());

  it('gives the same verdicts as the in-process function', async () => {
    const sample = rows
      .filter((_r, i) => i % 5 === 0)
      .map((r) => ({ r, p: profileFor(r) }))
      .filter((x) => x.p.call === 'reward' && !x.p.wrapGold);
    expect(sample.length).toBeGreaterThan(40);
    const got = await Promise.all(sample.map(({ r, p }) => pool.reward(r.pred, r.gold, p.options)));
    // Strict: results cross threads packed in arrays and are rebuilt, so every key (and no extra one) must come back.
    expect(got).toStrictEqual(sample.map(({ r, p }) => mathReward(r.pred, r.gold, p.options)));
    const v = await pool.verify('\\frac{1}{2}', '0.5');
    expect(v).toStrictEqual({ equal: true, reason: 'exact', gold: '1/2', pred: '0.5' });
  });

  it('grades whole batches as the in-process functions do, limits and boxes included', async () => {
    // Every corpus row in one rewardBatch (uniform options) and one verifyBatch: several chunks per call.
    const opts = { fallbacks: true, maxAnswerChars: 200 };
    const preds = [...rows.map((r) => r.pred), `\\boxed{${'('.repeat(200)}1${')'.repeat(200)}}`, `\\boxed{${'1+'.repeat(150)}1}`];
    const golds = [...rows.map((r) => r.gold), '1', '151'];
    const rewards = await pool.rewardBatch(preds, golds, opts);
    expect(rewards).toStrictEqual(preds.map((p, i) => mathReward(p, golds[i] as string, opts)));
    expect(rewards.some((r) => r.limit === 'size') && rewards.some((r) => r.answer !== null)).toBe(true);
    const deep = `${'('.repeat(130)}1${')'.repeat(130)}`;
    const verdicts = await pool.verifyBatch([...golds, deep], [...rows.map((r) => r.pred), '1', '151', '1']);
    expect(verdicts).toStrictEqual(
      [...golds, deep].map((g, i) => verifyAnswer(g, [...rows.map((r) => r.pred), '1', '151', '1'][i] as string)),
    );
    expect(verdicts.at(-1)?.limit).toBe('depth');
  });

  it('answers pathological inputs within the budget', async () => {
    const cases: [string, string][] = [
      ['\\boxed{5^{5^{5^5}}}', '5'],
      ['\\boxed{10^{10^{10}}}', '10^{10^{10}}+1'],
      ['\\boxed{(2+\\sqrt{3})^{1000}}', '13'],
      [`\\boxed{${'{'.repeat(10_000)}5${'}'.repeat(10_000)}}`, '5'],
      ['x'.repeat(999_000) + '\\boxed{4}', '5'],
      ['\\boxed{\\frac{1}{2', '1/2'],
      ['\\def\\x{\\x\\x}\\boxed{\\x}', '1'],
      ['\\boxed{\u{1F600}\uD800}', '5'],
    ];
    const got = await pool.rewardBatch(
      cases.map((c) => c[0]),
      cases.map((c) => c[1]),
    );
    expect(got.map((r) => r.reward)).toEqual(cases.map(() => 0));
    expect(got.every((r) => r.reason !== 'timeout')).toBe(true);
  });
});

describe('VerifierPool scheduling', () => {
  it('hands the items a worker stuck on a slow item has not reached to the idle worker', async () => {
    // 2 workers, 21 items: a chunk of 11 (the slow item first) and one of 10. The worker with the quick chunk
    // finishes it and takes over the slow chunk's untouched items, so every quick item is answered before the slow
    // one (seconds of CPU) whatever the machine's speed; without the hand-over, 10 of them would wait behind it.
    const pool = new VerifierPool({ concurrency: 2, timeoutMs: 600_000 });
    try {
      await pool.reward('\\boxed{1}', '1');
      const order: string[] = [];
      const quick = Array.from({ length: 20 }, (_, i) => i);
      const calls = [
        pool.reward(SLOW, '1').then((r) => order.push(`slow ${r.reason}`)),
        ...quick.map((i) => pool.reward(`\\boxed{${i}}`, String(i)).then((r) => order.push(`quick ${r.reward}`))),
      ];
      await Promise.all(calls);
      expect(order.slice(0, 20)).toEqual(quick.map(() => 'quick 1'));
      expect(order[20]).toMatch(/^slow /);
      expect(pool.stats).toEqual({ completed: 22, timedOut: 0, failed: 0, cancelled: 0 });
    } finally {
      await pool.close();
    }
  }, 300_000);

  it('keeps the process alive while items are in flight and never once it is idle, closed or not', () => {
    // A script that grades a batch without awaiting it and never closes the pool: it must print the rewards (the
    // busy workers hold the process) and then exit by itself (the idle ones do not). Given with -e as a module
    // (`--input-type`, a flag the workers inherit and Node refuses for a worker started from a file).
    const script = [
      `import { VerifierPool } from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)};`,
      'const pool = new VerifierPool({ concurrency: 2 });',
      `pool.rewardBatch(${JSON.stringify(['\\boxed{2}', 'x \\boxed{3}'])}, ['2', '4']).then((r) => console.log(r.map((x) => x.reward).join(',')));`,
    ].join('\n');
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120_000 });
    expect({ status: r.status, signal: r.signal, stdout: r.stdout.trim(), stderr: r.stderr }).toEqual({
      status: 0,
      signal: null,
      stdout: '1,0',
      stderr: '',
    });
  }, 180_000);
});

describe('VerifierPool timeouts', () => {
  it('terminates a stuck worker, answers "timeout", and keeps serving the items behind it', async () => {
    const pool = new VerifierPool({ concurrency: 2, timeoutMs: 100 });
    try {
      const completions = [
        SLOW,
        ...Array.from({ length: 20 }, (_, i) => `\\boxed{${i}}`),
        SLOW,
        SLOW,
        ...Array.from({ length: 20 }, (_, i) => `\\boxed{${i + 100}}`),
      ];
      const golds = completions.map((c) => (c === SLOW ? '1' : c.slice(7, -1)));
      const got = await pool.rewardBatch(completions, golds);
      got.forEach((r, i) => {
        if (completions[i] === SLOW) expect(r).toEqual({ reward: 0, extracted: null, reason: 'timeout', answer: null });
        else expect(r.reward).toBe(1);
      });
      expect(pool.stats.timedOut).toBe(3);
      expect(pool.stats.completed).toBe(40);
      const v = await pool.verify('1', '\\sum_{k=1000}^{3000} k!');
      expect(v).toEqual({ equal: false, reason: 'timeout', gold: null, pred: null });
    } finally {
      await pool.close();
    }
  }, 300_000);

  it('times out a slow item inside a batch alone: the rest of its chunk is run again, none lost', async () => {
    // One worker, one chunk of 21: the worker is killed at the slow item, after grading the ten before it.
    const pool = new VerifierPool({ concurrency: 1, chunkSize: 64, timeoutMs: 1_000 });
    try {
      const completions = [
        ...Array.from({ length: 10 }, (_, i) => `\\boxed{${i}}`),
        SLOW,
        ...Array.from({ length: 10 }, (_, i) => `\\boxed{${i + 10}}`),
      ];
      const golds = completions.map((c) => (c === SLOW ? '1' : c.slice(7, -1)));
      const got = await pool.rewardBatch(completions, golds);
      expect(got[10]).toStrictEqual({ reward: 0, extracted: null, reason: 'timeout', answer: null });
      expect(got.filter((_r, i) => i !== 10).map((r) => [r.reward, r.reason])).toEqual(golds.slice(0, 20).map(() => [1, 'same_text']));
      expect(pool.stats).toEqual({ completed: 20, timedOut: 1, failed: 0, cancelled: 0 });
    } finally {
      await pool.close();
    }
  }, 300_000);

  it('loses none of a batch when its worker dies, and fails at most the item it was running', async () => {
    const pool = new VerifierPool({ concurrency: 1, chunkSize: 64, timeoutMs: 600_000 });
    try {
      expect(await pool.reward('\\boxed{1}', '1')).toMatchObject({ reward: 1 });
      const completions = [SLOW, ...Array.from({ length: 20 }, (_, i) => `\\boxed{${i}}`)];
      const golds = ['1', ...completions.slice(1).map((c) => c.slice(7, -1))];
      const batch = pool.rewardBatch(completions, golds);
      // A real worker thread stopped from outside, as a crash would stop it. It is most likely on the slow item (the
      // first, seconds long), but may not have started the chunk yet on a busy machine: both are checked.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const slots = (pool as unknown as { slots: { worker: { terminate(): Promise<number> } }[] }).slots;
      expect(slots).toHaveLength(1);
      await slots[0]?.worker.terminate();
      const got = await batch;
      expect(got.slice(1).map((r) => r.reward)).toEqual(golds.slice(1).map(() => 1));
      const { failed, completed, timedOut } = pool.stats;
      if (failed === 1) expect(got[0]?.reason).toMatch(/^worker_failed: /);
      else expect(got[0]).toMatchObject({ reward: 0, reason: expect.not.stringMatching(/worker_failed|timeout/) });
      // Every item answered once: the warm-up, the 20 quick ones, and the slow one (graded, or failed with its worker).
      expect({ answered: completed + failed, timedOut, failedAtMost1: failed <= 1 }).toEqual({
        answered: 22,
        timedOut: 0,
        failedAtMost1: true,
      });
    } finally {
      await pool.close();
    }
  }, 300_000);

  it('refuses non-string input before it reaches a worker', async () => {
    const pool = new VerifierPool({ concurrency: 1 });
    try {
      await expect(pool.reward(undefined as never, '1')).rejects.toMatchObject({
        name: 'MathVerifyError',
        code: 'invalid_input',
        location: { field: 'completion' },
      });
      await expect(pool.verify('1', {} as never)).rejects.toMatchObject({ code: 'invalid_input', location: { field: 'pred' } });
      await expect(pool.rewardBatch(['\\boxed{1}', 7 as never], ['1', '1'])).rejects.toMatchObject({
        code: 'invalid_input',
        location: { index: 1, field: 'completion' },
      });
      await expect(pool.rewardBatch(['\\boxed{1}'], [])).rejects.toMatchObject({ code: 'invalid_row' });
      expect(await pool.reward('\\boxed{1}', '1')).toMatchObject({ reward: 1 });
      expect(pool.stats).toEqual({ completed: 1, timedOut: 0, failed: 0, cancelled: 0 });
    } finally {
      await pool.close();
    }
  });

  it('rejects calls after close and invalid options with typed errors', async () => {
    const pool = new VerifierPool({ concurrency: 1 });
    await pool.close();
    await expect(pool.reward('\\boxed{1}', '1')).rejects.toMatchObject({ code: 'pool_closed' });
    expect(() => new VerifierPool({ concurrency: 0 })).toThrow(MathVerifyError);
    expect(() => new VerifierPool({ timeoutMs: -1 })).toThrow(/timeoutMs/);
  });
});

describe('VerifierPool cancellation', () => {
  const quick = (n: number, from = 0): [string[], string[]] => [
    Array.from({ length: n }, (_, i) => `\\boxed{${from + i}}`),
    Array.from({ length: n }, (_, i) => String(from + i)),
  ];

  it('takes a cancelled batch out of the queue at once and never counts it', async () => {
    // One worker, busy with a slow item (it times out), while a batch of 50 waits in the queue.
    const pool = new VerifierPool({ concurrency: 1, chunkSize: 1, timeoutMs: 300 });
    try {
      const blocker = pool.reward(SLOW, '1');
      const ac = new AbortController();
      const batch = pool.rewardBatch(...quick(50), {}, { signal: ac.signal });
      ac.abort();
      await expect(batch).rejects.toMatchObject({ name: 'AbortError' });
      expect(pool.stats.cancelled).toBe(50);
      const after = pool.reward('\\boxed{7}', '7');
      expect(await blocker).toMatchObject({ reward: 0, reason: 'timeout' });
      expect(await after).toMatchObject({ reward: 1 });
      expect(pool.stats).toEqual({ completed: 1, timedOut: 1, failed: 0, cancelled: 50 });
    } finally {
      await pool.close();
    }
  }, 300_000);

  it('drops the items of a cancelled batch that a worker already holds, and keeps serving', async () => {
    // One chunk of 16 in one worker: a slow item first, so the abort finds the chunk in the worker.
    const pool = new VerifierPool({ concurrency: 1, timeoutMs: 300 });
    try {
      const [c, g] = quick(15);
      const ac = new AbortController();
      const reason = new Error('client went away');
      const batch = pool.rewardBatch([SLOW, ...c], ['1', ...g], {}, { signal: ac.signal });
      setTimeout(() => ac.abort(reason), 100);
      await expect(batch).rejects.toBe(reason);
      const [c2, g2] = quick(20, 100);
      expect((await pool.rewardBatch(c2, g2)).map((r) => r.reward)).toEqual(c2.map(() => 1));
      // The cancelled items never count: not as completed, nor the slow one as timed out.
      expect(pool.stats).toEqual({ completed: 20, timedOut: 0, failed: 0, cancelled: 16 });
    } finally {
      await pool.close();
    }
  }, 300_000);

  it('rejects at once on an aborted signal and leaves no listener on a long-lived one', async () => {
    const pool = new VerifierPool({ concurrency: 1 });
    try {
      await expect(pool.reward('\\boxed{1}', '1', {}, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
      const shared = new AbortController();
      for (let i = 0; i < 20; i++) await pool.verify(String(i), String(i), {}, { signal: shared.signal });
      await pool.rewardBatch(...quick(30), {}, { signal: shared.signal });
      expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
      expect(pool.stats).toEqual({ completed: 50, timedOut: 0, failed: 0, cancelled: 0 });
    } finally {
      await pool.close();
    }
  });
});
