import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCreditJson } from '@rlvr/report';
import { beforeAll, describe, expect, test } from 'vitest';
import { EMBEDDED_CHECKPOINT } from '../train/config.js';
import { writeHalvedPlugin } from '../test-utils/halved-plugin.js';
import { rlvr } from '../test-utils/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'rlvr-credit-'));
const config = join(dir, 'wasm.json');
writeFileSync(config, JSON.stringify({ backend: 'wasm', rollout: { groupSize: 4, maxNewTokens: 40 } }));
const base = ['credit', '--config', config, '--resamples', '200'];

/** One line on stderr, exit 1, and no output directory. */
function refused(r: { code: number | null; stderr: string }, out: string): string {
  expect(r.code).toBe(1);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(existsSync(out)).toBe(false);
  return r.stderr;
}

describe('rlvr credit (the embedded warm-up checkpoint, the short arithmetic task, wasm)', () => {
  const out = join(dir, 'ok');
  let r: Awaited<ReturnType<typeof rlvr>>;
  let plugin: string;
  beforeAll(async () => {
    plugin = await writeHalvedPlugin(dir);
    r = await rlvr(...base, '--estimators', 'grpo,grail,oar-g,grpo+halved', '--plugin', plugin, '--rollouts', '30', '--out', out, '-q');
  }, 600_000);

  test('samples the batch once, scores every estimator on it, writes credit.json and credit.html, prints the table', async () => {
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = await readCreditJson(join(out, 'credit.json'));
    // 30 rounded up to whole groups of 4
    expect(report.counts.rollouts).toBe(32);
    expect(report.methods.map((m) => m.name)).toEqual(['grpo', 'grail', 'oar-g', 'grpo+halved']);
    // every rollout has a status: unlabelled, no-prefix and conflicting ones are counted, never dropped
    expect(Object.values(report.counts.status).reduce((a, b) => a + b, 0)).toBe(32);
    expect(report.counts.correct + report.counts.wrong).toBe(32);
    const scored = report.rollouts.status.filter((s) => s === 'scored').length;
    expect(scored).toBeGreaterThan(0);
    // uniform credit (GRPO, and the plugin's constant weighting) scores exactly 0.5 and its token share, rollout by rollout
    for (const name of ['grpo', 'grpo+halved']) {
      const v = report.values[name]!;
      report.rollouts.status.forEach((s, i) => {
        if (s !== 'scored' || v.degenerate[i] === 1) return;
        expect(v.auroc[i]).toBe(0.5);
        expect(v.massShare[i]).toBeCloseTo(v.tokenShare[i]!, 6);
      });
    }
    // GRAIL's weights are not uniform: its AUROCs are not all 0.5
    expect(report.values.grail!.auroc.some((a) => a !== null && a !== 0.5)).toBe(true);
    // each labelled error line lies within its completion
    report.rollouts.label.forEach((l, i) => {
      if (l !== null) expect(l.tokenEnd).toBeLessThanOrEqual(report.rollouts.tokens[i]!);
    });
    expect(readFileSync(join(out, 'credit.html'), 'utf8')).toContain('<html');
    expect(r.stdout).toMatch(/^32 rollouts \(\d+ correct, \d+ wrong\): /);
    expect(r.stdout).toMatch(/\ngrail\s+\d+\s+\d\.\d{3} \[/);
    expect(r.stdout).toContain('grpo - grail');
    expect(r.stdout).toContain(`wrote ${out}/credit.json and credit.html`);
  });

  test('an output directory holding a credit.json is refused, and left as it was', async () => {
    const before = readFileSync(join(out, 'credit.json'), 'utf8');
    const again = await rlvr(...base, '--estimators', 'grpo', '--rollouts', '4', '--out', out);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`${join(out, 'credit.json')} exists: pick another --out`);
    expect(readFileSync(join(out, 'credit.json'), 'utf8')).toBe(before);
  }, 120_000);
});

