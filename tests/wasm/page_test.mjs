// The page (web/page/) in headless Chromium, driven through the DevTools protocol over a pipe
// (--remote-debugging-pipe: no WebSocket client needed), served by web/page/serve.mjs:
//   node tests/wasm/page_test.mjs SENTENCES EXPECTED SCREENSHOT.png [BEAM]
// loads the demo model with the page's button, types the sentences, translates (in the page's Web
// Worker), waits for the end, and checks that the translations equal EXPECTED (the native CLI's
// output for SENTENCES), that they grew token by token (stream events beyond one per sentence),
// that the module ran the wasm-simd128 kernels, that the page shows the cross-attention heatmap of
// the last sentence ([target tokens with </s>] x [source tokens], each row's most attended source
// token as the JavaScript API under node gives them for the same model, sentence and beam) and the
// profiler's table (rows, slowest first), and that the page logged no error. Saves a screenshot of the whole page. CHROMIUM: the browser (default chromium).
//
// With the text files too:
//   node tests/wasm/page_test.mjs SENTENCES EXPECTED SCREENSHOT.png BEAM PARAGRAPHS PARAGRAPHS_EXPECTED \
//     SNIPPET.html SNIPPET_EXPECTED SAMPLE_EXPECTED TEXT_SCREENSHOT.png
// the page's text and HTML modes, in Chromium and in Firefox (FIREFOX, default firefox-esr, driven
// by puppeteer-core from tests/wasm/node_modules over WebDriver BiDi; MTLITE_WASM_FIREFOX=0 skips
// it): the paragraphs' translation equal to the native CLI's (`mtlite translate`, a line is a
// paragraph), the snippet's and the sample page's (sample.html, opened with the page's button) to
// `mtlite translate --html`; the rendered translation in its sandboxed iframe without script, the
// low-confidence marks counted, the heatmap's columns labelled with the source pieces of the last
// sentence (Model.tokenize under node). TEXT_SCREENSHOT: the sample page translated, in Chromium.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../../web/page/serve.mjs';
import { Mtlite } from '../../web/mtlite.js';

const [sentencesFile, expectedFile, screenshot, beam = '1', ...textArgs] = process.argv.slice(2);
const textFiles = textArgs.length >= 6 ? {
  paragraphs: readFileSync(textArgs[0], 'utf8').replace(/\n$/, ''), paragraphsExpected: readFileSync(textArgs[1], 'utf8').replace(/\n$/, ''),
  snippet: readFileSync(textArgs[2], 'utf8'), snippetExpected: readFileSync(textArgs[3], 'utf8'),
  sampleExpected: readFileSync(textArgs[4], 'utf8'), screenshot: textArgs[5],
} : null;
const sentences = readFileSync(sentencesFile, 'utf8').replace(/\n$/, '');
const expected = readFileSync(expectedFile, 'utf8').replace(/\n$/, '');
const fail = (msg) => {
  console.error(`page_test: FAIL: ${msg}`);
  process.exitCode = 1;
};

// ---- DevTools protocol over fds 3 (to the browser) and 4 (from it), NUL-terminated JSON ---------
class Cdp {
  constructor(child) {
    this.child = child;
    this.next = 1;
    this.pending = new Map();
    this.listeners = [];
    let buf = Buffer.alloc(0);
    child.stdio[4].on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      let end;
      while ((end = buf.indexOf(0)) >= 0) {
        const msg = JSON.parse(buf.subarray(0, end).toString());
        buf = buf.subarray(end + 1);
        if (msg.id && this.pending.has(msg.id)) {
          const { resolve, reject, method } = this.pending.get(msg.id);
          this.pending.delete(msg.id);
          if (msg.error) reject(new Error(`${method}: ${msg.error.message}`));
          else resolve(msg.result);
        } else for (const l of this.listeners) l(msg);
      }
    });
  }
  send(method, params = {}, sessionId) {
    const id = this.next++;
    this.child.stdio[3].write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject, method }));
  }
  once(method, sessionId) {
    return new Promise((resolve) => {
      const l = (msg) => {
        if (msg.method === method && msg.sessionId === sessionId) {
          this.listeners.splice(this.listeners.indexOf(l), 1);
          resolve(msg.params);
        }
      };
      this.listeners.push(l);
    });
  }
}

