// End-to-end translation benchmark of the WebAssembly module in node (web/mtlite.js), the
// counterpart of e2e_bench (same input handling, same counts, model load excluded):
//   node bench/wasm_bench.mjs -m MODEL --input FILE [--batch N] [--beam N] [--repeat R] [--simd=0]
// One model load and one translator, one untimed warm-up call on the first batch, then every input
// line translated in calls of --batch lines, --repeat times. Prints one JSON object: total_s (median
// over the repetitions of the summed translate wall time), total_s_runs, target_tokens (generated
// tokens of the best hypotheses, with the final </s>, of lines that are not blank),
// sentences_per_s, target_tokens_per_s, kernel_table, arena_bytes.
import { readFileSync } from 'node:fs';
import { Mtlite } from '../web/mtlite.js';

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
const mt = await Mtlite.load({ simd: args.includes('--simd=0') ? false : undefined });
const m = mt.loadModel(readFileSync(model));
const tr = m.createTranslator({ maxBatch: batch, maxBeam: beam, maxInputBytes: 16384 });
tr.translate(lines.slice(0, batch), { beam });
const runs = [];
let tokens = 0;
for (let r = 0; r < repeat; ++r) {
  let total = 0, t = 0;
  for (let i = 0; i < lines.length; i += batch) {
    const chunk = lines.slice(i, i + batch);
    const t0 = performance.now();
    const res = tr.translate(chunk, { beam });
    total += performance.now() - t0;
    res.forEach((x, j) => {
      if (/\S/.test(chunk[j])) t += x.hypotheses[0].ids.length + 1;
    });
  }
  runs.push(total / 1000);
  tokens = t;
}
const sorted = [...runs].sort((a, b) => a - b);
const total = sorted[Math.floor(sorted.length / 2)];
console.log(JSON.stringify({ kernel_table: mt.kernelTable, batch, beam, sentences: lines.length, total_s: total,
  total_s_runs: runs, target_tokens: tokens, sentences_per_s: lines.length / total, target_tokens_per_s: tokens / total,
  arena_bytes: tr.arenaBytes }));