describe('rlvr credit refuses bad input in one line, writing nothing', () => {
  test('a checkpoint of another task, naming both tasks', async () => {
    const run = join(dir, 'pretrained');
    cpSync(EMBEDDED_CHECKPOINT, join(run, 'checkpoint'), { recursive: true });
    writeFileSync(join(run, 'config.json'), JSON.stringify({ command: 'pretrain', family: 'long-chain' }));
    const out = join(dir, 'other-task');
    const r = await rlvr(...base, '--checkpoint', join(run, 'checkpoint'), '--estimators', 'grpo', '--out', out);
    expect(refused(r, out)).toContain(`was made on task long-chain (${join(run, 'config.json')}), not on this run's task arith`);
    // on its own task the check passes: the next one (an --out holding a credit.json) refuses it instead
    const taken = join(dir, 'taken');
    cpSync(join(run, 'config.json'), join(taken, 'credit.json'));
    const r2 = await rlvr(
      ...base,
      '--checkpoint',
      join(run, 'checkpoint'),
      '--family',
      'long-chain',
      '--estimators',
      'grpo',
      '--out',
      taken,
    );
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain(`${join(taken, 'credit.json')} exists`);
  }, 120_000);

  test('an estimator needing a signal that no backend gives is named', async () => {
    const plugin = join(dir, 'needy.mjs');
    writeFileSync(
      plugin,
      `export function register(api) {
  api.registerEstimator(api.defineMethod({ name: 'needy', description: 'needs a signal nobody makes', configSchema: api.z.strictObject({}), needs: ['nobody.makes'], compute() { return {}; } }));
}\n`,
    );
    const out = join(dir, 'needy');
    const r = await rlvr(...base, '--plugin', plugin, '--estimators', 'grpo,needy', '--out', out);
    expect(refused(r, out)).toContain('estimator needy needs signal nobody.makes, which no saliency backend produces');
  }, 120_000);

  test('a data file without chains, naming the file and line; usage errors name the flag', async () => {
    const data = join(dir, 'plain.jsonl');
    writeFileSync(data, '{"question": "What is 2 + 2?", "answer": "4"}\n'.repeat(4));
    const out = join(dir, 'plain');
    const r = await rlvr(
      ...base,
      '--data.train',
      data,
      '--data.format',
      'synthetic',
      '--estimators',
      'grpo',
      '--rollouts',
      '8',
      '--out',
      out,
    );
    expect(refused(r, out)).toContain(`rlvr credit: ${data}:1, field chain: no chain: the first-error labeller needs each problem's chain`);
    const u = await rlvr('credit', '--rollouts', '8');
    expect(u.code).toBe(2);
    expect(u.stderr).toContain('--estimators');
  }, 120_000);
});

describe('rlvr train with eval.credit', () => {
  test('writes the credit maps of the policy at every evaluation, on the same problems, and logs them', async () => {
    const cfg = join(dir, 'train-credit.json');
    const credit = { estimators: ['grpo', 'grail'], rollouts: 8 };
    const evalOptions = { every: 1, problems: 2, n: 1, maxNewTokens: 16, greedy: false, weightProblems: 0, credit };
    writeFileSync(
      cfg,
      JSON.stringify({ steps: 1, rollout: { prompts: 2, groupSize: 4, maxNewTokens: 16 }, eval: evalOptions, backend: 'wasm', workers: 1 }),
    );
    const out = join(dir, 'train-run');
    const r = await rlvr('train', '--config', cfg, '--out', out);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/credit step 0: grpo AUROC (\d\.\d{3}|-) \(\d+\), grail AUROC/);
    expect(r.stderr).toMatch(/credit step 1: grpo AUROC/);
    const [before, after] = await Promise.all([0, 1].map((s) => readCreditJson(join(out, 'credit', `step-${s}`, 'credit.json'))));
    expect(before!.counts.rollouts).toBe(8);
    expect(after!.methods.map((m) => m.name)).toEqual(['grpo', 'grail']);
    expect(existsSync(join(out, 'credit', 'step-1', 'credit.html'))).toBe(true);
  }, 600_000);
});
