import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The plugin is this package's build (nx builds it before its tests): what a user passes to --plugin.
const PLUGIN = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const manifest = createRequire(import.meta.url).resolve('@rlvr/reference-trainer/package.json');
const RLVR = join(dirname(manifest), 'dist', 'cli.js');
const out = mkdtempSync(join(tmpdir(), 'rlvr-entropy-shaping-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('rlvr train --plugin', () => {
  it('trains 2 tiny steps with entropy-shaping, the policy entropy computed by the trainer, refreshed per mini-batch on request', () => {
    expect(existsSync(PLUGIN), 'build first (npx tsc -b methods/entropy-shaping)').toBe(true);
    const run = (estimator: string, dir: string, extra: string[] = []) =>
      spawnSync(
        process.execPath,
        [
          RLVR,
          'train',
          '--plugin',
          PLUGIN,
          '--estimator',
          estimator,
          '--estimatorConfig.alpha',
          '0.4',
          '--steps',
          '2',
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
          ...extra,
        ],
        { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
      );
    const r = run('entropy-shaping', 'shaped');
    expect(r.status, r.stderr).toBe(0);
    const metrics = readFileSync(join(out, 'shaped', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    expect(metrics.map((m) => m.step)).toEqual([0, 1, 2]);
    for (const m of metrics.slice(1)) {
      expect(m['adv/entropy_shaping_entropy_mean']).toBeGreaterThan(0);
      expect(m['adv/entropy_shaping_term_mean']).toBeGreaterThanOrEqual(0);
      // the term is at most |A| / kappa: the shaped mean |A| lies between the base's and 1.5 times it
      expect(m['adv/entropy_shaping_abs_mean']).toBeGreaterThanOrEqual(m['adv/advantage_abs_mean']! * (1 - 1e-6));
      expect(m['adv/entropy_shaping_abs_mean']).toBeLessThanOrEqual(m['adv/advantage_abs_mean']! * 1.5 + 1e-6);
    }
    const config = JSON.parse(readFileSync(join(out, 'shaped', 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({ estimator: 'entropy-shaping', estimatorConfig: { alpha: 0.4, kappa: 2 } });
    // the default (saliency.refresh batch): no refresh, every update reads the behaviour policy's entropy
    for (const m of metrics.slice(1)) expect(m).not.toHaveProperty('refresh/count');
    // saliency.refresh minibatch: the entropy is recomputed before the second mini-batch's update, no saliency backend needed
    const mb = run('grpo-entropy-shaping', 'minibatch', ['--saliency.refresh', 'minibatch', '--trainer.miniBatches', '2']);
    expect(mb.status, mb.stderr).toBe(0);
    const mbMetrics = readFileSync(join(out, 'minibatch', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    for (const m of mbMetrics.slice(1)) {
      expect(m['refresh/count']).toBe(1);
      expect(m['refresh/advantage_change']).toBeGreaterThanOrEqual(0);
    }
  });
});
