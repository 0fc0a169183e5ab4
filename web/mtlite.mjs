#!/usr/bin/env node
// mtlite in Node (the WebAssembly module through ./mtlite.js), with the output of the native CLI:
//   node mtlite.mjs translate -m MODEL [--beam N] [--n-best K] [--scores] [--alignments] [TEXT ...] < in > out
//   node mtlite.mjs version
// translate reads one sentence per line from stdin (or takes each TEXT argument as one) and writes
// one translation per line in order, formatted as `mtlite translate` does; a line that fails is
// reported on stderr with its line number (its output line is left empty) and the exit code is 1.
// MTLITE_WASM_SIMD=0 in the environment loads the module without SIMD128.
import { readFile } from 'node:fs/promises';
import { formatFixed6 } from './format.js';
import { Mtlite, MtliteError } from './mtlite.js';

const USAGE = `usage: mtlite.mjs translate -m MODEL [options] [TEXT ...]
       mtlite.mjs version
translate options (as in \`mtlite translate\`):
  -m, --model MODEL          the .mtlite model file
  --beam N                   beam size; 1 = greedy (1..64, default 1)
  --n-best N                 hypotheses per sentence, at most --beam; Moses n-best lines when > 1
  --batch N                  sentences per translate call (1..1024, default 1)
  --max-length N             generated tokens per sentence, including </s> (default 256)
  --max-source-tokens N      source tokens per sentence, including </s> (default 256)
  --max-input-bytes N        UTF-8 bytes per input line (default 16384)
  --max-length-ratio F       if > 0, also cap the output at F x source tokens + --max-length-offset
  --max-length-offset N      added to the --max-length-ratio cap (0..65536, default 10)
  --length-penalty F         beam score = log-probability / length^F (default 1)
  --scores                   append ' ||| ' and the length-penalised log-probability
  --alignments               append ' |||' and src-tgt pairs (argmax of the cross-attention)
  --output-ids               print target ids instead of text
  --shortlist                restrict the output vocabulary (the model's shortlist section)
  --stream                   partial translations as lines starting with a tab, before the final line
  --verify                   check every checksum of the model at load
  -q, --quiet                no progress line on stderr`;

class UsageError extends Error {}

