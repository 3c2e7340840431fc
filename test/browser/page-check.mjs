// Open URL in a real headless Chromium (Debian's `chromium`) over the DevTools protocol, wait until
// the page leaves its result on `window.rlvrResult` (or an error on `window.rlvrError`), and print
// one JSON object: the result, the heatmap's cell count, the page's "no WebGPU" line, console errors
// and exceptions. Extra Chromium flags (the WebGPU ones) after the URL.
//
//   node [--experimental-websocket] page-check.mjs URL [--chromium-flag ...]
//
// Needs a global WebSocket (Node 22, or Node 20 with --experimental-websocket) and `chromium` on PATH.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [url, ...extraFlags] = process.argv.slice(2);
if (!url) {
  process.stderr.write('usage: page-check.mjs URL [--chromium-flag ...]\n');
  process.exit(2);
}
const TIMEOUT_MS = Number(process.env.PAGE_CHECK_TIMEOUT_MS ?? 280_000);

const profile = await mkdtemp(join(tmpdir(), 'rlvr-chromium-page-'));
const chrome = spawn(
  process.env.CHROMIUM ?? 'chromium',
  [
    '--headless',
    '--no-sandbox',
    '--disable-dev-shm-usage',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-extensions',
    '--disable-background-networking',
    '--disable-component-update',
    '--remote-debugging-address=127.0.0.1',
    '--remote-debugging-port=0',
    `--user-data-dir=${profile}`,
    ...extraFlags,
    'about:blank',
  ],
  { stdio: ['ignore', 'ignore', 'pipe'] },
);

let stderrText = '';
const timer = setTimeout(() => fail(`timed out after ${TIMEOUT_MS} ms`), TIMEOUT_MS);
async function cleanup() {
  clearTimeout(timer);
  if (chrome.exitCode === null) {
    chrome.kill('SIGTERM');
    await new Promise((r) => {
      const t = setTimeout(() => {
        chrome.kill('SIGKILL');
        r();
      }, 3000);
      chrome.once('exit', () => {
        clearTimeout(t);
        r();
      });
    });
  }
  await rm(profile, { recursive: true, force: true }).catch(() => {});
}
async function fail(message) {
  await cleanup();
  process.stdout.write(JSON.stringify({ ok: false, error: message, chromiumStderr: stderrText.slice(-3000) }) + '\n');
  process.exit(1);
}

const browserWs = await new Promise((res, rej) => {
  chrome.stderr.setEncoding('utf8');
  chrome.stderr.on('data', (chunk) => {
    stderrText += chunk;
    const m = /DevTools listening on (ws:\/\/\S+)/.exec(stderrText);
    if (m) res(m[1]);
  });
  chrome.once('exit', (code) => rej(new Error(`chromium exited with code ${code} before DevTools was ready`)));
  chrome.once('error', rej);
}).catch((err) => fail(err.message));

const port = new URL(browserWs).port;
const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
const target = targets.find((t) => t.type === 'page');
if (!target) await fail('no page target');

const ws = new WebSocket(target.webSocketDebuggerUrl);
await new Promise((res, rej) => {
  ws.onopen = res;
  ws.onerror = () => rej(new Error('websocket error'));
}).catch((err) => fail(err.message));

let nextId = 1;
const pending = new Map();
const listeners = new Map();
ws.onmessage = (ev) => {
  const msg = JSON.parse(typeof ev.data === 'string' ? ev.data : Buffer.from(ev.data).toString('utf8'));
  if (msg.id !== undefined) {
    const p = pending.get(msg.id);
    pending.delete(msg.id);
    if (msg.error) p?.rej(new Error(`${msg.error.message}`));
    else p?.res(msg.result);
  } else for (const fn of listeners.get(msg.method) ?? []) fn(msg.params);
};
const send = (method, params = {}) =>
  new Promise((res, rej) => {
    const id = nextId++;
    pending.set(id, { res, rej });
    ws.send(JSON.stringify({ id, method, params }));
  });
const on = (method, fn) => listeners.set(method, [...(listeners.get(method) ?? []), fn]);

const consoleErrors = [];
const exceptions = [];
on('Runtime.consoleAPICalled', (p) => {
  if (p.type === 'error' || p.type === 'assert') consoleErrors.push(p.args.map((a) => a.value ?? a.description ?? '').join(' '));
});
on('Runtime.exceptionThrown', (p) =>
  exceptions.push(p.exceptionDetails?.exception?.description ?? p.exceptionDetails?.text ?? 'exception'),
);

try {
  await send('Runtime.enable');
  await send('Page.enable');
  const nav = await send('Page.navigate', { url });
  if (nav.errorText) await fail(`navigation failed: ${nav.errorText}`);
  const probe = `(() => {
    if (window.rlvrResult === undefined && window.rlvrError === undefined) return null;
    return JSON.stringify({
      result: window.rlvrResult ?? null,
      pageError: window.rlvrError ?? null,
      cells: document.querySelectorAll('#heatmap .tok').length,
      noWebgpuLine: document.getElementById('nowebgpu').textContent,
      backendLine: document.getElementById('backend').textContent,
      summary: document.getElementById('summary').textContent,
    });
  })()`;
  for (;;) {
    const { result } = await send('Runtime.evaluate', { expression: probe, returnByValue: true });
    if (typeof result.value === 'string') {
      ws.close();
      await cleanup();
      process.stdout.write(JSON.stringify({ ok: true, ...JSON.parse(result.value), consoleErrors, exceptions }) + '\n');
      process.exit(0);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
} catch (err) {
  await fail(err.message);
}
