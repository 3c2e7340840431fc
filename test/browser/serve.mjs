/**
 * A static server for the built page on loopback (a page's fetch and its wasm need http://, not file://).
 *
 *   node test/browser/serve.mjs [DIR] [PORT]     (default: dist/page, 8765; then open the URL it prints)
 */
import { realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.json': 'application/json', '.wasm': 'application/wasm' };

/** Serve `dir` on 127.0.0.1:`port` (0: any free port). Resolves to the server and its base URL. */
export function servePage(dir, port = 0) {
  const root = resolve(dir);
  const server = createServer(async (req, res) => {
    const path = normalize(join(root, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)));
    if (req.method !== 'GET' || (path !== root && !path.startsWith(root + sep))) {
      res.writeHead(req.method === 'GET' ? 403 : 405).end();
      return;
    }
    const file = path.endsWith(sep) || path === root ? join(path, 'index.html') : path;
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((res, rej) => {
    server.once('error', rej);
    server.listen(port, '127.0.0.1', () => res({ server, url: `http://127.0.0.1:${server.address().port}/` }));
  });
}

// run as a script (through a symbolic link too: Node gives this module its real path)
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? fileURLToPath(new URL('dist/page', import.meta.url));
  const { url } = await servePage(dir, Number(process.argv[3] ?? 8765));
  console.log(`serving ${dir} at ${url} (open it in a browser with WebGPU; ?backend=cpu for the cpu backend; Ctrl-C stops)`);
}
