#!/usr/bin/env node
// Translates stdin (one sentence a line) with Bergamot (Marian compiled to WebAssembly), one
// output line per input line: an independent implementation of Marian's own semantics.
//
//   node translate.mjs --model M.bin --vocab V.spm [--vocab TRG.spm] [--shortlist lex.bin]
//        [--beam N] [--precision float32|int8shiftAll|int8shiftAlphaAll]
//        [--normalize X] [--max-length-factor F] [--batch N] [--ssplit sentence|paragraph]
//        [--html] [--separator S] [--json] [--pivot M2.bin --pivot-vocab V2.spm [--pivot-vocab ...]]
//        < in > out
//
// The model is a Marian binary (.bin) file; its embedded special:model.yml gives the network.
// One --vocab is shared by both sides; two are source then target.
// --pivot: a second model that translates the first's output (Bergamot's translateViaPivoting:
// the first model's best translation of each sentence is the second's input), with its own
// --pivot-vocab (one or two, as --vocab) and the same options.
// --ssplit: Bergamot's ssplit-mode: sentence (default: a line is one sentence) or paragraph (a
// line is a paragraph that Bergamot cuts into sentences). --html: each text is HTML (Bergamot's
// ResponseOptions html: markup put back by the alignments). --separator S: the texts are the
// parts of stdin between lines equal to S (each may span lines), written back the same way;
// without it each line is one text and a line break in a translation becomes a space. --json:
// one JSON line per text instead, {"translation": T, "spans": [[begin, end], ...], "target_spans":
// [...]} with the byte ranges (UTF-8) of the source sentences Bergamot cut the text into and of
// their translations in T.
import {readFileSync, realpathSync} from 'node:fs';
import {createRequire} from 'node:module';
import {dirname, join} from 'node:path';
import {fileURLToPath} from 'node:url';
import vm from 'node:vm';

function parseArgs(argv) {
  const a = {vocab: [], beam: 1, precision: 'float32', normalize: '1.0', 'max-length-factor': '3',
             batch: 64, shortlist: null, model: null, ssplit: 'sentence', html: false, json: false,
             separator: null, pivot: null, 'pivot-vocab': []};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i].replace(/^--/, '');
    if (k === 'html' || k === 'json') {  // flags
      a[k] = true;
      continue;
    }
    const v = argv[i + 1];
    if (!(k in a) || v === undefined) throw new Error(`unknown or incomplete option ${argv[i]}`);
    if (k === 'vocab' || k === 'pivot-vocab') a[k].push(v); else a[k] = v;
    i++;
  }
  if (!a.model || a.vocab.length < 1 || a.vocab.length > 2)
    throw new Error('need --model and one or two --vocab');
  if ((a.pivot !== null) !== (a['pivot-vocab'].length > 0) || a['pivot-vocab'].length > 2)
    throw new Error('--pivot needs one or two --pivot-vocab (and --pivot-vocab needs --pivot)');
  a.beam = parseInt(a.beam, 10);
  a.batch = parseInt(a.batch, 10);
  if (!(a.beam >= 1) || !(a.batch >= 1)) throw new Error('--beam and --batch must be positive');
  if (a.ssplit !== 'sentence' && a.ssplit !== 'paragraph') throw new Error('--ssplit is sentence or paragraph');
  return a;
}

// Instantiates the Emscripten module from the package's files, without fetch: the glue script is
// evaluated in this context and the wasm bytes are compiled here. The module imports its integer
// GEMM under 'wasm_gemm'; the package's own portable versions are exported as *Fallback.
export async function loadBergamot() {
  const require = createRequire(import.meta.url);
  const pkg = dirname(require.resolve('@browsermt/bergamot-translator/package.json'));
  const glue = readFileSync(join(pkg, 'worker', 'bergamot-translator-worker.js'), 'utf8');
  const wasm = readFileSync(join(pkg, 'worker', 'bergamot-translator-worker.wasm'));
  const gemm = {
    int8_prepare_a: 'int8PrepareAFallback',
    int8_prepare_b: 'int8PrepareBFallback',
    int8_prepare_b_from_transposed: 'int8PrepareBFromTransposedFallback',
    int8_prepare_b_from_quantized_transposed: 'int8PrepareBFromQuantizedTransposedFallback',
    int8_prepare_bias: 'int8PrepareBiasFallback',
    int8_multiply_and_add_bias: 'int8MultiplyAndAddBiasFallback',
    int8_select_columns_of_b: 'int8SelectColumnsOfBFallback',
  };
  return new Promise((resolve, reject) => {
    const Module = {
      print: (s) => process.stderr.write(s + '\n'),
      printErr: (s) => process.stderr.write(s + '\n'),
      instantiateWasm(info, accept) {
        let exports = null;
        const wasmGemm = Object.fromEntries(Object.entries(gemm).map(
            ([name, fallback]) => [name, (...args) => exports[fallback](...args)]));
        WebAssembly.instantiate(wasm, {...info, wasm_gemm: wasmGemm}).then(({instance}) => {
          exports = instance.exports;
          accept(instance);
        }).catch(reject);
        return {};
      },
      onRuntimeInitialized() { resolve(Module); },
      onAbort(what) { reject(new Error(`bergamot aborted: ${what}`)); },
    };
    globalThis.Module = Module;
    vm.runInThisContext(glue, {filename: 'bergamot-translator-worker.js'});
  });
}

