// The page: a model from a file (or the demo model served next to the page), text in, translations
// that grow token by token, from the translator in worker.js. The state is mirrored in
// document.body.dataset (state: empty | loading | ready | busy; tokens: stream events of the last
// run; done: the number of the last finished run; textDone: of text-mode runs finished; mode) for
// tests driving the page. After a run: the
// cross-attention heatmap of its last sentence (canvas #heatmap; its dataset: rows = target tokens
// with </s>, cols = source tokens with </s>, argmax = each row's most attended source token,
// labels = the columns' source pieces) and the profiler's slowest ops (table #profile).
//
// Input modes (#mode): lines (a sentence per line, streamed), text (paragraphs: the text layer cuts
// them into sentences) and html (an HTML document or snippet; "Open the sample page" loads
// sample.html). In the text modes #target holds the translation as the runtime returns it (text or
// HTML) and both sides are rendered in iframes with sandbox="" (no script runs, no same origin),
// from documents the page parsed with DOMParser (inert) and sanitized first: script, iframe,
// object, embed, base, link and meta elements, on* attributes and javascript: / data: / vbscript:
// URLs removed. Words of low confidence are marked in the rendered translation: the runtime's word
// scores (translateText with quality: the mean log-probability of each word's tokens) below
// LOW_SCORE.
const $ = (id) => document.getElementById(id);
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
let run = 0, lines = [], tokens = 0, started = 0, alignment = null, source = [];
const TOP = 15;
const LOW_SCORE = -1.0;
let textRuns = 0; // text-mode runs finished (document.body.dataset.textDone)

function setState(state) {
  document.body.dataset.state = state;
  $('translate').disabled = state !== 'ready';
}

function showLines() {
  $('target').value = lines.join('\n');
}

async function load(what, bytesPromise) {
  setState('loading');
  $('model-status').textContent = `Loading ${what}…`;
  try {
    const bytes = await bytesPromise;
    worker.postMessage({ type: 'load', bytes }, [bytes]);
  } catch (e) {
    $('model-status').textContent = `Cannot load ${what}: ${e.message}`;
    setState('empty');
setMode($('mode').value);
  }
}

$('file').addEventListener('change', () => {
  const f = $('file').files[0];
  if (f) load(f.name, f.arrayBuffer());
});
$('demo').addEventListener('click', () =>
  load('the demo model', fetch('demo.int8.mtlite').then((r) => {
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    return r.arrayBuffer();
  })));

const LABELS = {
  lines: ['Source (one sentence per line)', 'Two dogs play in the snow.'],
  text: ['Source (paragraphs: a line is a paragraph)', 'Two dogs play in the snow. A man watches them.'],
  html: ['Source (HTML)', '<p>Two dogs play in the <b>snow</b>.</p>'],
};
function setMode(mode) {
  $('mode').value = mode;
  document.body.dataset.mode = mode;
  $('source-label').textContent = LABELS[mode][0];
  $('source').placeholder = LABELS[mode][1];
  $('rendered').hidden = mode === 'lines';
}
$('mode').addEventListener('change', () => setMode($('mode').value));
$('sample').addEventListener('click', async () => {
  try {
    const r = await fetch('sample.html');
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    $('source').value = await r.text();
    setMode('html');
    renderSource();
  } catch (e) {
    $('status').textContent = `Cannot open the sample page: ${e.message}`;
  }
});

// ---- Rendering (text modes) ------------------------------------------------------------------------
const escapeHtml = (t) => t.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const URL_ATTRIBUTES = /^(href|src|action|formaction|xlink:href|background|poster|cite|data)$/i;

// An inert document of html, without what could run or load (see the top of this file).
function sanitized(html) {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  doc.querySelectorAll('script, iframe, frame, frameset, object, embed, base, link, meta, noscript, template')
    .forEach((e) => e.remove());
  for (const el of doc.querySelectorAll('*')) {
    for (const a of [...el.attributes]) {
      if (/^on/i.test(a.name) || a.name === 'srcdoc' || a.name === 'srcset' ||
        (URL_ATTRIBUTES.test(a.name) && /^\s*(javascript|data|vbscript):/i.test(a.value.replace(/[\u0000-\u001f]/g, '')))) {
        el.removeAttribute(a.name);
      }
    }
  }
  return doc;
}

