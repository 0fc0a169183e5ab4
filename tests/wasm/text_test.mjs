// The text layer of web/mtlite.js (Translator.translateText) and Model.tokenize, on the demo model:
//   node tests/wasm/text_test.mjs MODEL [--simd=0]
// sentences and their offsets (JavaScript string indices, non-ASCII text included), each sentence's
// translation equal to translate() of its source, the split modes, HTML (markup kept, the text
// contents the offsets index, the gaps between sentences equal in source and target), a sentence
// that fails kept untranslated, word quality scores, the limits (maxTextBytes, a translator without alignments for html),
// wrong arguments (MtliteError INVALID_ARGUMENT), BUSY from onToken, tokenize's ids and pieces.
// Prints "N passed, N failed".
import { readFileSync } from 'node:fs';
import { Mtlite, MtliteError } from '../../web/mtlite.js';
import { check, throws, describe, report } from './checks.mjs';

const [modelPath, ...flags] = process.argv.slice(2);
const simd = !flags.includes('--simd=0');

const mt = await Mtlite.load({ simd });
const model = mt.loadModel(readFileSync(modelPath));
const tr = model.createTranslator({ maxBatch: 4, alignments: true });
check('default maxTextBytes is 65536 (the native CLI\'s --max-text-bytes)', tr.limits.maxTextBytes === 65536,
  `(${tr.limits.maxTextBytes})`);
const one = (s) => tr.translate([s])[0].hypotheses[0].text;

// ---- paragraphs ---------------------------------------------------------------------------------------
const para = 'A dog runs in the park. Mr. Brown has 3.5 dogs! Two children play in the snow \u{1F600}. ' +
  '\u00c9mile sits on a bench near the caf\u00e9.';
const r = tr.translateText(para);
check('sentences of a paragraph', r.sentences.length === 4 && r.failed === 0 && r.firstError === null,
  JSON.stringify(r.sentences.map((s) => s.source)));
check('source offsets are string indices', r.sentences.every((s) => para.slice(s.sourceStart, s.sourceEnd) === s.source));
check('target offsets are string indices', r.sentences.every((s) => r.text.slice(s.targetStart, s.targetEnd) === s.translation));
check('the last sentence ends the text', r.sentences[3].sourceEnd === para.length && r.sentences[3].targetEnd === r.text.length,
  JSON.stringify(r.sentences[3]));
check('the spaces between sentences are kept', r.sentences.every((s, i) => i === 0 ||
  r.text.slice(r.sentences[i - 1].targetEnd, s.targetStart) === para.slice(r.sentences[i - 1].sourceEnd, s.sourceStart)));
check('each sentence translated as by translate()', r.sentences.every((s) => s.translation === one(s.source) && s.pieces === 1),
  JSON.stringify(r.sentences.map((s) => [s.translation, one(s.source)])));
check('scores', r.sentences.every((s) => Number.isFinite(s.score) && s.score < 0 && s.error === null));
const lines = tr.translateText(`${para}\n\n  A cat sleeps.  \n`);
check('lines and their whitespace kept (paragraph)', lines.text === `${r.text}\n\n  ${one('A cat sleeps.')}  \n`,
  JSON.stringify(lines.text));
const none = tr.translateText('A dog runs. A cat sleeps.', { split: 'none' });
check('split none: one sentence', none.sentences.length === 1 && none.text === one('A dog runs. A cat sleeps.'));
const sentence = tr.translateText('A dog runs. A cat sleeps.\nTwo men sit.', { split: 'sentence' });
check('split sentence: one per line', sentence.sentences.length === 2, JSON.stringify(sentence.sentences));
const wrapped = tr.translateText('A dog runs in\nthe park.\n\nA cat sleeps.', { split: 'wrapped' });
check('split wrapped: a soft line break inside a sentence', wrapped.sentences.length === 2 &&
  wrapped.sentences[0].source === 'A dog runs in\nthe park.', JSON.stringify(wrapped.sentences.map((s) => s.source)));
check('language option', tr.translateText(para, { language: 'en' }).text === r.text);
check('maxLengthBreak: pieces', tr.translateText('A dog runs in the park with two children.', { maxLengthBreak: 4 })
  .sentences[0].pieces > 1);
