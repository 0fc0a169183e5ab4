// The page: a model from a file (or the demo model served next to the page), text in, translations
// that grow token by token, from the translator in worker.js. The state is mirrored in
// document.body.dataset (state: empty | loading | ready | busy; tokens: stream events of the last
// run; done: the number of the last finished run) for tests driving the page.
const $ = (id) => document.getElementById(id);
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
let run = 0, lines = [], tokens = 0, started = 0;

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
  const source = $('source').value.split('\n');
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
    if (data.type === 'token') document.body.dataset.tokens = String(++tokens);
    show();
  } else if (data.id === run && data.type === 'done') {
    const secs = (performance.now() - started) / 1000;
    $('status').textContent = `${lines.length} lines in ${secs.toFixed(2)} s.`;
    document.body.dataset.done = String(run);
    setState('ready');
  }
};
setState('empty');