export function aligned(M, bytes, alignment) {
  const mem = new M.AlignedMemory(bytes.byteLength, alignment);
  mem.getByteArrayView().set(new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  return mem;
}

// A TranslationModel of the options a (model, vocab, shortlist, beam, precision, normalize,
// max-length-factor, ssplit: 'sentence' when absent); Bergamot quantizes a float32 model at load
// for the int8 precisions.
export function createModel(M, a) {
  const config = [
    `beam-size: ${a.beam}`,
    `normalize: ${a.normalize}`,
    'word-penalty: 0',
    `max-length-factor: ${a['max-length-factor']}`,
    'max-length-break: 1024',
    'mini-batch-words: 4096',
    'workspace: 512',
    'cpu-threads: 0',
    `gemm-precision: ${a.precision}`,
    `skip-cost: ${a.beam === 1}`,  // raw logits suffice for greedy; a beam sums log-probabilities
    `ssplit-mode: ${a.ssplit || 'sentence'}`,
    'quiet: true',
    'quiet-translation: true',
    'alignment: soft',
  ].join('\n') + '\n';
  const model = aligned(M, readFileSync(a.model), 256);
  const shortlist = a.shortlist ? aligned(M, readFileSync(a.shortlist), 64) : new M.AlignedMemory(0, 64);
  const vocabs = new M.AlignedMemoryList();
  for (const v of a.vocab) vocabs.push_back(aligned(M, readFileSync(v), 64));
  return new M.TranslationModel(config, model, shortlist, vocabs, null);
}

// The translations of texts (one call of the service: Bergamot batches them itself); html: the
// texts are HTML (the alignments place the markup); spans: {translation, spans, target_spans} per
// text, the byte ranges of the source sentences and of their translations. pivot: a second
// TranslationModel that translates tm's output (translateViaPivoting).
export function translateTexts(M, service, tm, texts, html = false, spans = false, pivot = null) {
  const v = new M.VectorString();
  const opts = new M.VectorResponseOptions();
  for (const line of texts) {
    v.push_back(line);
    opts.push_back({qualityScores: false, alignment: html, html});
  }
  const responses = pivot ? service.translateViaPivoting(tm, pivot, v, opts) : service.translate(tm, v, opts);
  const out = [];
  for (let j = 0; j < responses.size(); j++) {
    const r = responses.get(j);
    if (!spans) {
      out.push(r.getTranslatedText());
      continue;
    }
    const ranges = [], targets = [];
    for (let k = 0; k < r.size(); k++) {
      const range = r.getSourceSentence(k), target = r.getTranslatedSentence(k);
      ranges.push([range.begin, range.end]);
      targets.push([target.begin, target.end]);
    }
    out.push({translation: r.getTranslatedText(), spans: ranges, target_spans: targets});
  }
  responses.delete();
  v.delete();
  opts.delete();
  return out;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const lines = readFileSync(0, 'utf8').split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  let input = lines;
  if (a.separator !== null) {  // texts between separator lines
    input = [];
    let cur = [];
    for (const line of lines) {
      if (line === a.separator) {
        input.push(cur.join('\n'));
        cur = [];
      } else {
        cur.push(line);
      }
    }
    if (cur.length) input.push(cur.join('\n'));
  }
  const M = await loadBergamot();
  const tm = createModel(M, a);
  const pivot = a.pivot ? createModel(M, {...a, model: a.pivot, vocab: a['pivot-vocab']}) : null;
  const service = new M.BlockingService({cacheSize: 0});
  const out = [];
  for (let i = 0; i < input.length; i += a.batch)
    out.push(...translateTexts(M, service, tm, input.slice(i, i + a.batch), a.html, a.json, pivot));
  if (a.json)
    process.stdout.write(out.map((r) => JSON.stringify(r) + '\n').join(''));
  else if (a.separator !== null)
    process.stdout.write(out.map((s) => s + '\n' + a.separator + '\n').join(''));
  else
    process.stdout.write(out.map((s) => s.replace(/\n/g, ' ')).join('\n') + (out.length ? '\n' : ''));
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    process.stderr.write(`translate.mjs: ${e && e.message ? e.message : e}\n`);
    process.exit(1);
  });
}