check('beam option', tr.translateText('A dog runs.', { beam: 2 }).text === tr.translate(['A dog runs.'], { beam: 2 })[0].hypotheses[0].text);
const bytes = tr.translateText(new TextEncoder().encode(para), { textBytes: true });
check('Uint8Array input, textBytes and byte offsets', bytes.text === r.text &&
  new TextDecoder().decode(bytes.textBytes) === r.text && bytes.sentences[3].bytes.sourceEnd === new TextEncoder().encode(para).length &&
  bytes.sentences[0].source === r.sentences[0].source);
const q = tr.translateText(para, { quality: true });
check('quality: words with scores, their text in the translation', q.text === r.text && q.sentences.every((s) =>
  Number.isFinite(s.quality) && s.words.length > 0 && s.words.every((w) => Number.isFinite(w.score) &&
    q.text.slice(w.targetStart, w.targetEnd) === w.text && w.targetStart >= s.targetStart && w.targetEnd <= s.targetEnd)),
JSON.stringify(q.sentences[0]));
check('no words without quality', r.sentences.every((s) => s.words === undefined));
check('empty text', tr.translateText('').text === '' && tr.translateText('').sentences.length === 0);

// ---- a sentence that fails ------------------------------------------------------------------------------
const bad = new Uint8Array([...new TextEncoder().encode('A dog runs. A man '), 0xc0, 0xaf,
  ...new TextEncoder().encode(' walks. A cat sleeps.')]);
const rb = tr.translateText(bad, { textBytes: true });
check('a failed sentence is counted', rb.failed === 1 && rb.firstError instanceof MtliteError &&
  rb.firstError.code === 'INVALID_ARGUMENT' && /UTF-8/.test(rb.firstError.reason), `(${rb.failed} ${describe(rb.firstError)})`);
check('its error is on the sentence', rb.sentences.filter((s) => s.error).length === 1 && rb.sentences[1].error === rb.firstError);
const kept = rb.textBytes.subarray(rb.sentences[1].bytes.targetStart, rb.sentences[1].bytes.targetEnd);
check('it is kept untranslated, byte for byte', Buffer.from(kept).equals(Buffer.from(bad.subarray(rb.sentences[1].bytes.sourceStart,
  rb.sentences[1].bytes.sourceEnd))));
check('the others are translated', rb.sentences[0].translation === one('A dog runs.') && rb.sentences[2].translation === one('A cat sleeps.'));

// ---- HTML ---------------------------------------------------------------------------------------------
const html = '<p>A dog runs in the <b>park</b>. Two children play in the <i>snow</i>.</p>\n' +
  '<ul><li>A man &amp; a woman sit.</li><li>Type <code>ls</code> now.</li></ul><script>x = "<p>A dog</p>"</script>';
const h = tr.translateText(html, { html: true });
check('html: markup kept', /^<p>.*<b>.*<\/b>.*<i>.*<\/i>.*<\/p>\n<ul><li>.*<\/li><li>.*<code>ls<\/code>.*<\/li><\/ul><script>x = "<p>A dog<\/p>"<\/script>$/s
  .test(h.text), JSON.stringify(h.text));
check('html: the source text content', h.plainSource.startsWith('A dog runs in the park. Two children play in the snow.') &&
  h.plainSource.includes('A man & a woman sit.') && !h.plainSource.includes('<'), JSON.stringify(h.plainSource));
check('html: sentences index the text contents', h.sentences.length >= 4 &&
  h.sentences.every((s) => h.plainSource.slice(s.sourceStart, s.sourceEnd) === s.source &&
    h.plainTarget.slice(s.targetStart, s.targetEnd) === s.translation), JSON.stringify(h.sentences));
check('html: the gaps between sentences are equal in source and target', h.sentences.every((s, i) => i === 0 ||
  h.plainTarget.slice(h.sentences[i - 1].targetEnd, s.targetStart) === h.plainSource.slice(h.sentences[i - 1].sourceEnd, s.sourceStart)));
check('html: a sentence translated as its text', h.sentences[0].translation === one('A dog runs in the park.'),
  JSON.stringify([h.sentences[0].translation, one('A dog runs in the park.')]));
check('html: default split wrapped (line breaks are soft)', tr.translateText('<p>A dog runs\nin the park.</p>', { html: true })
  .sentences.length === 1);
