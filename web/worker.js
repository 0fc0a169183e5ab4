// The worker behind AsyncTranslator (mtlite.js): a module, a model and one translator on a worker's
// thread (a browser Web Worker of type 'module', or a Node worker_threads Worker), so that the
// synchronous calls of the API never block the thread that asked for them. The protocol is
// AsyncTranslator's own (it sends one request at a time):
//   in:  {id, op: 'init', load: Mtlite.load options, model: ArrayBuffer, pivot: ArrayBuffer or null
//        (the second model of a chain through a pivot language), verify, limits}
//        {id, op: 'translate', texts, options, stream}   {id, op: 'translateText', text, options}
//        {id, op: 'tokenize', text}
//   out: {id, ok: true, value}   {id, ok: false, error: {status, reason}}   {id, token} (stream)
import { Mtlite, MtliteError } from './mtlite.js';

const isNode = typeof process === 'object' && process.versions != null && process.versions.node != null &&
  typeof self === 'undefined';
let port;
if (isNode) {
  const { parentPort } = await import('node:worker_threads');
  port = { post: (m, transfer) => parentPort.postMessage(m, transfer), listen: (f) => parentPort.on('message', f) };
} else {
  port = { post: (m, transfer) => self.postMessage(m, transfer), listen: (f) => self.addEventListener('message', (e) => f(e.data)) };
}

let model = null, pivot = null, translator = null;

// An error as it crosses to the other thread: an MtliteError's status and reason, anything else as
// INTERNAL (status 8) with its message.
const wire = (e) => (e instanceof MtliteError ? { status: e.status, reason: e.reason }
  : { status: 8, reason: `the worker failed: ${e && e.message ? e.message : String(e)}` });

async function handle(m) {
  switch (m.op) {
    case 'init': {
      const mt = await Mtlite.load(m.load);
      model = mt.loadModel(new Uint8Array(m.model), { verify: m.verify });
      if (m.pivot) pivot = mt.loadModel(new Uint8Array(m.pivot), { verify: m.verify });
      if (pivot && m.limits !== null && typeof m.limits === 'object' && 'pivot' in m.limits) {
        throw new MtliteError(1, 'AsyncTranslator.create: the pivot model is options.pivot (its bytes), not limits.pivot');
      }
      translator = model.createTranslator(pivot ? { ...m.limits, pivot } : m.limits);
      return { version: mt.version, kernelTable: mt.kernelTable, config: model.config,
        pivotConfig: pivot ? pivot.config : null, limits: translator.limits, arenaBytes: translator.arenaBytes };
    }
    case 'translate': {
      const options = { ...m.options };
      if (m.stream) options.onToken = (token) => port.post({ id: m.id, token });
      return translator.translate(m.texts, options);
    }
    case 'translateText': { // MtliteErrors as {status, reason} (a clone would lose their class)
      const r = translator.translateText(m.text, m.options);
      r.firstError = r.firstError && wire(r.firstError);
      for (const s of r.sentences) s.error = s.error && wire(s.error);
      return r;
    }
    case 'tokenize':
      return model.tokenize(m.text);
    default:
      throw new MtliteError(1, `unknown request ${JSON.stringify(m.op)}`);
  }
}

port.listen(async (m) => {
  try {
    port.post({ id: m.id, ok: true, value: await handle(m) });
  } catch (e) {
    port.post({ id: m.id, ok: false, error: wire(e) });
  }
});
