#!/usr/bin/env node
// A static server for the page on 127.0.0.1 (development and tests; nothing else is served):
//   node web/page/serve.mjs [--port N] [--model FILE]
// serves web/ (the page at /page/, the API and the modules next to it) and FILE (default: the host
// build's build/models/demo.int8.mtlite) as /page/demo.int8.mtlite. Prints the page's URL.
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = fileURLToPath(new URL('..', import.meta.url));
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json', '.png': 'image/png' };

/** Starts the server; resolves to {server, url} (url: the page). */
export function serve({ port = 0, model = join(WEB, '..', 'build', 'models', 'demo.int8.mtlite') } = {}) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    let file = path === '/page/demo.int8.mtlite' ? model : normalize(join(WEB, path));
    if (file !== model && !file.startsWith(WEB)) file = null; // outside web/
    if (file && path.endsWith('/')) file = join(file, 'index.html');
    let st = null;
    try {
      st = file && statSync(file);
    } catch {}
    if (!st || !st.isFile() || file.split(sep).includes('node_modules')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream',
      'content-length': st.size, 'cache-control': 'no-store' });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) =>
    server.listen(port, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/page/` })));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const { url } = await serve({ port: Number(opt('--port') || 8080), ...(opt('--model') ? { model: opt('--model') } : {}) });
  console.log(`mtlite page: ${url}`);
}
