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
const out = mkdtempSync(join(tmpdir(), 'rlvr-verigate-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('rlvr train --plugin', () => {
  it('trains 2 tiny steps with verigate, process.steps from the plugin backend', () => {
    expect(existsSync(PLUGIN), 'build first (npx tsc -b methods/verigate)').toBe(true);
    const run = (estimator: string, dir: string) =>
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
          '1',
          '--out',
          join(out, dir),
          '-q',
        ],
        { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
      );
    const r = run('verigate', 'shaped');
    expect(r.status, r.stderr).toBe(0);
    const metrics = readFileSync(join(out, 'shaped', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    expect(metrics.map((m) => m.step)).toEqual([0, 1, 2]);
    for (const m of metrics.slice(1)) expect(m['adv/verigate_degenerate_groups']).toBeGreaterThanOrEqual(0);
    const config = JSON.parse(readFileSync(join(out, 'shaped', 'config.json'), 'utf8')) as Record<string, unknown>;
    // the defaults as run: the abstract's order, one std convention (Bessel's), exact equality for "degenerate"
    expect(config).toMatchObject({
      estimator: 'verigate',
      estimatorConfig: { stepOrder: 'cumulate-normalize', bessel: true, stepEps: 1e-6, degenerateTol: 0 },
    });
  });
});
