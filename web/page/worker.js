// The page's translator, in a Web Worker (the module runs on the worker's thread, so the page stays
// responsive). Messages in: {type: 'load', bytes} | {type: 'translate', id, lines, beam};
// out: {type: 'loaded', kernelTable, config} | {type: 'token', id, line, text} (the line's
// translation so far) | {type: 'line', id, line, text} | {type: 'done', id} | {type: 'error', id, message}.
import { Mtlite } from '../mtlite.js';

let mt = null, model = null, translator = null;

function send(message) {
  self.postMessage(message);
}

self.onmessage = async ({ data }) => {
  try {
    if (data.type === 'load') {
      mt = mt || (await Mtlite.load());
      if (model) model.dispose();
      model = mt.loadModel(new Uint8Array(data.bytes));
      translator = model.createTranslator({ maxBeam: 8 });
      send({ type: 'loaded', kernelTable: mt.kernelTable, config: model.config });
    } else if (data.type === 'translate') {
      data.lines.forEach((line, i) => {
        try {
          const [r] = translator.translate([line], {
            beam: data.beam,
            onToken: (e) => e.final || send({ type: 'token', id: data.id, line: i, text: e.text }),
          });
          send({ type: 'line', id: data.id, line: i, text: r.hypotheses[0].text });
        } catch (e) {
          send({ type: 'line', id: data.id, line: i, text: '', error: e.message });
        }
      });
      send({ type: 'done', id: data.id });
    }
  } catch (e) {
    send({ type: 'error', id: data.id, message: e.message });
  }
};
