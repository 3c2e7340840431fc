/**
 * `POST /advantages` over real HTTP: the same numbers as the `rlvr-advantages` CLI on the same rows (run as a child
 * process), for every body form and for options given in the body or the query string; a hand-computed GRPO batch;
 * and the 4xx answers for bad rows, names and options.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RewardServer } from './server.js';
import { post } from './test-utils/http.js';

const advantagesDir = dirname(createRequire(import.meta.url).resolve('@rlvr/advantages/package.json'));
const ROWS_FILE = join(advantagesDir, 'examples', 'rollouts.jsonl');
const JSONL = readFileSync(ROWS_FILE, 'utf8');
const ROWS = JSONL.split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Record<string, unknown>);

/** The CLI's lines `{"advantages", "weights"}` for the example rows. */
function cli(args: string[]): { advantages: number[]; weights: number[] }[] {
  const r = spawnSync(process.execPath, [join(advantagesDir, 'dist', 'cli.js'), '--weights', '--in', ROWS_FILE, ...args], {
    encoding: 'utf8',
  });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

let server: RewardServer;
let url: string;
beforeAll(async () => {
  server = await RewardServer.start({ port: 0, concurrency: 1 });
  url = server.url;
});
afterAll(() => server.close());

describe('POST /advantages', () => {
  it.each([
    ['grail', {}],
    ['oar-g', { tau: 0.3 }],
    ['grpo', {}],
    ['rloo+grail', { sigmaW: 1, symmetry: 'both' }],
    ['reinforce-pp-baseline', {}],
  ] as [string, Record<string, unknown>][])('%s %j: the same numbers as the rlvr-advantages CLI', async (estimator, options) => {
    const flags = Object.entries(options).flatMap(([k, v]) => [`--${k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())}`, String(v)]);
    const want = cli(['--estimator', estimator, ...flags]);
    const r = await post(`${url}/advantages`, { rows: ROWS, estimator, options, weights: true });
    expect(r.status).toBe(200);
    expect(r.json.estimator).toBe(estimator);
    expect(r.json.advantages).toEqual(want.map((w) => w.advantages));
    expect(r.json.weights).toEqual(want.map((w) => w.weights));
    expect(r.json.sequenceAdvantages).toHaveLength(ROWS.length);
    expect(typeof r.json.metrics.num_rollouts).toBe('number');
    for (const [k, v] of Object.entries(options)) expect(r.json.config[k]).toBe(v);
  });

  it('takes a JSON array, JSONL, or an object; estimator and options also from the query string', async () => {
    const qs = 'estimator=rloo%2Bgrail&sigma-w=1&symmetry=both&weights=1';
    const forms = await Promise.all([
      post(`${url}/advantages?${qs}`, ROWS),
      post(`${url}/advantages?${qs}`, JSONL, { headers: { 'content-type': 'application/x-ndjson' } }),
      post(`${url}/advantages?estimator=rloo+grail&sigmaW=1&symmetry=both&weights=true`, { rows: ROWS }), // unescaped '+'
      post(`${url}/advantages?sigmaW=1`, {
        rows: ROWS,
        estimator: 'rloo+grail',
        options: { sigmaW: 0.2, symmetry: 'both' },
        weights: true,
      }),
    ]);
    const want = cli(['--estimator', 'rloo+grail', '--sigma-w', '1', '--symmetry', 'both']);
    for (const r of forms) {
      expect(r.status).toBe(200);
      expect(r.json.advantages).toEqual(want.map((w) => w.advantages));
      expect(r.json.weights).toEqual(want.map((w) => w.weights));
    }
    const noWeights = await post(`${url}/advantages`, ROWS);
    expect(noWeights.json.estimator).toBe('grail');
    expect(noWeights.json.weights).toBeUndefined();
  });

  it('hand-computed GRPO: group {1, 0} gets ±1/√2 (Bessel std), a group of one gets 0; groups need not be consecutive', async () => {
    const rows = [
      { group: 'a', reward: 1, length: 2 },
      { group: 7, reward: 0.5, length: 1 },
      { group: 'a', reward: 0, length: 3 },
    ];
    const r = await post(`${url}/advantages?estimator=grpo`, rows);
    expect(r.status).toBe(200);
    const a = Math.fround(0.5 / (Math.SQRT1_2 + 1e-6));
    // the body holds the shortest decimals that read back as the same float32
    expect((r.json.advantages as number[][]).map((row) => row.map(Math.fround))).toEqual([[a, a], [0], [-a, -a, -a]]);
    expect(r.json.sequenceAdvantages[0]).toBeCloseTo(Math.SQRT1_2, 5);
  });

  it.each([
    ['a row missing its reward', [{ group: 1, length: 2, saliency: [1, 1] }], {}, 'invalid_request', /row 0: reward/],
    [
      'saliency of the wrong length',
      [
        { group: 1, reward: 1, length: 2, saliency: [1, 1] },
        { group: 1, reward: 0, length: 3, saliency: [1] },
      ],
      {},
      'invalid_request',
      /item 1.*has 1 entries but length is 3/,
    ],
    ['no saliency for grail', [{ group: 1, reward: 1, length: 2 }], {}, 'invalid_request', /saliency.*missing/],
    ['an unknown estimator', ROWS, { estimator: 'ppo' }, 'invalid_estimator', /ppo.*grail/s],
    [
      'a bad option',
      ROWS,
      { estimator: 'grail', options: { symmetry: 'all' } },
      'invalid_estimator',
      /symmetry: must be one of "wrong", "correct", "both"/,
    ],
    ['an unknown option', ROWS, { estimator: 'grpo', options: { sigmaW: 1 } }, 'invalid_estimator', /sigmaW/],
    ['no rows', [], {}, 'invalid_request', /at least one/],
    ['a number', 5, {}, 'invalid_request', /JSON array of rows/],
  ] as [string, unknown, Record<string, unknown>, string, RegExp][])(
    '%s is a 400 that says so',
    async (_name, rows, extra, code, message) => {
      const payload = Array.isArray(rows) && Object.keys(extra).length > 0 ? { rows, ...extra } : rows;
      const r = await post(`${url}/advantages`, payload);
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe(code);
      expect(r.json.error.message).toMatch(message);
    },
  );

  it('names the JSONL line of a bad row and of broken JSON', async () => {
    const lines = JSONL.trim().split('\n');
    // a blank line first: lines count from the top of the body, rows do not
    const badRow = ['', ...lines.slice(0, 3), '{"group": "q9", "reward": "high", "length": 1, "saliency": [1]}', ...lines.slice(3)].join(
      '\n',
    );
    const r = await post(`${url}/advantages`, badRow);
    expect([r.status, r.json.error.line, r.json.error.index]).toEqual([400, 5, 3]);
    expect(r.json.error.message).toMatch(/line 5, item 3.*row 3: reward/);
    const shortSaliency = ['', ...lines.slice(0, 2), '{"group": "q9", "reward": 1, "length": 3, "saliency": [1]}'].join('\n');
    const s = await post(`${url}/advantages?estimator=grail`, shortSaliency);
    expect([s.status, s.json.error.line, s.json.error.field]).toEqual([400, 4, 'saliency']);
    const broken = [...lines.slice(0, 5), '{"group": ', ...lines.slice(5)].join('\n');
    const b = await post(`${url}/advantages`, broken);
    expect([b.status, b.json.error.code, b.json.error.line]).toEqual([400, 'invalid_json', 6]);
  });
});
