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
const out = mkdtempSync(join(tmpdir(), 'rlvr-gar-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('rlvr train --plugin', () => {
  it('trains 2 tiny steps with gar, gar.cosine from the plugin backend and the worked solutions of the synthetic task, with and without policy workers, with the defaults and the head-weight reading', () => {
    expect(existsSync(PLUGIN), 'build first (npx tsc -b methods/gar)').toBe(true);
    const run = (estimator: string, dir: string, workers = '1', extra: string[] = []) =>
      spawnSync(
        process.execPath,
        [
          RLVR,
          'train',
          '--plugin',
          PLUGIN,
          '--estimator',
          estimator,
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
          workers,
          '--out',
          join(out, dir),
          '-q',
          ...extra,
        ],
        { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
      );
    const metricsOf = (dir: string) =>
      readFileSync(join(out, dir, 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, number>);
    const r = run('gar', 'shaped');
    expect(r.status, r.stderr).toBe(0);
    const metrics = metricsOf('shaped');
    expect(metrics.map((m) => m.step)).toEqual([0, 1, 2]);
    for (const m of metrics.slice(1)) {
      // a cosine of gradients: finite and within [-1, 1], and reported for every RL step
      expect(Math.abs(m['adv/gar_cos_mean']!)).toBeLessThanOrEqual(1);
      expect(m['adv/gar_cos_mean']).not.toBe(0);
    }
    const config = JSON.parse(readFileSync(join(out, 'shaped', 'config.json'), 'utf8')) as Record<string, unknown>;
    // the defaults as run: the authors' vector, gate, hinge and beta
    expect(config).toMatchObject({
      estimator: 'gar',
      estimatorConfig: { beta: 0.5, apply: 'correct', bonus: 'hinge', normalize: 'mean' },
      saliency: { gar: { vector: 'grad-x-hidden', anchors: 'residual' } },
    });

    // the head-weight reading with the earlier defaults, as the README writes it
    const hw = run('gar', 'head-weight', '1', [
      '--saliency.gar',
      '{"vector": "head-weight", "materialize": true}',
      '--estimatorConfig.beta',
      '0.1',
      '--estimatorConfig.bonus',
      'linear',
      '--estimatorConfig.apply',
      'all',
    ]);
    expect(hw.status, hw.stderr).toBe(0);
    for (const m of metricsOf('head-weight').slice(1)) expect(Math.abs(m['adv/gar_cos_mean']!)).toBeLessThanOrEqual(1);
    expect(JSON.parse(readFileSync(join(out, 'head-weight', 'config.json'), 'utf8'))).toMatchObject({
      estimatorConfig: { beta: 0.1, apply: 'all', bonus: 'linear' },
      saliency: { gar: { vector: 'head-weight', materialize: true } },
    });
    // a backend's options as dotted flags reach the backend's own schema (they were refused as "takes a value")
    const dotted = run('gar', 'dotted', '1', ['--saliency.gar.materialize', 'true']);
    expect(dotted.status).toBe(1);
    expect(dotted.stderr).toContain(
      "field saliency.gar: invalid saliency backend gar configuration: materialize: applies to vector 'head-weight' only",
    );

    // with 2 policy workers the backend runs on them (each on its share of the rollouts), to the end
    const two = run('gar', 'workers', '2');
    expect(two.status, two.stderr).toBe(0);
    const onWorkers = metricsOf('workers');
    expect(onWorkers.map((m) => m.step)).toEqual([0, 1, 2]);
    for (const m of onWorkers.slice(1)) {
      expect(Math.abs(m['adv/gar_cos_mean']!)).toBeLessThanOrEqual(1);
      expect(m['adv/gar_cos_mean']).not.toBe(0);
      expect(m['time/weight_sync_s']).toBeDefined(); // reported only with policy workers
    }
    expect(JSON.parse(readFileSync(join(out, 'workers', 'config.json'), 'utf8'))).toMatchObject({ estimator: 'gar', workers: 2 });
  });
});
