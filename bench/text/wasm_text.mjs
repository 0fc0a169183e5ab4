// mtlite's WebAssembly module in Node (web/mtlite.js) on one HTML page: a timing child of
// bench/text_bench.py.
//   node bench/text/wasm_text.mjs -m MODEL --page PAGE [--batch B] [--passes N] [--shortlist]
//        [--ratio R --offset O] [--output FILE]
// One module instantiation, one model, one translator (maxBatch B, alignments: true), then
// translateText(page, {html: true, beam: 1}) --passes times (pass 1 is the warm-up; every pass is
// timed and reported). Prints one JSON object: module_s, model_s, create_s, runs, cpu_runs,
// kernel_table, sentences, vm_hwm_kb. --output: the HTML of the last pass.
import { readFileSync, writeFileSync } from 'node:fs';
import { Mtlite } from '../../web/mtlite.js';
import { vmHwmKb } from '../wasm/timing.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const model = opt('-m'), pagePath = opt('--page');
if (!model || !pagePath) {
  console.error('usage: node bench/text/wasm_text.mjs -m MODEL --page PAGE [--batch B] [--passes N] [--shortlist] ' +
    '[--ratio R --offset O] [--output FILE]');
  process.exit(2);
}
const batch = Number(opt('--batch', 1)), passes = Number(opt('--passes', 2));
const page = readFileSync(pagePath, 'utf8');
const modelBytes = readFileSync(model);
let t0 = performance.now();
const mt = await Mtlite.load();
const moduleS = (performance.now() - t0) / 1000;
t0 = performance.now();
const m = mt.loadModel(modelBytes);
const modelS = (performance.now() - t0) / 1000;
t0 = performance.now();
const tr = m.createTranslator({ maxBatch: batch, alignments: true });
const createS = (performance.now() - t0) / 1000;
const options = { html: true, beam: 1, shortlist: args.includes('--shortlist') };
if (opt('--ratio')) Object.assign(options, { maxLengthRatio: Number(opt('--ratio')), maxLengthOffset: Number(opt('--offset', 10)) });
const runs = [], cpuRuns = [];
let r = null;
for (let p = 0; p < passes; ++p) {
  const c0 = process.cpuUsage();
  t0 = performance.now();
  r = tr.translateText(page, options);
  runs.push((performance.now() - t0) / 1000);
  const c = process.cpuUsage(c0);
  cpuRuns.push((c.user + c.system) / 1e6);
}
if (opt('--output')) writeFileSync(opt('--output'), r.text);
console.log(JSON.stringify({ engine: 'mtlite-wasm-node', kernel_table: mt.kernelTable, batch, module_s: moduleS,
  model_s: modelS, create_s: createS, runs, cpu_runs: cpuRuns, sentences: r.sentences.length, failed: r.failed,
  vm_hwm_kb: vmHwmKb() }));
