// The JavaScript API's edges, in node (scripts/wasm_test.sh):
//   node tests/wasm/js_defects_test.mjs MODEL [--simd=0]
// 1. a bad model names its cause (the loader's message), and a second bad load with another cause
//    names that one (no stale message);
// 2. calls into the module from an onToken callback (translate, profile, createTranslator,
//    loadModel, dispose of a translator or a model) are refused with MtliteError 'BUSY', and the
//    outer call still returns its own result;
// 3. wrong arguments to every entry point (unknown options, wrong types, fractions, negative or NaN
//    numbers, non-string texts, use after dispose) throw MtliteError 'INVALID_ARGUMENT' naming the
//    option: nothing else reaches the caller;
// 4. the default maxInputBytes is the native CLI's --max-input-bytes (16384), and the Node CLI's.
// Prints "N passed, N failed".
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Mtlite, MtliteError } from '../../web/mtlite.js';
import { check, throws, rejects, describe, report } from './checks.mjs';

const [modelPath, ...flags] = process.argv.slice(2);
const simd = !flags.includes('--simd=0');
// A section's unexpected exception is one failure; the next section runs.
async function section(name, body) {
  try {
    await body();
  } catch (e) {
    check(`section ${name}: unexpected exception`, false, `(${describe(e)})`);
  }
}
function caught(f) {
  try {
    f();
    return null;
  } catch (e) {
    return e;
  }
}

const mt = await Mtlite.load({ simd });
const bytes = new Uint8Array(readFileSync(modelPath));
const model = mt.loadModel(bytes);
const tr = model.createTranslator({ maxBatch: 2, maxBeam: 4, maxNBest: 2, profiling: true });
const other = model.createTranslator();
const A = 'A dog runs in the park.', B = 'Two children play in the snow.';
const refA = tr.translate([A])[0].hypotheses[0].text, refB = tr.translate([B])[0].hypotheses[0].text;
const refA4 = tr.translate([A], { beam: 4 })[0].hypotheses[0].text;
check('reference translations differ', refA !== refB && refA !== '', JSON.stringify([refA, refB]));

// ---- 1. the loader's message --------------------------------------------------------------------
await section('1', async () => {
  throws('(a runtime error first)', () => tr.translate([new Uint8Array([0x41, 0xff])]), 'INVALID_ARGUMENT', 'UTF-8');
  const truncated = bytes.slice(0, 1000);
  const badMagic = bytes.slice();
  badMagic.set([0x58, 0x58, 0x58, 0x58], 4); // the FlatBuffer's root offset / identifier
  throws('truncated model: the loader says why', () => mt.loadModel(truncated), 'INVALID_MODEL', 'exceeds the file size');
  let e1 = caught(() => mt.loadModel(truncated));
  check('truncated model: not the previous error', e1 instanceof MtliteError && e1.reason !== '' && !e1.reason.includes('UTF-8'),
    `(${describe(e1)})`);
  throws('second bad model, another cause: its own message', () => mt.loadModel(badMagic), 'INVALID_MODEL', 'verification failed');
  let e2 = caught(() => mt.loadModel(badMagic));
  check('second bad model: not the first one\'s message', e2 instanceof MtliteError && !e2.reason.includes('exceeds the file size'),
    `(${describe(e2)})`);
  throws('empty model', () => mt.loadModel(new Uint8Array(0)), 'INVALID_MODEL');
  e1 = caught(() => mt.loadModel(new Uint8Array(0)));
  check('empty model: a reason', e1 instanceof MtliteError && e1.reason !== '' && !e1.reason.includes('verification failed'),
    `(${describe(e1)})`);
  const flipped = bytes.slice();
  flipped[flipped.length >> 1] ^= 0xff;
  throws('a flipped weight byte with verify', () => mt.loadModel(flipped, { verify: true }), 'CHECKSUM_MISMATCH', 'checksum mismatch');
  throws('truncated again after it', () => mt.loadModel(truncated), 'INVALID_MODEL', 'exceeds the file size');
  check('the translator still works', tr.translate([A])[0].hypotheses[0].text === refA);
});