// The text and HTML modes, through evaluate/waitFor of either browser; engine: its name in messages.
async function textModes(engine, evaluate, waitFor) {
  const t = textFiles;
  let runs = Number(await evaluate(`document.body.dataset.textDone || 0`));
  const run = async (mode, text) => {
    await evaluate(`(() => { const m = document.getElementById('mode'); m.value = ${JSON.stringify(mode)};
      m.dispatchEvent(new Event('change')); if (${text !== null}) document.getElementById('source').value = ${JSON.stringify(text)};
      document.getElementById('beam').value = '1'; document.getElementById('translate').click(); })()`);
    ++runs;
    await waitFor(`document.body.dataset.textDone === '${runs}'`);
    return evaluate(`document.getElementById('target').value`);
  };
  const firstDiff = (a, b) => {
    let i = 0;
    while (i < a.length && a[i] === b[i]) ++i;
    return `at ${i}:\n  page:   ${JSON.stringify(a.slice(Math.max(0, i - 40), i + 60))}\n  native: ${JSON.stringify(b.slice(Math.max(0, i - 40), i + 60))}`;
  };
  const para = await run('text', t.paragraphs);
  if (para !== t.paragraphsExpected) fail(`${engine}: the paragraphs' translation differs from the native CLI's ${firstDiff(para, t.paragraphsExpected)}`);
  const html = await run('html', t.snippet);
  if (html !== t.snippetExpected) fail(`${engine}: the HTML snippet's translation differs from \`mtlite translate --html\`'s ${firstDiff(html, t.snippetExpected)}`);
  const view = await evaluate(`(() => { const f = document.getElementById('target-view');
    return { srcdoc: f.srcdoc, sandbox: f.getAttribute('sandbox'), low: f.dataset.low, marked: f.dataset.marked, sentences: f.dataset.sentences,
      labels: document.getElementById('heatmap').dataset.labels, caption: document.getElementById('heatmap-caption').textContent }; })()`);
  if (view.sandbox !== '' || /<script/i.test(view.srcdoc) || !/<b>|<i>|<em>/.test(view.srcdoc))
    fail(`${engine}: the rendered translation: sandbox ${JSON.stringify(view.sandbox)}, ${view.srcdoc.length} bytes, script kept or markup lost`);
  if (!(Number(view.sentences) > 0) || !(Number(view.marked) <= Number(view.low)))
    fail(`${engine}: low-confidence marks: ${view.marked} words marked of ${view.low} low, ${view.sentences} sentences`);
  const last = /“(.*)”/s.exec(view.caption);
  const mt = await Mtlite.load();
  const model = mt.loadModel(new Uint8Array(await (await fetch(`${url}demo.int8.mtlite`)).arrayBuffer()));
  const pieces = last ? model.tokenize(last[1]).pieces.join(' ') : '';
  model.dispose();
  if (!last || view.labels !== pieces) fail(`${engine}: the heatmap's columns ${JSON.stringify(view.labels)}, the source pieces ${JSON.stringify(pieces)} (${view.caption})`);
  // the sample page, opened with its button
  const before = runs;
  await evaluate(`document.getElementById('sample').click()`);
  await waitFor(`document.body.dataset.mode === 'html' && document.getElementById('source').value.includes('river path')`);
  const sample = await run('html', null);
  if (runs !== before + 1 || sample !== t.sampleExpected) fail(`${engine}: the sample page's translation differs from \`mtlite translate --html\`'s ${firstDiff(sample, t.sampleExpected)}`);
  const marks = await evaluate(`document.getElementById('target-view').dataset.marked`);
  return `paragraphs, snippet and sample page (${sample.length} bytes, ${marks} low-confidence words marked) equal to the native CLI's`;
}

