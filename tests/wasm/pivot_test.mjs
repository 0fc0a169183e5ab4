// Two models chained through a pivot language in the JavaScript API (createTranslator's pivot), in node:
//   node tests/wasm/pivot_test.mjs FIRST SECOND [--simd=0]
// FIRST translates into the language SECOND translates from (scripts/wasm_test.sh: the int8 demo
// model en-de, and the demo converted again as "de-xx"). The chain's translations equal the second
// model's translations of the first's (greedy, and beam 4 with n-best and scores: the second's
// hypotheses), batches included; its stream events end with its results; translateText (paragraphs,
// and html with the markup in place); one arena, larger than either model's alone; errors (languages
// that do not meet, a disposed or foreign pivot model, a pivot that is not a Model); disposing the
// pivot model disposes the chain; AsyncTranslator with options.pivot equals the synchronous chain.
// Prints "N passed, N failed".
import { readFileSync } from 'node:fs';
import { AsyncTranslator, Mtlite, MtliteError } from '../../web/mtlite.js';
import { check, throws, report } from './checks.mjs';

const [firstPath, secondPath, ...flags] = process.argv.slice(2);
const simd = !flags.includes('--simd=0');
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const plain = (results) => results.map((r) => r.hypotheses.map((h) => ({ text: h.text, ids: Array.from(h.ids), score: h.score })));

const mt = await Mtlite.load({ simd });
const firstBytes = readFileSync(firstPath), secondBytes = readFileSync(secondPath);
const first = mt.loadModel(firstBytes), second = mt.loadModel(secondBytes);
const limits = { maxBatch: 4, maxBeam: 4, maxNBest: 2, alignments: true };
const chain = first.createTranslator({ ...limits, pivot: second });
const one = first.createTranslator(limits), two = second.createTranslator(limits);
check('pivot property', chain.pivot === second && one.pivot === null);
check('limits without the pivot', !('pivot' in chain.limits) && same(chain.limits, one.limits), JSON.stringify(chain.limits));
check('one arena for both', chain.arenaBytes > one.arenaBytes && chain.arenaBytes > two.arenaBytes,
  `${chain.arenaBytes} ${one.arenaBytes} ${two.arenaBytes}`);

const texts = ['A dog runs in the park.', 'Two children play in the snow with a red ball.', '', 'A man reads a newspaper.'];
for (const options of [{}, { beam: 4, nBest: 2, scores: true }, { beam: 2, maxLengthRatio: 3, maxLengthOffset: 1 }]) {
  const pivotTexts = one.translate(texts).map((r) => r.hypotheses[0].text);
  const want = two.translate(pivotTexts, options);
  const got = chain.translate(texts, options);
  check(`chain = second(first) ${JSON.stringify(options)}`, same(plain(got), plain(want)),
    `${JSON.stringify(plain(got)[1])} vs ${JSON.stringify(plain(want)[1])}`);
  const alone = texts.map((t) => chain.translate([t], options)[0]);
  check(`batch = one at a time ${JSON.stringify(options)}`, same(plain(alone), plain(got)));
}
// the first's best translation is the second's input also when the call asks for n-best
const withAlign = chain.translate(texts.slice(0, 1), { alignments: true })[0].hypotheses[0];
check('alignments over the pivot text', withAlign.alignment.length === (withAlign.ids.length + 1) * withAlign.sourceTokens &&
  withAlign.sourceTokens === second.tokenize(one.translate(texts.slice(0, 1))[0].hypotheses[0].text).ids.length,
  `${withAlign.sourceTokens}`);

const events = [];
const streamed = chain.translate([texts[0]], { beam: 2, onToken: (e) => events.push(e) });
const finals = events.filter((e) => e.final);
check('stream: the second model\'s final event', finals.length === 1 && finals[0].text === streamed[0].hypotheses[0].text,
  JSON.stringify(finals));

const paragraph = 'A dog runs in the park. Two children play in the snow.\nA man reads a newspaper.';
const tt = chain.translateText(paragraph);
check('translateText: sentences', tt.sentences.length === 3 && tt.failed === 0 && tt.text.split('\n').length === 2,
  JSON.stringify(tt.sentences.map((s) => s.source)));
check('translateText: each sentence as translate', tt.sentences.every((s) =>
  s.translation === chain.translate([s.source], { beam: 1 })[0].hypotheses[0].text), JSON.stringify(tt.sentences.map((s) => s.translation)));
const html = '<p>A <b>dog</b> runs in the <a href="https://example.org">park</a>.</p><p>Type <code>ls</code> now.</p>';
const th = chain.translateText(html, { html: true });
const tags = (s) => s.match(/<[^>]*>/g).join('');
check('html through the pivot: the tags in order', tags(th.text) === tags(html) && th.text.includes('<code>ls</code>'), th.text);

throws('languages that do not meet', () => first.createTranslator({ pivot: first }), 'INVALID_ARGUMENT',
  "pivot: the first model translates into 'de' but the second translates from 'en'");
throws('a pivot that is not a Model', () => first.createTranslator({ pivot: secondBytes }), 'INVALID_ARGUMENT',
  'pivot must be a Model');
const other = await Mtlite.load({ simd });
const foreign = other.loadModel(secondBytes);
throws('a pivot of another Mtlite', () => first.createTranslator({ pivot: foreign }), 'INVALID_ARGUMENT', 'another Mtlite');
foreign.dispose();
const gone = mt.loadModel(secondBytes);
gone.dispose();
throws('a disposed pivot', () => first.createTranslator({ pivot: gone }), 'INVALID_ARGUMENT', 'pivot model was disposed');
throws('limits checked with a pivot', () => first.createTranslator({ maxBeam: 65, pivot: second }), 'INVALID_ARGUMENT', 'max_beam');

// AsyncTranslator: the chain in a worker
const at = await AsyncTranslator.create({ model: firstBytes, pivot: secondBytes, limits, simd });
check('async: pivotConfig', at.pivotConfig && at.pivotConfig.dModel === second.config.dModel && at.arenaBytes === chain.arenaBytes,
  JSON.stringify(at.pivotConfig));
const asyncOut = await at.translate(texts, { beam: 4, nBest: 2, scores: true });
check('async chain = sync chain', same(plain(asyncOut), plain(chain.translate(texts, { beam: 4, nBest: 2, scores: true }))));
const asyncHtml = await at.translateText(html, { html: true });
check('async html = sync html', asyncHtml.text === th.text);
at.dispose();
const plainAsync = await AsyncTranslator.create({ model: firstBytes, limits, simd });
check('async without a pivot: pivotConfig null', plainAsync.pivotConfig === null);
plainAsync.dispose();

// disposing the pivot model disposes the chain (and not the first model's other translators)
const chain2 = first.createTranslator({ maxBeam: 1, pivot: second });
second.dispose();
throws('chain disposed with its pivot model', () => chain.translate(['A dog.']), 'INVALID_ARGUMENT', 'disposed');
throws('every chain', () => chain2.translate(['A dog.']), 'INVALID_ARGUMENT', 'disposed');
check('the first model\'s own translator lives on', one.translate(['A dog.'])[0].hypotheses.length === 1);
first.dispose();

report();