const noAlign = model.createTranslator();
throws('html on a translator without alignments', () => noAlign.translateText(html, { html: true }), 'INVALID_ARGUMENT',
  'alignments: true');
check('plain text on it', noAlign.translateText(para).text === r.text);
noAlign.dispose();

// ---- limits and arguments ---------------------------------------------------------------------------------
const small = model.createTranslator({ maxTextBytes: 64 });
throws('more than maxTextBytes', () => small.translateText('A dog runs. '.repeat(6)), 'OUT_OF_RANGE', 'max_text_bytes');
check('within it', small.translateText('A dog runs.').text === one('A dog runs.'));
small.dispose();
const noText = model.createTranslator({ maxTextBytes: 0 });
throws('maxTextBytes 0: no text layer', () => noText.translateText('A dog runs.'), 'UNSUPPORTED', 'text layer');
check('a smaller arena without the text layer', noText.arenaBytes < tr.arenaBytes, `(${noText.arenaBytes} vs ${tr.arenaBytes})`);
noText.dispose();
throws('text of the wrong type', () => tr.translateText(5), 'INVALID_ARGUMENT', 'text must be');
throws('an array of texts', () => tr.translateText(['a']), 'INVALID_ARGUMENT', 'text must be');
throws('unknown option', () => tr.translateText('a', { htlm: true }), 'INVALID_ARGUMENT', '"htlm"');
throws('translate-only option', () => tr.translateText('a', { nBest: 2 }), 'INVALID_ARGUMENT', '"nBest"');
throws('bad split', () => tr.translateText('a', { split: 'lines' }), 'INVALID_ARGUMENT', 'split must be');
throws('html not a boolean', () => tr.translateText('a', { html: 1 }), 'INVALID_ARGUMENT', 'html must be');
throws('maxLengthBreak 0', () => tr.translateText('a', { maxLengthBreak: 0 }), 'INVALID_ARGUMENT', 'maxLengthBreak');
throws('language not a code', () => tr.translateText('a', { language: 'e n' }), 'INVALID_ARGUMENT', 'language');
throws('maxTextBytes negative', () => model.createTranslator({ maxTextBytes: -1 }), 'INVALID_ARGUMENT', 'maxTextBytes');
let busy = null;
tr.translate(['A dog runs.'], { onToken: () => { if (!busy) try { tr.translateText('A cat.'); } catch (e) { busy = e; } } });
check('translateText inside onToken: BUSY', busy instanceof MtliteError && busy.code === 'BUSY', `(${busy && describe(busy)})`);
check('usable after it', tr.translateText(para).text === r.text);

// ---- tokenize -----------------------------------------------------------------------------------------------
const tok = model.tokenize('A dog runs in the snow.');
const aligned = tr.translate(['A dog runs in the snow.'], { alignments: true })[0].hypotheses[0];
check('tokenize: ids and pieces', tok.ids instanceof Int32Array && tok.ids.length === tok.pieces.length &&
  tok.pieces[tok.pieces.length - 1] === '</s>' && tok.pieces[0].startsWith('\u2581'), JSON.stringify(tok.pieces));
check('tokenize: as many as the alignment\'s source tokens', tok.ids.length === aligned.sourceTokens,
  `(${tok.ids.length} vs ${aligned.sourceTokens})`);
check('tokenize: the pieces spell the text', tok.pieces.slice(0, -1).join('').replaceAll('\u2581', ' ').trim() === 'A dog runs in the snow.');
check('tokenize: empty text', model.tokenize('').ids.length === 0);
check('tokenize: bytes', model.tokenize(new TextEncoder().encode('A dog.')).pieces.join('') === model.tokenize('A dog.').pieces.join(''));
throws('tokenize: invalid UTF-8', () => model.tokenize(new Uint8Array([0x41, 0xff])), 'INVALID_ARGUMENT', 'UTF-8');
throws('tokenize: not a text', () => model.tokenize(null), 'INVALID_ARGUMENT', 'text must be');

tr.dispose();
throws('translateText on a disposed translator', () => tr.translateText('a'), 'INVALID_ARGUMENT', 'disposed');
model.dispose();
throws('tokenize on a disposed model', () => model.tokenize('a'), 'INVALID_ARGUMENT', 'disposed');
report();
