import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { summarize } from './compare-stats.js';
import type { CompareRun } from './compare-stats.js';
import { tuneRecord, tuneRow } from './compare-tune.js';
import { writeReport } from './report.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rlvr-compare-report-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const run = (estimator: string, seed: number, final: number): CompareRun => ({
  estimator,
  seed,
  dir: `${estimator}/seed-${seed}`,
  evals: [
    { step: 0, accuracy: 0.5, passAtN: 0.7, n: 2, problems: 4 },
    { step: 2, accuracy: final, passAtN: 0.8, n: 2, problems: 4 },
  ],
  secondsPerStep: 0.5,
  wallSeconds: 3,
});

describe('rlvr report on a comparison directory', () => {
  test('the table and verdicts as rlvr compare prints them, and after --tune a table per row and the tuning curves', async () => {
    const runs = [run('grpo', 0, 0.5), run('grail', 0, 0.625), run('grpo', 1, 0.5), run('grail', 1, 0.75)];
    const acc: Record<string, Record<number, number[]>> = {
      grpo: { 1e-5: [0.4, 0.5], 1e-4: [0.6, 0.55], 1e-3: [0.3, 0.35] },
      grail: { 1e-5: [0.5, 0.5], 1e-4: [0.45, 0.4], 1e-6: [0.4, 0.45] },
    };
    const rows = [
      tuneRow('grpo', [1e-5, 1e-4, 1e-3], [1e-3], (lr) => acc.grpo![lr]!, [1000, 1001]),
      tuneRow('grail', [1e-6, 1e-5, 1e-4], [1e-6], (lr) => acc.grail![lr]!, [1000, 1001]),
    ];
    const tune = tuneRecord({ grid: [1e-5, 1e-4], seeds: [1000, 1001], maxWiden: 3 }, { problems: 8, definition: 'a split' }, rows);
    const table = summarize(runs, ['grpo', 'grail']);
    await writeFile(join(dir, 'compare.json'), JSON.stringify({ command: 'compare', steps: 2, seeds: [0, 1], ...table, runs, tune }));

    const r = await writeReport(dir);
    expect(r).toMatchObject({ path: join(dir, 'report.html'), charts: 1, warnings: [] });
    const html = await readFile(r.path, 'utf8');
    expect(html).toContain('rlvr compare: 2 estimators x 2 seeds (0, 1), 2 steps each');
    expect(html).toMatch(/primary: grail - grpo: final accuracy \+18\.8 points/);
    expect(html).toMatch(/<figure class="chart" data-chart="tune"><figcaption>Tuning curves<\/figcaption><svg/);
    // one table per row: each rate's accuracy per tuning seed, mean and SD, the chosen rate marked
    const grpo = /<table class="data" data-tune="grpo">(.*?)<\/table>/s.exec(html)![1]!;
    expect(grpo).toContain('chosen lr 1e-4');
    expect(grpo).toContain('<tr class="chosen"><td>1e-4 (chosen)</td><td data-value="0.6">60.0</td><td data-value="0.55">55.0</td>');
    expect(grpo).toContain('<td>1e-3 (widened)</td>');
    const grail = /<table class="data" data-tune="grail">(.*?)<\/table>/s.exec(html)![1]!;
    expect(grail).toContain('chosen lr 1e-5');
    expect(grail).toContain('<td data-value="0.5">50.0</td><td data-value="0">0.0</td></tr>');
    expect(html).toContain(
      'learning rates (trainer.schedule.lr) tuned on 2 tuning seed(s) (1000, 1001) on a validation split of 8 problems: a split',
    );
  });

  test('a comparison without --tune: the table only; a broken compare.json is named', async () => {
    const plain = join(dir, 'plain');
    await mkdir(plain);
    const runs = [run('grpo', 0, 0.5), run('grail', 0, 0.625)];
    await writeFile(join(plain, 'compare.json'), JSON.stringify({ steps: 2, seeds: [0], ...summarize(runs, ['grpo', 'grail']), runs }));
    const r = await writeReport(plain);
    expect(r.charts).toBe(0);
    const html = await readFile(r.path, 'utf8');
    expect(html).not.toContain('Learning rates');
    expect(html).toContain('grail - grpo');
    await writeFile(join(plain, 'compare.json'), '{"steps": ');
    await expect(writeReport(plain)).rejects.toMatchObject({ code: 'invalid_record', location: { file: join(plain, 'compare.json') } });
  });
});