function parseArgs(argv) {
  const a = { beam: 1, nBest: 1, batch: 1, maxLength: 256, maxSourceTokens: 256, maxInputBytes: 16384,
    maxLengthRatio: 0, maxLengthOffset: 10, lengthPenalty: 1, texts: [] };
  const ints = { '--beam': ['beam', 1, 64], '--n-best': ['nBest', 1, 64], '--batch': ['batch', 1, 1024],
    '--max-length': ['maxLength', 1, 65536], '--max-source-tokens': ['maxSourceTokens', 1, 65536],
    '--max-input-bytes': ['maxInputBytes', 1, 1 << 24], '--max-length-offset': ['maxLengthOffset', 0, 65536] };
  const floats = { '--max-length-ratio': 'maxLengthRatio', '--length-penalty': 'lengthPenalty' };
  const flags = { '--scores': 'scores', '--alignments': 'alignments', '--output-ids': 'outputIds',
    '--shortlist': 'shortlist', '--stream': 'stream', '--verify': 'verify', '-q': 'quiet', '--quiet': 'quiet' };
  for (let i = 0; i < argv.length; ++i) {
    let arg = argv[i], value;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    if (eq > 0) [arg, value] = [arg.slice(0, eq), arg.slice(eq + 1)];
    const next = () => {
      if (value !== undefined) return value;
      if (i + 1 >= argv.length) throw new UsageError(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '-m' || arg === '--model') a.model = next();
    else if (arg in ints) {
      const [key, lo, hi] = ints[arg];
      const s = next(), v = Number(s);
      if (!/^[+-]?\d+$/.test(s) || v < lo || v > hi) throw new UsageError(`${arg}: '${s}' is not an integer in [${lo}, ${hi}]`);
      a[key] = v;
    } else if (arg in floats) {
      const s = next(), v = Number(s);
      if (s.trim() === '' || !Number.isFinite(v)) throw new UsageError(`${arg}: '${s}' is not a number`);
      a[floats[arg]] = v;
    } else if (arg in flags && value === undefined) a[flags[arg]] = true;
    else if (arg === '-h' || arg === '--help') throw new UsageError('');
    else if (arg.startsWith('-') && arg !== '-') throw new UsageError(`unknown option ${arg}`);
    else a.texts.push(arg);
  }
  if (!a.model) throw new UsageError('-m/--model is required');
  if (a.nBest > a.beam) throw new UsageError(`--n-best (${a.nBest}) cannot exceed --beam (${a.beam})`);
  return a;
}

function hypothesisLine(a, h, lineIndex) {
  let s = a.nBest > 1 ? `${lineIndex} ||| ` : '';
  s += a.outputIds ? Array.from(h.ids).join(' ') : h.text;
  if (a.scores || a.nBest > 1) s += ` ||| ${formatFixed6(h.score)}`;
  if (a.alignments && h.alignment) {
    s += ' |||';
    for (let t = 0; t < h.ids.length; ++t) {
      const row = h.alignment.subarray(t * h.sourceTokens, (t + 1) * h.sourceTokens);
      let best = 0;
      for (let j = 1; j < h.sourceTokens; ++j) if (row[j] > row[best]) best = j;
      s += ` ${best}-${t}`;
    }
  }
  return Buffer.from(s + '\n');
}

// The input lines as bytes: the TEXT arguments, or stdin split at '\n' (one '\r' before it
// dropped; a last line without '\n' counts), yielded as they arrive.
async function* inputLines(texts) {
  if (texts.length) {
    for (const t of texts) yield Buffer.from(t);
    return;
  }
  let rest = Buffer.alloc(0);
  for await (const chunk of process.stdin) {
    let buf = rest.length ? Buffer.concat([rest, chunk]) : chunk;
    let start = 0, nl;
    while ((nl = buf.indexOf(10, start)) >= 0) {
      let end = nl;
      if (end > start && buf[end - 1] === 13) --end;
      yield buf.subarray(start, end);
      start = nl + 1;
    }
    rest = Buffer.from(buf.subarray(start));
  }
  if (rest.length) yield rest[rest.length - 1] === 13 ? rest.subarray(0, rest.length - 1) : rest;
}

async function translateMain(argv) {
  const a = parseArgs(argv);
  const mt = await Mtlite.load({ simd: process.env.MTLITE_WASM_SIMD === '0' ? false : undefined });
  let model;
  try {
    model = mt.loadModel(await readFile(a.model), { verify: a.verify });
  } catch (e) {
    const why = e instanceof MtliteError ? e.message : `IO_ERROR: cannot open '${a.model}': ${e.message}`;
    process.stderr.write(`mtlite translate: ${a.model}: ${why}\n`);
    return 1;
  }
  const c = model.config;
  if (a.shortlist && !c.hasShortlist) {
    process.stderr.write(`mtlite translate: ${a.model} has no shortlist section (add one with \`mtlite shortlist\`)\n`);
    return 1;
  }
  const cap = (v) => (c.positionsStored ? Math.min(v, c.maxPositions) : v);
  let tr;
  try {
    tr = model.createTranslator({ maxBatch: a.batch, maxBeam: a.beam, maxNBest: a.nBest, maxTargetTokens: cap(a.maxLength),
      maxSourceTokens: cap(a.maxSourceTokens), maxInputBytes: a.maxInputBytes, alignments: Boolean(a.alignments) });
  } catch (e) {
    process.stderr.write(`mtlite translate: ${e.message}\n`);
    return 1;
  }
  const tty = process.stdout.isTTY === true;
  let drawn = false;
  const options = { beam: a.beam, nBest: a.nBest, maxLength: tr.limits.maxTargetTokens, maxLengthRatio: a.maxLengthRatio,
    maxLengthOffset: a.maxLengthOffset, lengthPenalty: a.lengthPenalty, scores: a.scores, alignments: a.alignments,
    shortlist: a.shortlist };
  if (a.stream) {
    options.onToken = (e) => {
      if (e.final) return;
      const line = a.outputIds ? Array.from(e.ids).join(' ') : e.text;
      if (tty) {
        process.stdout.write(`\r\x1b[K${line}`);
        drawn = true;
      } else process.stdout.write(`\t${line}\n`);
    };
  }
  const perCall = a.stream ? 1 : a.batch;
  let rc = 0, first = 0, shownAt = -1, progress = false;
  const t0 = performance.now();
  const run = (lines) => {
    const outs = [], errs = [];
    let res = null, err = null;
    try {
      res = tr.translate(lines, options);
    } catch (e) {
      if (!(e instanceof MtliteError)) throw e;
      err = e;
    }
    if (drawn) process.stdout.write('\r\x1b[K');
    drawn = false;
    lines.forEach((line, j) => {
      let r = res && res[j], e = err;
      if (!r && lines.length > 1) { // retry alone, to name the line
        try {
          r = tr.translate([line], options)[0];
        } catch (e1) {
          if (!(e1 instanceof MtliteError)) throw e1;
          e = e1;
        }
      }
      if (r) {
        outs.push(Buffer.concat(r.hypotheses.map((h) => hypothesisLine(a, h, first + j))));
        errs.push('');
      } else {
        const msg = e.reason.startsWith('sentence 0: ') ? e.reason.slice(12) : e.reason;
        errs.push(`mtlite translate: line ${first + j + 1}: ${e.code}: ${msg}\n`);
        outs.push(Buffer.from('\n'));
        rc = 1;
      }
    });
    for (let j = 0; j < lines.length; ++j) {
      if (errs[j]) process.stderr.write(errs[j]);
      process.stdout.write(outs[j]);
    }
    first += lines.length;
    const secs = (performance.now() - t0) / 1000;
    if (!a.quiet && !a.stream && first >= 200 && secs >= shownAt + 0.25) {
      process.stderr.write(`\rmtlite: ${first} lines (${(first / Math.max(secs, 1e-9)).toFixed(1)} lines/s)`);
      progress = true;
      shownAt = secs;
    }
  };
  let pending = [];
  for await (const line of inputLines(a.texts)) {
    pending.push(line);
    if (pending.length === perCall) {
      run(pending);
      pending = [];
    }
  }
  if (pending.length) run(pending);
  if (progress) {
    const secs = (performance.now() - t0) / 1000;
    process.stderr.write(`\rmtlite: ${first} lines (${(first / Math.max(secs, 1e-9)).toFixed(1)} lines/s)\n`);
  }
  tr.dispose();
  model.dispose();
  return rc;
}

async function main(argv) {
  const [command, ...rest] = argv;
  if (command === 'version') {
    const mt = await Mtlite.load({ simd: process.env.MTLITE_WASM_SIMD === '0' ? false : undefined });
    process.stdout.write(`mtlite ${mt.version} (WebAssembly, kernel table ${mt.kernelTable})\n`);
    return 0;
  }
  if (command !== 'translate') {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  try {
    return await translateMain(rest);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(e.message ? `mtlite translate: ${e.message}\n${USAGE}\n` : `${USAGE}\n`);
    return e.message ? 2 : 0;
  }
}

process.exitCode = await main(process.argv.slice(2));
