// AsyncTranslator (web/mtlite.js + web/worker.js) in Node worker_threads, on the demo model:
//   node tests/wasm/async_test.mjs MODEL [--simd=0]
// results equal the synchronous API's (translate, translateText, tokenize), streaming, requests in
// order, a superseded request of the same key rejected with MtliteError CANCELLED (waiting and
// running), other keys and requests without a key untouched, errors from the worker as
// MtliteError, dispose() (pending requests CANCELLED, later ones INVALID_ARGUMENT), and that an
// idle worker does not keep node running. Prints "N passed, N failed".
import { readFileSync } from 'node:fs';
import { AsyncTranslator, Mtlite, MtliteError } from '../../web/mtlite.js';
import { check, rejects, describe, report } from './checks.mjs';

const [modelPath, ...flags] = process.argv.slice(2);
const simd = !flags.includes('--simd=0');
const settle = (p) => p.then((value) => ({ value }), (error) => ({ error }));

const bytes = readFileSync(modelPath);
const mt = await Mtlite.load({ simd });
const model = mt.loadModel(bytes);
const sync = model.createTranslator({ alignments: true });
const A = 'A dog runs in the park.', B = 'Two children play in the snow.', P = 'A dog runs. Mr. Brown has 3.5 dogs! A cat sleeps.';

const at = await AsyncTranslator.create({ model: bytes, limits: { alignments: true, maxBeam: 4 }, simd });
check('created', at.kernelTable === mt.kernelTable && at.config.dModel === model.config.dModel && at.limits.alignments,
  JSON.stringify({ k: at.kernelTable, limits: at.limits }));
const [ra] = await at.translate([A], { beam: 2, scores: true, alignments: true });
const [sa] = sync.translate([A], { beam: 2, scores: true, alignments: true });
check('translate equals the synchronous API', ra.hypotheses[0].text === sa.hypotheses[0].text &&
  ra.hypotheses[0].score === sa.hypotheses[0].score && ra.hypotheses[0].ids instanceof Int32Array &&
  ra.hypotheses[0].alignment instanceof Float32Array && ra.hypotheses[0].alignment.length === sa.hypotheses[0].alignment.length);
const rt = await at.translateText(P);
check('translateText equals the synchronous API', JSON.stringify(rt) === JSON.stringify(sync.translateText(P)));
const html = await at.translateText('<p>A <b>dog</b> runs.</p>', { html: true });
check('translateText html', html.text === sync.translateText('<p>A <b>dog</b> runs.</p>', { html: true }).text, html.text);
const tok = await at.tokenize(A);
check('tokenize', JSON.stringify(tok.pieces) === JSON.stringify(model.tokenize(A).pieces));
const streamed = [];
const [rs] = await at.translate([B], { onToken: (e) => streamed.push(e) });
check('streaming', streamed.length > 1 && streamed[streamed.length - 1].final &&
  streamed[streamed.length - 1].text === rs.hypotheses[0].text);

// in order, each its own result
const texts = [A, B, 'A man sits on a bench.', 'A cat sleeps.'];
const all = await Promise.all(texts.map((t) => at.translate([t])));
check('requests in order, each its own result', all.every((r, i) => r[0].hypotheses[0].text === sync.translate([texts[i]])[0].hypotheses[0].text));

// superseded requests
const long = 'A dog runs in the park. '.repeat(40);
const first = settle(at.translateText(long, { key: 'page' }));       // running when the next ones come
const second = settle(at.translateText(B, { key: 'page' }));         // waiting: superseded by the third
const other = settle(at.translateText(A, { key: 'other' }));         // another key
const free = settle(at.translate([A]));                              // no key
const third = settle(at.translateText(P, { key: 'page' }));
const [r1, r2, ro, rf, r3] = await Promise.all([first, second, other, free, third]);
check('a running request superseded: CANCELLED', r1.error instanceof MtliteError && r1.error.code === 'CANCELLED' &&
  r1.error.status === -2 && /superseded/.test(r1.error.reason), `(${r1.error ? describe(r1.error) : 'resolved'})`);
check('a waiting request superseded: CANCELLED', r2.error instanceof MtliteError && r2.error.code === 'CANCELLED',
  `(${r2.error ? describe(r2.error) : 'resolved'})`);
check('the newest request of the key resolves', r3.value && r3.value.text === sync.translateText(P).text);
check('another key is not cancelled', ro.value && ro.value.text === sync.translateText(A).text);
check('a request without a key is not cancelled', rf.value && rf.value[0].hypotheses[0].text === sync.translate([A])[0].hypotheses[0].text);

// errors
await rejects('an unknown option: INVALID_ARGUMENT from the worker', at.translate([A], { beem: 2 }), 'INVALID_ARGUMENT', '"beem"');
await rejects('a runtime error', at.translate(['x'.repeat(20000)]), 'OUT_OF_RANGE', 'max_input_bytes');
await rejects('a bad key', (async () => at.translate([A], { key: {} }))(), 'INVALID_ARGUMENT', 'key');
const failedSentence = await at.translateText(new Uint8Array([0x41, 0x20, 0xff, 0x2e]));
check('a failed sentence\'s error is an MtliteError', failedSentence.failed === 1 &&
  failedSentence.firstError instanceof MtliteError && failedSentence.sentences[0].error === failedSentence.firstError,
  JSON.stringify(failedSentence));
await rejects('create without a model', AsyncTranslator.create({}), 'INVALID_ARGUMENT', 'model');
await rejects('create with a bad model', AsyncTranslator.create({ model: bytes.subarray(0, 1000) }), 'INVALID_MODEL');
check('still usable', (await at.translate([A]))[0].hypotheses[0].text === sync.translate([A])[0].hypotheses[0].text);

// dispose
const pending = [settle(at.translateText(long)), settle(at.translate([B]))];
at.dispose();
const [p1, p2] = await Promise.all(pending);
check('dispose: pending requests CANCELLED', [p1, p2].every((r) => r.error instanceof MtliteError && r.error.code === 'CANCELLED'),
  JSON.stringify([p1, p2].map((r) => r.error && r.error.message)));
await rejects('after dispose: INVALID_ARGUMENT', at.translate([A]), 'INVALID_ARGUMENT', 'disposed');
at.dispose();
check('dispose twice', true);

// an idle AsyncTranslator does not keep node running (this process must exit by itself)
globalThis.idle = await AsyncTranslator.create({ model: bytes, simd });
await globalThis.idle.translate([A]);
report();