// Marks the low-confidence words in doc: each sentence's translation is looked up, in order, in the
// document's text (the text nodes outside elements the runtime does not translate), and the text
// nodes its low words span are wrapped in <mark class="low">. Returns the number of words marked.
function markLow(doc, sentences) {
  const SKIP = 'script, style, code, textarea, [translate="no"], .notranslate, title';
  const nodes = [], starts = [];
  let all = '';
  const walker = doc.createTreeWalker(doc.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement && n.parentElement.closest(SKIP)) continue;
    nodes.push(n);
    starts.push(all.length);
    all += n.data;
  }
  let cursor = 0, marked = 0;
  const cuts = []; // [node index, begin, end, title] in the node's text
  for (const s of sentences) {
    const t = s.translation;
    if (!t.trim()) continue;
    const at = all.indexOf(t, cursor);
    if (at < 0) continue;
    cursor = at + t.length;
    for (const w of s.words || []) {
      if (!w.low) continue;
      ++marked;
      const wb = at + w.targetStart - s.targetStart, we = at + w.targetEnd - s.targetStart;
      for (let i = 0; i < nodes.length; i++) {
        const b = Math.max(wb, starts[i]), e = Math.min(we, starts[i] + nodes[i].data.length);
        if (b < e) cuts.push([i, b - starts[i], e - starts[i], w.title]);
      }
    }
  }
  for (let k = cuts.length - 1; k >= 0; k--) { // from the end: earlier offsets stay valid
    const [i, b, e, title] = cuts[k];
    const node = nodes[i], mid = node.splitText(b);
    mid.splitText(e - b);
    const mark = doc.createElement('mark');
    mark.className = 'low';
    mark.title = title;
    mid.replaceWith(mark);
    mark.append(mid);
  }
  return marked;
}

function show(frame, doc) {
  const style = doc.createElement('style');
  style.textContent = 'body { font: 15px/1.45 system-ui, sans-serif; margin: 0.8rem; color: #1d2330; } ' +
    'mark.low { background: #ffe08a; border-bottom: 2px solid #d19a00; } code { background: #eef0f4; }';
  doc.head.append(style);
  frame.srcdoc = `<!DOCTYPE html>${doc.documentElement.outerHTML}`;
}
const textDocument = (text) => sanitized(`<pre style="white-space: pre-wrap; font: inherit">${escapeHtml(text)}</pre>`);
function renderSource() {
  const text = $('source').value;
  show($('source-view'), $('mode').value === 'html' ? sanitized(text) : textDocument(text));
}

function showText(data) {
  const r = data.result, html = $('mode').value === 'html';
  $('target').value = r.text;
  let low = 0, words = 0;
  for (const s of r.sentences) {
    for (const w of s.words || []) {
      w.low = !s.error && w.score < LOW_SCORE;
      w.title = `mean token log-probability ${w.score.toFixed(2)}`;
      low += w.low ? 1 : 0;
      ++words;
    }
  }
  const doc = html ? sanitized(r.text) : textDocument(r.text);
  const marked = markLow(doc, r.sentences);
  show($('target-view'), doc);
  $('low-legend').replaceChildren();
  const legend = document.createElement('mark');
  legend.className = 'low-legend';
  legend.textContent = `${low} of ${words} words`;
  $('low-legend').append('marked: ', legend, ` of low confidence (mean token log-probability < ${LOW_SCORE})`);
  Object.assign($('target-view').dataset, { low: String(low), marked: String(marked), sentences: String(r.sentences.length) });
  const secs = (performance.now() - started) / 1000;
  $('status').textContent = `${r.sentences.length} sentences in ${secs.toFixed(2)} s` +
    (r.failed ? `; ${r.failed} kept untranslated (${r.firstError})` : '') + '.';
  drawHeatmap(data.alignment && { ...data.alignment, label: data.alignment.sentence });
  showProfile(null);
  document.body.dataset.textDone = String(++textRuns);
  setState('ready');
}

$('translate').addEventListener('click', () => {
  const mode = $('mode').value;
  if (mode !== 'lines') {
    started = performance.now();
    setState('busy');
    $('status').textContent = 'Translating…';
    $('target').value = '';
    renderSource();
    worker.postMessage({ type: 'text', id: ++run, text: $('source').value, html: mode === 'html',
      beam: Number($('beam').value) });
    return;
  }
  source = $('source').value.split('\n');
  alignment = null;
  lines = source.map(() => '');
  tokens = 0;
  started = performance.now();
  showLines();
  setState('busy');
  $('status').textContent = 'Translating…';
  worker.postMessage({ type: 'translate', id: ++run, lines: source, beam: Number($('beam').value) });
});

