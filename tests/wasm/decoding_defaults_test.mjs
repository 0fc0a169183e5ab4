// A model's recorded decoding defaults in the JavaScript API, in node:
//   node tests/wasm/decoding_defaults_test.mjs WITH WITHOUT [--simd=0]
// WITH: a Marian release converted with its decoder.yml (beam 3, normalize 0.6,
// max-length-factor 2); WITHOUT: the same with `--decoding-defaults none`. translate and
// translateText take the model's defaults for the options left out, each option overrides its
// default, and a model without them translates as before (greedy). Prints "N passed, N failed".
import { readFileSync } from 'node:fs';
import { Mtlite } from '../../web/mtlite.js';
import { check, report } from './checks.mjs';

const [withPath, withoutPath, ...flags] = process.argv.slice(2);
const mt = await Mtlite.load({ simd: !flags.includes('--simd=0') });
const withModel = mt.loadModel(readFileSync(withPath));
const withoutModel = mt.loadModel(readFileSync(withoutPath));
const d = withModel.decodingDefaults;
check('recorded defaults', d.beam === 3 && Math.abs(d.lengthPenalty - 0.6) < 1e-6 && d.maxLengthRatio === 2 &&
  d.maxLengthOffset === 1 && d.maxLength === undefined, JSON.stringify(d));
check('none recorded', Object.keys(withoutModel.decodingDefaults).length === 0, JSON.stringify(withoutModel.decodingDefaults));

const texts = ['a b c d e f', 'g a g a', 'b b c', 'f e d c b a g', 'c', 'a g f b'];
const explicit = { beam: 3, lengthPenalty: 0.6, maxLengthRatio: 2, maxLengthOffset: 1 };
const plain = { beam: 1, lengthPenalty: 1, maxLengthRatio: 0, maxLengthOffset: 10 };
const tw = withModel.createTranslator({ maxBatch: texts.length });
const tn = withoutModel.createTranslator({ maxBatch: texts.length, maxBeam: 4 });
check('room for the model beam', tw.limits.maxBeam === 4, JSON.stringify(tw.limits));
const run = (tr, options) => JSON.stringify(tr.translate(texts, { scores: true, ...options }).map((r) =>
  [Array.from(r.hypotheses[0].ids), r.hypotheses[0].score]));
const byDefault = run(tw, {});
check('defaults = the explicit options', byDefault === run(tw, explicit));
check('defaults = the explicit options on the model without', byDefault === run(tn, explicit));
const greedy = run(tn, {});
check('a model without defaults: greedy, as before', greedy === run(tn, plain));
check('the defaults change the output', greedy !== byDefault);
check('options override the defaults', greedy === run(tw, plain));
check('translateText takes them too', tw.translateText(texts[3], { split: 'none' }).text ===
  tn.translateText(texts[3], { split: 'none', ...explicit }).text);
tw.dispose();
tn.dispose();
withModel.dispose();
withoutModel.dispose();
report();
