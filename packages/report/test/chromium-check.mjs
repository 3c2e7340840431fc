// Load an HTML file in headless Chromium over the DevTools protocol and report
// what a person would see go wrong: console errors, uncaught exceptions, any
// network request, and each chart figure's SVG size. Writes a PNG screenshot.
//
//   node [--experimental-websocket] chromium-check.mjs FILE.html OUT.png [--full]
//
// Prints one JSON object on stdout. Needs a global WebSocket (Node 22, or
// Node 20 with --experimental-websocket) and `chromium` on PATH.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [file, png, ...flags] = process.argv.slice(2);
if (!file || !png) {
  process.stderr.write('usage: chromium-check.mjs FILE.html OUT.png [--full]\n');
  process.exit(2);
}
const full = flags.includes('--full');
// --tiles: also write OUT-0.png, OUT-1.png, ... (1200 x 1400 slices of the full page) for people to look at.
const tiles = flags.includes('--tiles');
const TIMEOUT_MS = 45_000;

const profile = await mkdtemp(join(tmpdir(), 'rlvr-chromium-'));
const chrome = spawn(
  process.env.CHROMIUM ?? 'chromium',
  [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-extensions',
    '--disable-background-networking',
    '--disable-component-update',
    '--hide-scrollbars',
    '--remote-debugging-address=127.0.0.1',
    '--remote-debugging-port=0',
    `--user-data-dir=${profile}`,
    '--window-size=1200,2000',
    'about:blank',
  ],
  { stdio: ['ignore', 'ignore', 'pipe'] },
);

const timer = setTimeout(() => fail(`timed out after ${TIMEOUT_MS} ms`), TIMEOUT_MS);
let stderrText = '';
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
  process.stdout.write(JSON.stringify({ ok: false, error: message, chromiumStderr: stderrText.slice(-2000) }) + '\n');
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
const page = targets.find((t) => t.type === 'page');
if (!page) await fail('no page target');

const ws = new WebSocket(page.webSocketDebuggerUrl);
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
  } else {
    for (const fn of listeners.get(msg.method) ?? []) fn(msg.params);
  }
};
const send = (method, params = {}) =>
  new Promise((res, rej) => {
    const id = nextId++;
    pending.set(id, { res, rej });
    ws.send(JSON.stringify({ id, method, params }));
  });
const on = (method, fn) => listeners.set(method, [...(listeners.get(method) ?? []), fn]);

const consoleErrors = [];
const consoleWarnings = [];
const exceptions = [];
const requests = [];
on('Runtime.consoleAPICalled', (p) => {
  const text = p.args.map((a) => a.value ?? a.description ?? '').join(' ');
  if (p.type === 'error' || p.type === 'assert') consoleErrors.push(text);
  else if (p.type === 'warning') consoleWarnings.push(text);
});
on('Runtime.exceptionThrown', (p) =>
  exceptions.push(p.exceptionDetails?.exception?.description ?? p.exceptionDetails?.text ?? 'exception'),
);
on('Log.entryAdded', (p) => {
  if (p.entry.level === 'error') consoleErrors.push(`${p.entry.source}: ${p.entry.text}${p.entry.url ? ` (${p.entry.url})` : ''}`);
});
on('Network.requestWillBeSent', (p) => requests.push(p.request.url));

try {
  await send('Runtime.enable');
  await send('Log.enable');
  await send('Network.enable');
  await send('Page.enable');
  const loaded = new Promise((res) => on('Page.loadEventFired', res));
  const url = pathToFileURL(resolve(file)).href;
  const nav = await send('Page.navigate', { url });
  if (nav.errorText) await fail(`navigation failed: ${nav.errorText}`);
  await loaded;
  await new Promise((r) => setTimeout(r, 300));

  const { result } = await send('Runtime.evaluate', {
    returnByValue: true,
    expression: `(() => {
      const figures = [...document.querySelectorAll('figure.chart')].map((f) => {
        const svg = f.querySelector('svg');
        const box = svg ? svg.getBoundingClientRect() : null;
        return {
          chart: f.dataset.chart,
          svg: !!svg,
          width: box ? Math.round(box.width) : 0,
          height: box ? Math.round(box.height) : 0,
          marks: svg ? svg.querySelectorAll('path, rect, line, circle, text').length : 0,
          nodata: !!f.querySelector('.nodata'),
        };
      });
      return {
        title: document.title,
        figures,
        tokens: document.querySelectorAll('.completion .tok').length,
        scripts: document.scripts.length,
        width: document.documentElement.scrollWidth,
        height: document.documentElement.scrollHeight,
      };
    })()`,
  });
  const info = result.value;

  let shot;
  if (full) {
    const m = await send('Page.getLayoutMetrics');
    const { width, height } = m.cssContentSize;
    shot = await send('Page.captureScreenshot', {
      format: 'png',
      captureBeyondViewport: true,
      clip: { x: 0, y: 0, width, height, scale: 1 },
    });
  } else {
    shot = await send('Page.captureScreenshot', { format: 'png' });
  }
  if (tiles) {
    const m = await send('Page.getLayoutMetrics');
    const { width, height } = m.cssContentSize;
    for (let i = 0, y = 0; y < height; i++, y += 1400) {
      const t = await send('Page.captureScreenshot', {
        format: 'png',
        captureBeyondViewport: true,
        clip: { x: 0, y, width, height: Math.min(1400, height - y), scale: 1 },
      });
      await writeFile(png.replace(/\.png$/, '') + `-${i}.png`, Buffer.from(t.data, 'base64'));
    }
  }
  const bytes = Buffer.from(shot.data, 'base64');
  await writeFile(png, bytes);
  ws.close();
  await cleanup();
  const ownUrl = pathToFileURL(resolve(file)).href;
  process.stdout.write(
    JSON.stringify({
      ok: true,
      ...info,
      consoleErrors,
      consoleWarnings,
      exceptions,
      otherRequests: requests.filter((u) => u !== ownUrl),
      screenshotBytes: bytes.length,
    }) + '\n',
  );
} catch (err) {
  await fail(err.message);
}
