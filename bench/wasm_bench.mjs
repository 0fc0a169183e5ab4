// End-to-end translation benchmark of the WebAssembly module in node (web/mtlite.js), the
// counterpart of e2e_bench (same input handling, same counts, model load excluded):
//   node bench/wasm_bench.mjs -m MODEL --input FILE [--batch N] [--beam N] [--repeat R] [--simd=0]
//        [--output FILE]
// One model load and one translator, one untimed warm-up call on the first batch, then every input
// line translated in calls of --batch lines, --repeat times. Prints one JSON object: total_s (median
// over the repetitions of the summed translate wall time), total_s_runs, target_tokens (generated
// tokens of the best hypotheses, with the final </s>, of lines that are not blank),
// sentences_per_s, target_tokens_per_s, kernel_table, arena_bytes; the load apart: module_s
// (instantiation), model_s (loadModel), create_s (createTranslator); wasm_memory_bytes (the module's
// memory at the end) and vm_hwm_kb (the process's peak RSS, Linux). --output: the translations of
// the last repetition.
import { readFileSync } from 'node:fs';
import { Mtlite } from '../web/mtlite.js';
import { timePasses, vmHwmKb, writeLines } from './wasm/timing.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const model = opt('-m');
const input = opt('--input');
if (!model || !input) {
  console.error('usage: node bench/wasm_bench.mjs -m MODEL --input FILE [--batch N] [--beam N] [--repeat R] [--simd=0]');
  process.exit(2);
}
const batch = Number(opt('--batch', 1)), beam = Number(opt('--beam', 1)), repeat = Number(opt('--repeat', 3));
const lines = readFileSync(input, 'utf8').replace(/\n$/, '').split('\n');
const modelBytes = readFileSync(model);
let t0 = performance.now();
const mt = await Mtlite.load({ simd: args.includes('--simd=0') ? false : undefined });
const moduleS = (performance.now() - t0) / 1000;
t0 = performance.now();
const m = mt.loadModel(modelBytes);
const modelS = (performance.now() - t0) / 1000;
t0 = performance.now();
const tr = m.createTranslator({ maxBatch: batch, maxBeam: beam, maxInputBytes: 16384 });
const createS = (performance.now() - t0) / 1000;
tr.translate(lines.slice(0, batch), { beam });
const tokensPerPass = [];
const { runs, cpuRuns, total, texts } = timePasses(lines, batch, repeat, (chunk, pass) => {
  const res = tr.translate(chunk, { beam });
  res.forEach((x, j) => {
    if (/\S/.test(chunk[j])) tokensPerPass[pass] = (tokensPerPass[pass] || 0) + x.hypotheses[0].ids.length + 1;
  });
  return res.map((x) => x.hypotheses[0].text);
});
const tokens = tokensPerPass[repeat - 1] || 0;
writeLines(opt('--output'), texts);
console.log(JSON.stringify({ kernel_table: mt.kernelTable, batch, beam, sentences: lines.length, total_s: total,
  total_s_runs: runs, cpu_s_runs: cpuRuns, target_tokens: tokens, sentences_per_s: lines.length / total, target_tokens_per_s: tokens / total,
  arena_bytes: tr.arenaBytes, module_s: moduleS, model_s: modelS, create_s: createS,
  wasm_memory_bytes: mt._x.memory.buffer.byteLength, vm_hwm_kb: vmHwmKb() }));
