// What bench/wasm_bench.mjs and bench/wasm/bergamot_bench.mjs share: the timed passes over the
// input and the process's figures.
import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Translates lines in calls of batch lines, repeat times (translate(chunk, pass) returns one text
 * per line). Returns { runs (s of translate calls per pass), cpuRuns (process CPU s per pass), total
 * (median of runs), texts (of the last pass) }.
 */
export function timePasses(lines, batch, repeat, translate) {
  const runs = [], cpuRuns = [];
  let texts = [];
  for (let r = 0; r < repeat; ++r) {
    let total = 0;
    texts = [];
    const c0 = process.cpuUsage();
    for (let i = 0; i < lines.length; i += batch) {
      const t0 = performance.now();
      const out = translate(lines.slice(i, i + batch), r);
      total += performance.now() - t0;
      texts.push(...out);
    }
    const c = process.cpuUsage(c0);
    cpuRuns.push((c.user + c.system) / 1e6);
    runs.push(total / 1000);
  }
  const sorted = [...runs].sort((a, b) => a - b);
  return { runs, cpuRuns, total: sorted[Math.floor(sorted.length / 2)], texts };
}

/** Writes texts one a line to path (when given). */
export function writeLines(path, texts) {
  if (path) writeFileSync(path, texts.map((x) => x.replace(/\n/g, ' ') + '\n').join(''));
}

/** The process's peak RSS in KiB (VmHWM; null where /proc is missing). */
export function vmHwmKb() {
  try {
    return Number(/VmHWM:\s*(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
  } catch {
    return null;
  }
}