// ---- 3. arguments --------------------------------------------------------------------------------
await section('3', async () => {
  const bad = (name, f, ...parts) => throws(name, f, 'INVALID_ARGUMENT', ...parts);
  bad('unknown translate option', () => tr.translate([A], { beem: 4 }), 'beem');
  bad('options not an object', () => tr.translate([A], null), 'options');
  bad('options an array', () => tr.translate([A], [4]), 'options');
  bad('texts a string', () => tr.translate(A), 'texts');
  bad('texts null', () => tr.translate(null), 'texts');
  bad('texts missing', () => tr.translate(), 'texts');
  for (const [what, t] of [['a number', 42], ['null', null], ['undefined', undefined], ['an object', { text: A }],
    ['an Int8Array', new Int8Array(2)], ['an ArrayBuffer', new ArrayBuffer(2)]]) {
    bad(`a text that is ${what}`, () => tr.translate([A, t]), 'texts[1]');
  }
  const wrong = {
    beam: ['4', 2.7, -1, 0, NaN, Infinity, 2 ** 40, null, true],
    nBest: ['2', 1.5, -1, 0, NaN, null],
    maxLength: ['10', 2.5, -5, 0, NaN, Infinity],
    maxLengthRatio: ['2', -1, NaN, Infinity, null],
    maxLengthOffset: ['1', -1, 1.5, NaN],
    lengthPenalty: ['0.6', NaN, Infinity, -Infinity, null],
    scores: ['yes', 1, null], alignments: [1, 'true'], shortlist: [0, 'no'], profile: [1], textBytes: ['x'],
    onToken: ['f', {}, null, 1],
  };
  for (const [k, values] of Object.entries(wrong)) {
    for (const v of values) bad(`translate option ${k}: ${typeof v === 'string' ? `'${v}'` : String(v)}`, () => tr.translate([A], { [k]: v }), k);
  }
  check('valid options still work', tr.translate([A, B], { beam: 2, nBest: 2, scores: false, alignments: false, maxLength: 100,
    maxLengthRatio: 3, maxLengthOffset: 5, lengthPenalty: 0.6, textBytes: true, onToken: undefined }).length === 2);
  check('beam 4 still works', tr.translate([A], { beam: 4 })[0].hypotheses[0].text !== '');

  bad('unknown limit', () => model.createTranslator({ maxBeem: 4 }), 'maxBeem');
  bad('numThreads', () => model.createTranslator({ numThreads: 2 }), 'numThreads');
  bad('limits null', () => model.createTranslator(null), 'limits');
  bad('limits a number', () => model.createTranslator(4), 'limits');
  const wrongLimits = { maxBatch: ['2', 1.5, -1, NaN], maxSourceTokens: [NaN, '64'], maxTargetTokens: [2.5, 2 ** 33],
    maxBeam: ['4', 2.7, -4, NaN, null], maxNBest: [1.5], maxInputBytes: ['4096', -1, Infinity], alignments: [1, 'yes'],
    profiling: ['true'], profileEvents: [-1, 0.5] };
  for (const [k, values] of Object.entries(wrongLimits)) {
    for (const v of values) bad(`limit ${k}: ${typeof v === 'string' ? `'${v}'` : String(v)}`, () => model.createTranslator({ [k]: v }), k);
  }

  bad('loadModel(null)', () => mt.loadModel(null), 'bytes');
  bad('loadModel(a string)', () => mt.loadModel('model.mtlite'), 'bytes');
  bad('loadModel(a number)', () => mt.loadModel(1000), 'bytes');
  bad('loadModel unknown option', () => mt.loadModel(bytes, { verfy: true }), 'verfy');
  bad('loadModel verify not a boolean', () => mt.loadModel(bytes, { verify: 'yes' }), 'verify');
  bad('loadModel options null', () => mt.loadModel(bytes, null), 'options');
  const m2 = mt.loadModel(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  check('loadModel(ArrayBuffer)', m2.config.dModel === model.config.dModel);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const m3 = mt.loadModel(view);
  check('loadModel(DataView)', m3.config.dModel === model.config.dModel);

  await rejects('Mtlite.load unknown option', () => Mtlite.load({ smd: false }), 'INVALID_ARGUMENT', 'smd');
  await rejects('Mtlite.load simd not a boolean', () => Mtlite.load({ simd: 'no' }), 'INVALID_ARGUMENT', 'simd');
  await rejects('Mtlite.load env values not strings', () => Mtlite.load({ env: { MTLITE_KERNELS: 1 } }), 'INVALID_ARGUMENT', 'env');
  await rejects('Mtlite.load options null', () => Mtlite.load(null), 'INVALID_ARGUMENT', 'options');
  await rejects('Mtlite.load wasm of a wrong type', () => Mtlite.load({ wasm: 42 }), 'INVALID_ARGUMENT', 'wasm');
  await rejects('Mtlite.load a missing file', () => Mtlite.load({ wasm: new URL('file:///nonexistent/mtlite.wasm') }), 'IO_ERROR',
    'nonexistent');
  await rejects('Mtlite.load bytes that are no module', () => Mtlite.load({ wasm: new Uint8Array([0, 0x61, 0x73, 0x6d, 9]) }),
    'INVALID_ARGUMENT', 'wasm');
  const tiny = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]); // a valid, empty module
  await rejects('Mtlite.load a module that is not mtlite', () => Mtlite.load({ wasm: tiny }), 'INVALID_ARGUMENT', 'wasm');

  // use after dispose, dispose twice
  const t3 = m3.createTranslator();
  t3.dispose();
  check('translator dispose twice', caught(() => t3.dispose()) === null);
  throws('translate after dispose', () => t3.translate([A]), 'INVALID_ARGUMENT', 'disposed');
  throws('profile after dispose', () => t3.profile(), 'INVALID_ARGUMENT', 'disposed');
  const t2 = m2.createTranslator();
  m2.dispose();
  check('model dispose twice', caught(() => m2.dispose()) === null);
  throws('createTranslator after the model\'s dispose', () => m2.createTranslator(), 'INVALID_ARGUMENT', 'disposed');
  throws('translate after the model\'s dispose', () => t2.translate([A]), 'INVALID_ARGUMENT', 'disposed');
  m3.dispose();
  check('the translators still work after all this', tr.translate([A])[0].hypotheses[0].text === refA &&
    other.translate([B])[0].hypotheses[0].text === refB);
});

