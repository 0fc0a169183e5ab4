// Bergamot (Marian compiled to WebAssembly, npm @browsermt/bergamot-translator, the engine of Firefox
// Translations) timed like bench/wasm_bench.mjs times mtlite's module: Node, local files, the
// package's own portable integer GEMM (no native intgemm), one thread.
//   node bench/wasm/bergamot_bench.mjs --model M.bin --vocab V.spm --input FILE [--beam N] [--batch N]
//        [--precision int8shiftAll|float32] [--repeat R] [--output FILE]
// One module instantiation and one TranslationModel (a float32 model is quantized there for the int8
// precisions), one untimed warm-up call on the first batch, then every input line in service calls of
// --batch lines, --repeat times. Prints one JSON object: total_s (median over the repetitions of the
// summed translate wall time), total_s_runs, sentences_per_s, module_s, model_s (TranslationModel
// creation), wasm_memory_bytes, vm_hwm_kb. Target tokens are not returned by the package: the
// driver (bench/wasm/run.py) counts them in the output with the target SentencePiece model.
import { readFileSync } from 'node:fs';
import { loadBergamot, createModel, translateTexts } from '../../tests/reference/bergamot/translate.mjs';
import { timePasses, vmHwmKb, writeLines } from './timing.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const model = opt('--model'), vocab = opt('--vocab'), input = opt('--input');
if (!model || !vocab || !input) {
  console.error('usage: node bench/wasm/bergamot_bench.mjs --model M.bin --vocab V.spm --input FILE [--beam N] ' +
    '[--batch N] [--precision P] [--repeat R] [--output FILE]');
  process.exit(2);
}
const beam = Number(opt('--beam', 1)), batch = Number(opt('--batch', 1)), repeat = Number(opt('--repeat', 3));
const precision = opt('--precision', 'int8shiftAll');
const lines = readFileSync(input, 'utf8').replace(/\n$/, '').split('\n');

let t0 = performance.now();
const M = await loadBergamot();
const moduleS = (performance.now() - t0) / 1000;
t0 = performance.now();
// translate.mjs's configuration (normalize 1, max-length-factor 3, skip-cost, no shortlist)
const tm = createModel(M, { model, vocab: [vocab], shortlist: null, beam, precision, normalize: '1.0',
  'max-length-factor': '3' });
const service = new M.BlockingService({ cacheSize: 0 });
const modelS = (performance.now() - t0) / 1000;

translateTexts(M, service, tm, lines.slice(0, batch));
const { runs, cpuRuns, total, texts } = timePasses(lines, batch, repeat, (chunk) => translateTexts(M, service, tm, chunk));
writeLines(opt('--output'), texts);
console.log(JSON.stringify({ engine: 'bergamot', precision, batch, beam, sentences: lines.length, total_s: total,
  total_s_runs: runs, cpu_s_runs: cpuRuns, sentences_per_s: lines.length / total, module_s: moduleS, model_s: modelS,
  wasm_memory_bytes: M.HEAP8.byteLength, vm_hwm_kb: vmHwmKb() }));
