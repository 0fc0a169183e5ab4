// The page's translator, in a Web Worker (the module runs on the worker's thread, so the page stays
// responsive). Messages in: {type: 'load', bytes} | {type: 'translate', id, lines, beam} |
// {type: 'text', id, text, html, beam} (the text layer: a paragraph or an HTML document);
// out: {type: 'loaded', kernelTable, config} | {type: 'token', id, line, text} (the line's
// translation so far) | {type: 'line', id, line, text, alignment} | {type: 'done', id, profile} |
// {type: 'text', id, result, alignment} (translateText's result, sentence errors as messages) |
// {type: 'error', id, message}. alignment: {rows, cols, weights, target, source} (the
// cross-attention of the best hypothesis: rows = target tokens with </s>, cols = source tokens with
// </s>; target, source: the rows' and columns' labels, source the tokenizer's pieces); profile: {wallNs, entries} (the profiler's innermost ops, those that time no other
// op, per layer, summed over the run's lines: {op, component, layer, calls, totalNs}, slowest first).
import { Mtlite } from '../mtlite.js';

let mt = null, model = null, translator = null;

function send(message) {
  self.postMessage(message);
}

// The rows' labels: each target token's piece, the growth of the streamed text between prefixes
// (the API decodes whole hypotheses only); '#id' where no prefix was streamed; '</s>' last.
function targetLabels(ids, texts) {
  const labels = [];
  let prev = '';
  for (let k = 1; k <= ids.length; k++) {
    const text = texts.get(Array.prototype.join.call(ids.subarray(0, k), ','));
    labels.push(text !== undefined && text.startsWith(prev) && text.length > prev.length
      ? text.slice(prev.length) : `#${ids[k - 1]}`);
    if (text !== undefined) prev = text;
  }
  labels.push('</s>');
  return labels;
}

// The alignment of one sentence (translated alone, with alignments), labelled.
function alignmentOf(text, beam, onToken) {
  const texts = new Map();
  const [r] = translator.translate([text], {
    beam, alignments: true, profile: true,
    onToken: (e) => {
      texts.set(Array.prototype.join.call(e.ids, ','), e.text);
      if (onToken) onToken(e);
    },
  });
  const h = r.hypotheses[0];
  const alignment = h.alignment && { rows: h.ids.length + 1, cols: h.sourceTokens, weights: h.alignment,
    target: targetLabels(h.ids, texts), source: model.tokenize(text).pieces };
  return { text: h.text, alignment };
}

function addProfile(sum, p) {
  sum.wallNs += p.wallNs;
  for (const e of p.entries) sum.parents.add(e.parent);
  for (const e of p.entries) {
    const key = `${e.op}\u0000${e.component}\u0000${e.layer}`;
    const s = sum.ops.get(key) || { op: e.op, component: e.component, layer: e.layer, calls: 0, totalNs: 0 };
    s.calls += e.calls;
    s.totalNs += e.totalNs;
    sum.ops.set(key, s);
  }
}

self.onmessage = async ({ data }) => {
  try {
    if (data.type === 'load') {
      mt = mt || (await Mtlite.load());
      if (model) model.dispose();
      model = mt.loadModel(new Uint8Array(data.bytes));
      translator = model.createTranslator({ maxBeam: 8, maxBatch: 4, alignments: true, profiling: true });
      send({ type: 'loaded', kernelTable: mt.kernelTable, config: model.config });
    } else if (data.type === 'translate') {
      const sum = { wallNs: 0, ops: new Map(), parents: new Set() };
      data.lines.forEach((line, i) => {
        try {
          const { text, alignment } = alignmentOf(line, data.beam, (e) => {
            if (!e.final) send({ type: 'token', id: data.id, line: i, text: e.text });
          });
          addProfile(sum, translator.profile());
          send({ type: 'line', id: data.id, line: i, text, alignment });
        } catch (e) {
          send({ type: 'line', id: data.id, line: i, text: '', error: e.message });
        }
      });
      const entries = [...sum.ops.values()].filter((e) => !sum.parents.has(e.op)).sort((a, b) => b.totalNs - a.totalNs);
      send({ type: 'done', id: data.id, profile: { wallNs: sum.wallNs, entries } });
    } else if (data.type === 'text') {
      const r = translator.translateText(data.text, { html: data.html, beam: data.beam, quality: true });
      for (const s of r.sentences) s.error = s.error && s.error.message;
      r.firstError = r.firstError && r.firstError.message;
      // the heatmap: the last sentence that was translated, alone (its pieces' text if it was cut)
      const last = [...r.sentences].reverse().find((s) => !s.error && s.source.trim() !== '');
      let alignment = null;
      if (last) {
        try {
          alignment = { ...alignmentOf(last.source, data.beam).alignment, sentence: last.source };
        } catch (e) {
          alignment = null; // longer than a translate call takes: no heatmap
        }
      }
      send({ type: 'text', id: data.id, result: r, alignment });
    }
  } catch (e) {
    send({ type: 'error', id: data.id, message: e.message });
  }
};