// ---- 4. the default maxInputBytes -------------------------------------------------------------------
await section('4', async () => {
  const d = model.createTranslator();
  check('default maxInputBytes is 16384 (the native CLI\'s)', d.limits.maxInputBytes === 16384, `(${d.limits.maxInputBytes})`);
  const e4 = caught(() => d.translate(['x'.repeat(8000)]));
  check('an 8000-byte text is within the default input limit', !(e4 && /max_input_bytes/.test(e4.reason || '')), `(${e4 && describe(e4)})`);
  throws('over it', () => d.translate(['x'.repeat(16385)]), 'OUT_OF_RANGE', 'max_input_bytes');
  d.dispose();
  const root = new URL('../../', import.meta.url);
  const native = /\bmax_input_bytes = (\d+)/.exec(readFileSync(new URL('runtime/cli/commands.h', root), 'utf8'));
  check('the native CLI\'s default (TranslateArgs::max_input_bytes) is the package\'s',
    native && Number(native[1]) === d.limits.maxInputBytes, `(${native && native[1]})`);
  const help = spawnSync(process.execPath, [fileURLToPath(new URL('web/mtlite.mjs', root)), 'translate', '--help'],
    { encoding: 'utf8' });
  const cli = /--max-input-bytes N .*default (\d+)\)/.exec(help.stdout + help.stderr);
  check('the Node CLI\'s --max-input-bytes default is the package\'s', cli && Number(cli[1]) === d.limits.maxInputBytes,
    `(${cli && cli[1]})`);
});

// ---- 2. calls from onToken ------------------------------------------------------------------------
await section('2', async () => {
  function fromCallback(name, inner, beam = 1) {
    let innerError = 'not called', outer = null, outerError = null;
    try {
      outer = tr.translate([A], {
        beam,
        onToken: () => {
          if (innerError !== 'not called') return;
          innerError = caught(inner);
        },
      });
    } catch (e) {
      outerError = e;
    }
    check(`${name} inside onToken: refused with MtliteError BUSY`,
      innerError instanceof MtliteError && innerError.code === 'BUSY' && /onToken/.test(innerError.reason),
      `(${innerError === null ? 'no exception' : innerError === 'not called' ? 'callback not called' : describe(innerError)})`);
    check(`${name} inside onToken: the outer call returns its own result`,
      outerError === null && outer && outer.length === 1 && outer[0].hypotheses[0].text === (beam === 1 ? refA : refA4),
      `(${outerError ? describe(outerError) : JSON.stringify(outer && outer.map((r) => r.hypotheses[0].text))})`);
  }
  for (const beam of [1, 4]) {
    fromCallback(`beam ${beam}: translate on the same translator`, () => tr.translate([B]), beam);
    fromCallback(`beam ${beam}: translate on another translator`, () => other.translate([B]), beam);
  }
  fromCallback('profile()', () => tr.profile());
  fromCallback('createTranslator', () => model.createTranslator());
  fromCallback('loadModel', () => mt.loadModel(bytes));
  fromCallback('dispose() of the running translator', () => tr.dispose());
  fromCallback('dispose() of another translator', () => other.dispose());
  fromCallback('dispose() of the model', () => model.dispose(), 4);
  check('translator usable after the refused calls', tr.translate([B])[0].hypotheses[0].text === refB);
  check('other translator usable after them', other.translate([B])[0].hypotheses[0].text === refB);
  let uncaught = null;
  try {
    tr.translate([A], { onToken: () => tr.translate([B]) });
  } catch (e) {
    uncaught = e;
  }
  check('an uncaught refusal reaches the caller as MtliteError BUSY', uncaught instanceof MtliteError && uncaught.code === 'BUSY',
    `(${uncaught ? describe(uncaught) : 'no exception'})`);
  check('usable after it', tr.translate([A])[0].hypotheses[0].text === refA);
});

for (const x of [other, tr, model]) caught(() => x.dispose());
report();