worker.onmessage = ({ data }) => {
  if (data.type === 'loaded') {
    const c = data.config;
    $('model-status').textContent = `Model loaded: d_model ${c.dModel}, vocabulary ${c.targetVocabSize}, kernels ${data.kernelTable}.`;
    setState('ready');
  } else if (data.type === 'error') {
    $('model-status').textContent = data.message;
    setState(document.body.dataset.state === 'loading' ? 'empty' : 'ready');
  } else if (data.id === run && (data.type === 'token' || data.type === 'line')) {
    lines[data.line] = data.error ? `[${data.error}]` : data.text;
    if (data.type === 'line') alignment = data.alignment ? { ...data.alignment, line: data.line } : null;
    if (data.type === 'token') document.body.dataset.tokens = String(++tokens);
    showLines();
  } else if (data.id === run && data.type === 'text') {
    showText(data);
  } else if (data.id === run && data.type === 'done') {
    const secs = (performance.now() - started) / 1000;
    $('status').textContent = `${lines.length} lines in ${secs.toFixed(2)} s.`;
    drawHeatmap(alignment);
    showProfile(data.profile);
    document.body.dataset.done = String(run);
    setState('ready');
  }
};

// The heatmap: a row per target token, a column per source token (labelled with its piece, from
// Model.tokenize; numbered if the pieces do not match the columns), darker = more attention.
function drawHeatmap(a) {
  const canvas = $('heatmap'), cell = 20, font = '12px ui-monospace, monospace';
  const ctx = canvas.getContext('2d');
  if (!a) {
    canvas.width = canvas.height = 0;
    Object.assign(canvas.dataset, { rows: '0', cols: '0', argmax: '' });
    $('heatmap-caption').textContent = 'No alignment for the last sentence.';
    return;
  }
  const pieces = a.source && a.source.length === a.cols;
  const cols = Array.from({ length: a.cols }, (_, j) => (pieces ? a.source[j] : j === a.cols - 1 ? '</s>' : String(j + 1)));
  ctx.font = font;
  const left = Math.ceil(Math.max(...a.target.map((t) => ctx.measureText(t).width))) + 8;
  const top = Math.ceil(Math.max(...cols.map((t) => ctx.measureText(t).width))) + 8;
  const ratio = window.devicePixelRatio || 1, w = left + a.cols * cell, h = top + a.rows * cell;
  canvas.width = Math.round(w * ratio);
  canvas.height = Math.round(h * ratio);
  canvas.style.width = `${w}px`;
  canvas.style.height = `${h}px`;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.font = font;
  ctx.fillStyle = '#1d2330';
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  a.target.forEach((t, i) => ctx.fillText(t, left - 6, top + (i + 0.5) * cell));
  cols.forEach((t, j) => {
    ctx.save();
    ctx.translate(left + (j + 0.5) * cell, top - 6);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = 'left';
    ctx.fillText(t, 0, 0);
    ctx.restore();
  });
  const argmax = [];
  for (let i = 0; i < a.rows; i++) {
    let best = 0;
    for (let j = 0; j < a.cols; j++) {
      const v = a.weights[i * a.cols + j];
      if (v > a.weights[i * a.cols + best]) best = j;
      const light = Math.round(97 - 62 * Math.min(1, Math.max(0, v)));
      ctx.fillStyle = `hsl(224, 70%, ${light}%)`;
      ctx.fillRect(left + j * cell, top + i * cell, cell - 1, cell - 1);
    }
    argmax.push(best);
  }
  Object.assign(canvas.dataset, { rows: String(a.rows), cols: String(a.cols), argmax: argmax.join(' '),
    labels: pieces ? cols.join(' ') : '' });
  const what = a.label !== undefined ? `The last sentence, “${a.label}”` : `Line ${a.line + 1}, “${source[a.line]}”`;
  $('heatmap-caption').textContent =
    `${what}: ${a.rows} target tokens (rows) × ${a.cols} source tokens (columns${pieces ? ', the tokenizer\'s pieces' : ', numbered'}).`;
}

// The profiler's slowest innermost ops of the run (summed over its lines), a row per op and layer;
// share: of the time in translate.
function showProfile(p) {
  const body = $('profile').tBodies[0];
  body.replaceChildren();
  $('profile-total').textContent = '';
  if (!p) return;
  const total = p.wallNs || 1;
  for (const e of p.entries.slice(0, TOP)) {
    const tr = body.insertRow();
    for (const v of [e.op, e.component, e.layer >= 0 ? e.layer : '–', e.calls, (e.totalNs / 1e6).toFixed(2),
      `${((100 * e.totalNs) / total).toFixed(1)} %`]) tr.insertCell().textContent = String(v);
  }
  $('profile-total').textContent =
    `(slowest ${Math.min(TOP, p.entries.length)} of ${p.entries.length} ops and layers; ${(p.wallNs / 1e6).toFixed(1)} ms in translate)`;
}
setState('empty');
setMode($('mode').value);
