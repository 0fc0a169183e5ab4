// mtlite's WebAssembly module in headless Chromium on one HTML page: a timing child of
// bench/text_bench.py, driven by puppeteer-core (tests/wasm/node_modules) as tests/wasm/page_test.mjs
// drives Firefox.
//   node bench/text/chromium_text.mjs -m MODEL --page PAGE [--batch B] [--passes N] [--shortlist]
//        [--ratio R --offset O] [--output FILE]
// web/page/serve.mjs serves web/ and MODEL; the browser opens /page/sample.html (a document of that
// origin without script) and everything below runs inside the page, on its main thread: import
// /mtlite.js, Mtlite.load() (the wasm-simd128 module, fetched and compiled), loadModel (the fetched
// bytes), createTranslator({maxBatch: B, alignments: true}), then translateText(page, {html: true,
// beam: 1}) --passes times, timed with the page's performance.now() (pass 1 is the warm-up). The
// page text is handed in as a string, byte for byte PAGE. Prints one JSON object (module_s includes
// the fetch of the module, model_s the fetch of the model). CHROMIUM: the browser (default chromium).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { serve } from '../../web/page/serve.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const model = opt('-m'), pagePath = opt('--page');
if (!model || !pagePath) {
  console.error('usage: node bench/text/chromium_text.mjs -m MODEL --page PAGE [--batch B] [--passes N] [--shortlist] ' +
    '[--ratio R --offset O] [--output FILE]');
  process.exit(2);
}
const settings = { batch: Number(opt('--batch', 1)), passes: Number(opt('--passes', 2)),
  options: { html: true, beam: 1, shortlist: args.includes('--shortlist') }, page: readFileSync(pagePath, 'utf8') };
if (opt('--ratio')) Object.assign(settings.options, { maxLengthRatio: Number(opt('--ratio')), maxLengthOffset: Number(opt('--offset', 10)) });

const puppeteer = createRequire(`${ROOT}tests/wasm/package.json`)('puppeteer-core');
const which = spawnSync('sh', ['-c', `command -v ${process.env.CHROMIUM || 'chromium'}`], { encoding: 'utf8' });
const executablePath = which.stdout.trim();
if (!executablePath) {
  console.error(`chromium_text: no browser ${process.env.CHROMIUM || 'chromium'}`);
  process.exit(2);
}
const { server, url } = await serve({ port: 0, model });
const t0 = performance.now();
const browser = await puppeteer.launch({ executablePath, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions'] });
let rc = 0;
try {
  const browserS = (performance.now() - t0) / 1000;
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${url}sample.html`, { waitUntil: 'load' });
  const r = await page.evaluate(async ({ batch, passes, options, page: text }) => {
    const { Mtlite } = await import('/mtlite.js');
    let t = performance.now();
    const mt = await Mtlite.load();
    const moduleS = (performance.now() - t) / 1000;
    t = performance.now();
    const bytes = new Uint8Array(await (await fetch('/page/demo.int8.mtlite')).arrayBuffer());
    const m = mt.loadModel(bytes);
    const modelS = (performance.now() - t) / 1000;
    t = performance.now();
    const tr = m.createTranslator({ maxBatch: batch, alignments: true });
    const createS = (performance.now() - t) / 1000;
    const runs = [];
    let res = null;
    for (let p = 0; p < passes; ++p) {
      t = performance.now();
      res = tr.translateText(text, options);
      runs.push((performance.now() - t) / 1000);
    }
    return { kernel_table: mt.kernelTable, module_s: moduleS, model_s: modelS, create_s: createS, runs,
      sentences: res.sentences.length, failed: res.failed, text: res.text,
      wasm_memory_bytes: mt._x.memory.buffer.byteLength };
  }, settings);
  if (opt('--output')) writeFileSync(opt('--output'), r.text);
  delete r.text;
  console.log(JSON.stringify({ engine: 'mtlite-wasm-chromium', browser: await browser.version(), batch: settings.batch,
    browser_s: browserS, ...r, page_errors: errors }));
} catch (e) {
  console.error(`chromium_text: ${e && e.stack ? e.stack : e}`);
  rc = 1;
} finally {
  await browser.close();
  server.close();
}
process.exit(rc);
