// The page: a model from a file (or the demo model served next to the page), text in, translations
// that grow token by token, from the translator in worker.js. The state is mirrored in
// document.body.dataset (state: empty | loading | ready | busy; tokens: stream events of the last
// run; done: the number of the last finished run) for tests driving the page. After a run: the
// cross-attention heatmap of its last sentence (canvas #heatmap; its dataset: rows = target tokens
// with </s>, cols = source tokens with </s>, argmax = each row's most attended source token) and
// the profiler's slowest ops (table #profile).
const $ = (id) => document.getElementById(id);
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
let run = 0, lines = [], tokens = 0, started = 0, alignment = null, source = [];
const TOP = 15;

function setState(state) {
  document.body.dataset.state = state;
  $('translate').disabled = state !== 'ready';
}

function show() {
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

$('translate').addEventListener('click', () => {
  source = $('source').value.split('\n');
  alignment = null;
  lines = source.map(() => '');
  tokens = 0;
  started = performance.now();
  show();
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
    show();
  } else if (data.id === run && data.type === 'done') {
    const secs = (performance.now() - started) / 1000;
    $('status').textContent = `${lines.length} lines in ${secs.toFixed(2)} s.`;
    drawHeatmap(alignment);
    showProfile(data.profile);
    document.body.dataset.done = String(run);
    setState('ready');
  }
};

// The heatmap: a row per target token, a column per source token (numbered: the API gives no
// source pieces), darker = more attention.
function drawHeatmap(a) {
  const canvas = $('heatmap'), cell = 20, font = '12px ui-monospace, monospace';
  const ctx = canvas.getContext('2d');
  if (!a) {
    canvas.width = canvas.height = 0;
    Object.assign(canvas.dataset, { rows: '0', cols: '0', argmax: '' });
    $('heatmap-caption').textContent = 'No alignment for the last sentence.';
    return;
  }
  const cols = Array.from({ length: a.cols }, (_, j) => (j === a.cols - 1 ? '</s>' : String(j + 1)));
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
  Object.assign(canvas.dataset, { rows: String(a.rows), cols: String(a.cols), argmax: argmax.join(' ') });
  $('heatmap-caption').textContent =
    `Line ${a.line + 1}: ${a.rows} target tokens (rows) × ${a.cols} source tokens (columns, numbered) of “${source[a.line]}”.`;
}

// The profiler's slowest innermost ops of the run (summed over its lines), a row per op and layer;
// share: of the time in translate.
function showProfile(p) {
  const body = $('profile').tBodies[0];
  body.replaceChildren();
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
