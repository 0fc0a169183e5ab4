// Bergamot (npm @browsermt/bergamot-translator, Marian in WebAssembly, the engine of Firefox
// Translations) on one HTML page in Node: a timing child of bench/text_bench.py, through the
// harness tests/reference/bergamot/translate.mjs (the package's portable integer GEMM, one thread).
//   node bench/text/bergamot_text.mjs --model M.bin --vocab V.spm --page PAGE [--shortlist LEX.bin]
//        [--precision int8shiftAll] [--max-length-factor F] [--passes N] [--output FILE]
// One module instantiation, one TranslationModel (the harness's configuration, ssplit-mode
// paragraph, beam 1; a float32 model is quantized here for int8shiftAll), one BlockingService,
// then the page as one text with html: true --passes times (pass 1 is the warm-up; every pass is
// timed). Bergamot cuts the page into sentences and batches them itself (mini-batch-words of the
// harness's configuration). Prints one JSON object: module_s, model_s, runs, cpu_runs, vm_hwm_kb.
import { readFileSync, writeFileSync } from 'node:fs';
import { loadBergamot, createModel, translateTexts } from '../../tests/reference/bergamot/translate.mjs';
import { vmHwmKb } from '../wasm/timing.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const model = opt('--model'), vocab = opt('--vocab'), pagePath = opt('--page');
if (!model || !vocab || !pagePath) {
  console.error('usage: node bench/text/bergamot_text.mjs --model M.bin --vocab V.spm --page PAGE [--shortlist LEX] ' +
    '[--precision P] [--max-length-factor F] [--passes N] [--output FILE]');
  process.exit(2);
}
const passes = Number(opt('--passes', 2)), precision = opt('--precision', 'int8shiftAll');
const page = readFileSync(pagePath, 'utf8');
let t0 = performance.now();
const M = await loadBergamot();
const moduleS = (performance.now() - t0) / 1000;
t0 = performance.now();
const tm = createModel(M, { model, vocab: [vocab], shortlist: opt('--shortlist', null), beam: 1, precision,
  normalize: '1.0', 'max-length-factor': opt('--max-length-factor', '3'), ssplit: 'paragraph' });
const service = new M.BlockingService({ cacheSize: 0 });
const modelS = (performance.now() - t0) / 1000;
const runs = [], cpuRuns = [];
let out = null;
for (let p = 0; p < passes; ++p) {
  const c0 = process.cpuUsage();
  t0 = performance.now();
  out = translateTexts(M, service, tm, [page], true, true)[0];
  runs.push((performance.now() - t0) / 1000);
  const c = process.cpuUsage(c0);
  cpuRuns.push((c.user + c.system) / 1e6);
}
if (opt('--output')) writeFileSync(opt('--output'), out.translation);
console.log(JSON.stringify({ engine: 'bergamot-wasm-node', precision, module_s: moduleS, model_s: modelS, runs,
  cpu_runs: cpuRuns, sentences: out.spans.length, wasm_memory_bytes: M.HEAP8.byteLength, vm_hwm_kb: vmHwmKb() }));