const { server, url } = await serve();
const profile = mkdtempSync(join(tmpdir(), 'mtlite-page-'));
const browser = spawn(process.env.CHROMIUM || 'chromium',
  ['--headless=new', '--remote-debugging-pipe', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--no-default-browser-check', '--disable-extensions', '--disable-background-networking',
    '--window-size=1280,900', `--user-data-dir=${profile}`, 'about:blank'],
  { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let browserLog = '';
browser.stdio[2].on('data', (d) => (browserLog += d));
const timer = setTimeout(() => {
  fail(`timed out; browser log:\n${browserLog.slice(-2000)}`);
  browser.kill('SIGKILL');
  process.exit(1);
}, 300000);

try {
  const cdp = new Cdp(browser);
  const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: true });
  const s = (method, params) => cdp.send(method, params, sessionId);
  const errors = [];
  cdp.listeners.push((msg) => {
    if (msg.sessionId !== sessionId) return;
    if (msg.method === 'Runtime.exceptionThrown') errors.push(msg.params.exceptionDetails.text);
    if (msg.method === 'Runtime.consoleAPICalled' && msg.params.type === 'error')
      errors.push(msg.params.args.map((a) => a.value).join(' '));
  });
  await s('Page.enable');
  await s('Runtime.enable');
  const loaded = cdp.once('Page.loadEventFired', sessionId);
  await s('Page.navigate', { url });
  await loaded;
  // Evaluates an expression in the page (a promise is awaited); returns its value.
  const evaluate = async (expression) => {
    const r = await s('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
    if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.text}`);
    return r.result.value;
  };
  const waitFor = (cond) =>
    evaluate(`new Promise((ok) => { const t = setInterval(() => { if (${cond}) { clearInterval(t); ok(true); } }, 20); })`);

  await evaluate(`document.getElementById('demo').click()`);
  await waitFor(`document.body.dataset.state === 'ready' || document.body.dataset.state === 'empty'`);
  const status = await evaluate(`document.getElementById('model-status').textContent`);
  if (!/kernels wasm-simd128/.test(status)) fail(`model not loaded with the wasm-simd128 kernels: ${status}`);
  await evaluate(`(() => { const src = document.getElementById('source'); src.value = ${JSON.stringify(sentences)};
    document.getElementById('beam').value = ${JSON.stringify(beam)}; document.getElementById('translate').click(); })()`);
  await waitFor(`document.body.dataset.done === '1'`);
  const got = await evaluate(`document.getElementById('target').value`);
  const tokens = Number(await evaluate(`document.body.dataset.tokens`));
  const n = sentences.split('\n').length;
  const want = expected.split('\n'), have = got.split('\n');
  const differ = want.map((w, i) => (w === have[i] ? -1 : i)).filter((i) => i >= 0);
  if (have.length !== want.length || differ.length)
    fail(`${differ.length} of ${n} translations differ from the native CLI's; first: line ${differ[0] + 1}:\n` +
      `  page:   ${have[differ[0]]}\n  native: ${want[differ[0]]}`);
  if (!(tokens > n)) fail(`${tokens} stream events for ${n} sentences: the translations did not grow token by token`);
  // The heatmap against the API under node: the same model (as served), the last sentence, the beam.
  const mt = await Mtlite.load();
  const model = mt.loadModel(new Uint8Array(await (await fetch(`${url}demo.int8.mtlite`)).arrayBuffer()));
  const last = sentences.split('\n').at(-1);
  const [{ hypotheses: [h] }] = model.createTranslator({ maxBeam: 8, alignments: true })
    .translate([last], { beam: Number(beam), alignments: true });
  const rowArgmax = [];
  for (let i = 0; i <= h.ids.length; i++) {
    const row = h.alignment.subarray(i * h.sourceTokens, (i + 1) * h.sourceTokens);
    rowArgmax.push(row.indexOf(Math.max(...row)));
  }
  model.dispose();
  const heat = await evaluate(`(() => { const c = document.getElementById('heatmap');
    return { rows: Number(c.dataset.rows), cols: Number(c.dataset.cols), argmax: c.dataset.argmax, width: c.width, height: c.height }; })()`);
  if (heat.rows !== h.ids.length + 1 || heat.cols !== h.sourceTokens)
    fail(`heatmap ${heat.rows} x ${heat.cols}, the last sentence has ${h.ids.length + 1} target tokens (with </s>) x ${h.sourceTokens} source tokens`);
  else if (heat.argmax !== rowArgmax.join(' '))
    fail(`heatmap's most attended source tokens ${heat.argmax}, the API's ${rowArgmax.join(' ')}`);
  if (!(heat.width > 0 && heat.height > 0)) fail(`heatmap canvas ${heat.width} x ${heat.height}: nothing drawn`);
  const table = await evaluate(`[...document.querySelectorAll('#profile tbody tr')].map((r) => [...r.cells].map((c) => c.textContent))`);
  const ms = table.map((r) => Number(r[4]));
  if (!(table.length > 0 && table.length <= 15)) fail(`profile table: ${table.length} rows (want 1 to 15)`);
  else if (ms.some((t, i) => !(t >= 0) || (i > 0 && t > ms[i - 1]))) fail(`profile table not sorted by time: ${ms.join(' ')}`);
  else if (table.some((r) => !r[0] || !(Number(r[3]) > 0))) fail(`profile table: a row without op or calls: ${JSON.stringify(table)}`);
  const height = await evaluate(`document.documentElement.scrollHeight`);
  const shot = await s('Page.captureScreenshot',
    { format: 'png', captureBeyondViewport: true, clip: { x: 0, y: 0, width: 1280, height, scale: 1 } });
  writeFileSync(screenshot, Buffer.from(shot.data, 'base64'));
  if (textFiles) {
    console.log(`page_test: Chromium: ${await textModes('Chromium', evaluate, waitFor)}`);
    await new Promise((r) => setTimeout(r, 300)); // the iframes' documents drawn
    const h = await evaluate(`document.documentElement.scrollHeight`);
    const textShot = await s('Page.captureScreenshot',
      { format: 'png', captureBeyondViewport: true, clip: { x: 0, y: 0, width: 1280, height: h, scale: 1 } });
    writeFileSync(textFiles.screenshot, Buffer.from(textShot.data, 'base64'));
  }
  if (errors.length) fail(`page errors: ${errors.join('; ')}`);
  if (!process.exitCode)
    console.log(`page_test: ${n} sentences (beam ${beam}) equal to the native CLI, ${tokens} stream events; ${status} ` +
      `heatmap ${heat.rows} x ${heat.cols}, profile table ${table.length} rows (${table[0].join(' ')}); ` +
      `screenshot ${screenshot}`);
} catch (e) {
  fail(`${e.message}\nbrowser log:\n${browserLog.slice(-2000)}`);
} finally {
  browser.kill();
  await new Promise((r) => browser.once('exit', r));
  rmSync(profile, { recursive: true, force: true, maxRetries: 5 });
}

