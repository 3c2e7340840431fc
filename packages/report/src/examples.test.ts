import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { CreditReportSchema } from './credit/schema.js';

// The README's credit example must keep running (against the built packages), and SciPy must agree with its JSON.
const SCRIPT = fileURLToPath(new URL('../examples/credit.mjs', import.meta.url));
const CHECK = fileURLToPath(new URL('../../../tools/credit/check.py', import.meta.url));
const hasScipy = spawnSync('/usr/bin/python3', ['-c', 'import scipy'], { encoding: 'utf8' }).status === 0;
if (!hasScipy)
  console.warn('[skipped] the SciPy check of the credit example: /usr/bin/python3 has no scipy (apt-get install python3-scipy)');

describe('examples/credit.mjs', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'credit-example-'));
  const stdout = execFileSync(process.execPath, [SCRIPT, dir], { encoding: 'utf8' });

  test('scores grpo, grail and grpo+oar-g on one batch and writes the JSON and the page', () => {
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^status: \{"scored":\d+,"unlabelled":\d+,"no_prefix":\d+/);
    expect(lines[1]).toMatch(/^grpo: error-line AUROC 0\.500 \[0\.500, 0\.500\] over \d+ rollouts$/);
    expect(lines[2]).toMatch(/^grail: error-line AUROC 0\.\d{3} \[/);
    expect(lines[4]).toBe(`wrote ${join(dir, 'credit.json')} and ${join(dir, 'credit.html')} (7 charts)`);
    const report = CreditReportSchema.parse(JSON.parse(readFileSync(join(dir, 'credit.json'), 'utf8')));
    expect(report.methods.map((m) => m.name)).toEqual(['grpo', 'grail', 'grpo+oar-g']);
    expect(readFileSync(join(dir, 'credit.html'), 'utf8')).toContain('rlvr credit: example');
  });

  test.skipIf(!hasScipy)('tools/credit/check.py recomputes every mean and test of its JSON with SciPy', () => {
    const r = spawnSync('/usr/bin/python3', [CHECK, join(dir, 'credit.json')], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^largest relative deviation /);
    expect(r.status).toBe(0);
  });
});
