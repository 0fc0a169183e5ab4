// The JavaScript API of web/mtlite.js on the int8 demo model, in node:
//   node tests/wasm/api_test.mjs MODEL [--simd=0]
// loading (and a bad model: MtliteError INVALID_MODEL), limits (a call beyond them: OUT_OF_RANGE or
// INVALID_ARGUMENT with the runtime's message), translate with every option, the streaming
// callback (its final events equal the results; an exception thrown in it reaches the caller and
// the translator stays usable), profile(), bytes passed as they are (invalid UTF-8), dispose().
// Prints "N passed, N failed".
import { readFileSync } from 'node:fs';
import { Mtlite, MtliteError, hasSimd128 } from '../../web/mtlite.js';
import { check, throws, report } from './checks.mjs';

const [modelPath, ...flags] = process.argv.slice(2);
const simd = !flags.includes('--simd=0');

check('SIMD128 detected in node', hasSimd128());
const mt = await Mtlite.load({ simd });
check('kernel table', mt.kernelTable === (simd ? 'wasm-simd128' : 'reference'), mt.kernelTable);
check('version', /^\d+\.\d+\.\d+/.test(mt.version), mt.version);
const bytes = readFileSync(modelPath);
throws('bad model bytes', () => mt.loadModel(bytes.subarray(0, 1000)), 'INVALID_MODEL', '');
const model = mt.loadModel(bytes);
check('config', model.config.dModel > 0 && model.config.targetVocabSize > 0, JSON.stringify(model.config));
throws('limits out of range', () => model.createTranslator({ maxBeam: 65 }), 'INVALID_ARGUMENT', 'max_beam');

const greedyOnly = model.createTranslator({ maxBeam: 1 });
check('n-best limit defaults to at most the beam', greedyOnly.limits.maxNBest === 1, JSON.stringify(greedyOnly.limits));
greedyOnly.dispose();
const tr = model.createTranslator({ maxBatch: 3, maxBeam: 4, maxNBest: 3, alignments: true, profiling: true, maxInputBytes: 64 });
check('arena bytes', tr.arenaBytes > 0 && tr.limits.maxBeam === 4 && tr.limits.alignments === true);
const texts = ['A dog runs in the park.', 'Two children play in the snow.', ''];
const greedy = tr.translate(texts);
check('one hypothesis per text', greedy.length === 3 && greedy.every((r) => r.hypotheses.length === 1));
check('empty text, empty translation', greedy[2].hypotheses[0].text === '' && greedy[2].hypotheses[0].ids.length === 0);
check('no score unless asked', greedy[0].hypotheses[0].score === undefined);
const beam = tr.translate(texts.slice(0, 2), { beam: 4, nBest: 3, scores: true, alignments: true, textBytes: true });
const h0 = beam[0].hypotheses;
check('n-best', h0.length === 3 && h0[0].score >= h0[1].score && h0[1].score >= h0[2].score, JSON.stringify(h0.map((h) => h.score)));
check('alignment shape', h0[0].alignment.length === (h0[0].ids.length + 1) * h0[0].sourceTokens);
check('text bytes', Buffer.from(h0[0].textBytes).toString() === h0[0].text);
check('bytes in, as they are', tr.translate([Buffer.from(texts[0])])[0].hypotheses[0].text === greedy[0].hypotheses[0].text);
throws('invalid UTF-8', () => tr.translate([new Uint8Array([0x41, 0xff])]), 'INVALID_ARGUMENT', 'invalid UTF-8');
throws('over the batch limit', () => tr.translate(['a', 'b', 'c', 'd']), 'OUT_OF_RANGE', 'max_batch');
throws('over the input limit', () => tr.translate(['word '.repeat(20)]), 'OUT_OF_RANGE', 'max_input_bytes');
throws('beam over the limit', () => tr.translate(['a'], { beam: 5 }), 'INVALID_ARGUMENT', 'max_beam');

for (const b of [1, 4]) {
  const events = [];
  const res = tr.translate(texts.slice(0, 2), { beam: b, onToken: (e) => events.push(e) });
  const finals = events.filter((e) => e.final);
  check(`stream beam ${b}: one final event per sentence`, finals.length === 2 && finals[1].sentence === 1);
  check(`stream beam ${b}: final text = result`, finals.every((e) => e.text === res[e.sentence].hypotheses[0].text));
  check(`stream beam ${b}: partial events`, events.length > 2);
}
let threw = null;
try {
  tr.translate(texts.slice(0, 1), { onToken: () => { throw new Error('from the callback'); } });
} catch (e) {
  threw = e;
}
check('an exception in the callback reaches the caller', threw && threw.message === 'from the callback');
check('usable after it', tr.translate(texts.slice(0, 1))[0].hypotheses[0].text === greedy[0].hypotheses[0].text);

tr.translate(texts.slice(0, 2), { beam: 2, profile: true });
const p = tr.profile();
check('profile', p.wallNs > 0 && p.sentences === 2 && p.entries.some((e) => e.op === 'translate' && e.calls === 1) &&
  p.events.length > 0, JSON.stringify({ wallNs: p.wallNs, sentences: p.sentences, entries: p.entries.length }));
tr.translate(texts.slice(0, 1));
throws('no profile of an unprofiled call', () => tr.profile(), 'OUT_OF_RANGE', '');

const tr2 = model.createTranslator();
tr.dispose();
check('other translators unaffected by dispose', tr2.translate(texts.slice(0, 1))[0].hypotheses[0].text === greedy[0].hypotheses[0].text);
let disposedThrows = false;
try {
  tr.translate(['a']);
} catch (e) {
  disposedThrows = /disposed/.test(e.message);
}
check('a disposed translator throws', disposedThrows);
model.dispose();
let modelDisposedThrows = false;
try {
  tr2.translate(['a']);
} catch (e) {
  modelDisposedThrows = /disposed/.test(e.message);
}
check('disposing the model disposes its translators', modelDisposedThrows);
report();
