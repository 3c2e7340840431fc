import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { creditMetrics } from './credit/metrics.js';
import { writeCreditPage } from './credit/page.js';
import { writeReport } from './report.js';
import { syntheticCredit } from './test-utils/synthetic-credit.js';
import { writeSyntheticRun } from './test-utils/synthetic-run.js';

// The report opened in a real headless Chromium (Debian's `chromium`; CI installs it in .ci/run).
// test/chromium-check.mjs drives it over the DevTools protocol and reports console errors,
// exceptions, network requests and each chart's rendered SVG size, and writes a screenshot.
const CHECK = fileURLToPath(new URL('../test/chromium-check.mjs', import.meta.url));
const hasChromium = spawnSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).status === 0;
if (!hasChromium) console.warn('[skipped] report.chromium.test.ts: `chromium` is not on PATH (apt-get install chromium)');

interface CheckResult {
  ok: boolean;
  error?: string;
  title: string;
  figures: { chart: string; svg: boolean; width: number; height: number; marks: number; nodata: boolean }[];
  tokens: number;
  scripts: number;
  consoleErrors: string[];
  exceptions: string[];
  otherRequests: string[];
  screenshotBytes: number;
}

function check(file: string, png: string): Promise<CheckResult> {
  // Node 20 has WebSocket behind a flag; Node 22 has it by default.
  const flags = typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'undefined' ? ['--experimental-websocket'] : [];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...flags, CHECK, file, png], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', () => {
      try {
        resolve(JSON.parse(out) as CheckResult);
      } catch {
        reject(new Error(`chromium-check printed no result; stderr: ${err.slice(-1000)}`));
      }
    });
  });
}

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'rlvr-chromium-test-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe.skipIf(!hasChromium)('report in headless Chromium', () => {
  test('loads without console errors or requests, every chart draws, screenshot written', { timeout: 300_000 }, async () => {
    const run = await writeSyntheticRun(join(root, 'run'), {
      injectTokens: ['<script>alert("x")</script>'],
      extraMetric: '<img src=x onerror=alert(1)>',
    });
    const { path, charts } = await writeReport(run.dir);
    const png = join(root, 'report.png');
    const r = await check(path, png);
    expect(r.error).toBeUndefined();
    expect(r.ok).toBe(true);
    expect(r.consoleErrors).toEqual([]);
    expect(r.exceptions).toEqual([]);
    expect(r.otherRequests).toEqual([]);
    expect(r.scripts).toBe(0);
    expect(r.title).toBe('rlvr report: run');
    for (const id of ['reward', 'accuracy', 'loss', 'kl', 'entropy', 'clip', 'weight-histogram', 'position-profile']) {
      const f = r.figures.find((x) => x.chart === id);
      expect(f, id).toBeDefined();
      expect(f!.svg && !f!.nodata, id).toBe(true);
      expect(f!.width, id).toBeGreaterThan(300);
      expect(f!.height, id).toBeGreaterThan(150);
      expect(f!.marks, id).toBeGreaterThan(20);
    }
    expect(r.figures.filter((f) => f.svg)).toHaveLength(charts);
    expect(r.tokens).toBeGreaterThan(100);
    // A blank 1200x2000 PNG compresses to a few kB; charts and text make it hundreds.
    expect(r.screenshotBytes).toBeGreaterThan(50_000);
    expect((await stat(png)).size).toBe(r.screenshotBytes);
  });

  test('the credit page: no console errors or requests, every chart draws', { timeout: 300_000 }, async () => {
    const report = creditMetrics(syntheticCredit(400), { resamples: 200 });
    const path = join(root, 'credit.html');
    const { charts } = await writeCreditPage(path, report, { title: 'synthetic' });
    const png = join(root, 'credit.png');
    const r = await check(path, png);
    expect(r.error).toBeUndefined();
    expect(r.consoleErrors).toEqual([]);
    expect(r.exceptions).toEqual([]);
    expect(r.otherRequests).toEqual([]);
    expect(r.scripts).toBe(0);
    expect(r.title).toBe('rlvr credit: synthetic');
    expect(r.figures.filter((f) => f.svg)).toHaveLength(charts);
    for (const f of r.figures) {
      expect(f.width, f.chart).toBeGreaterThan(300);
      expect(f.marks, f.chart).toBeGreaterThan(20);
    }
    expect(r.screenshotBytes).toBeGreaterThan(50_000);
  });

  test('the checker itself sees console errors, exceptions and network requests', { timeout: 300_000 }, async () => {
    const page = join(root, 'broken.html');
    await writeFile(
      page,
      '<!doctype html><title>broken</title><img src="http://127.0.0.1:9/x.png"><script>console.error("boom"); throw new Error("kaput")</script>',
    );
    const r = await check(page, join(root, 'broken.png'));
    expect(r.ok).toBe(true);
    expect(r.consoleErrors.some((e) => e.includes('boom'))).toBe(true);
    expect(r.exceptions.some((e) => e.includes('kaput'))).toBe(true);
    expect(r.otherRequests).toContain('http://127.0.0.1:9/x.png');
  });
});