// ---- Firefox: the text modes, through puppeteer-core (WebDriver BiDi) ------------------------------
if (textFiles && process.env.MTLITE_WASM_FIREFOX !== '0' && !process.exitCode) {
  let ff = null;
  try {
    const { default: puppeteer } = await import('puppeteer-core');
    const which = spawnSync('sh', ['-c', `command -v "${process.env.FIREFOX || 'firefox-esr'}"`], { encoding: 'utf8' });
    const firefox = which.stdout.trim(); // puppeteer needs the browser's path
    if (!firefox) throw new Error(`${process.env.FIREFOX || 'firefox-esr'} not found (apt-get install firefox-esr; scripts/setup.sh does)`);
    ff = await puppeteer.launch({ browser: 'firefox', executablePath: firefox, headless: true,
      args: ['--width=1280', '--height=900'] });
    const page = await ff.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(url, { waitUntil: 'load' });
    const evaluate = (expression) => page.evaluate(expression);
    const waitFor = (cond) => page.waitForFunction(cond, { polling: 20, timeout: 100000 });
    await evaluate(`document.getElementById('demo').click()`);
    await waitFor(`document.body.dataset.state === 'ready' || document.body.dataset.state === 'empty'`);
    const status = await evaluate(`document.getElementById('model-status').textContent`);
    if (!/kernels wasm-simd128/.test(status)) fail(`Firefox: model not loaded with the wasm-simd128 kernels: ${status}`);
    console.log(`page_test: Firefox ${await ff.version()}: ${await textModes('Firefox', evaluate, waitFor)}`);
    if (errors.length) fail(`Firefox: page errors: ${errors.join('; ')}`);
  } catch (e) {
    fail(`Firefox: ${e.message}`);
  } finally {
    if (ff) await ff.close();
  }
}
clearTimeout(timer);
server.close();
