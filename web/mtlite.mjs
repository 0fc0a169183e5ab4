#!/usr/bin/env node
// mtlite in Node (the WebAssembly module through ./mtlite.js), with the output of the native CLI:
//   node mtlite.mjs translate -m MODEL [-m MODEL2] [--beam N] [--n-best K] [--scores] [--alignments] [TEXT ...] < in > out
//   node mtlite.mjs version
// translate reads lines from stdin (or takes each TEXT argument as one) and writes one translation
// per line in order, as `mtlite translate` does: by default (--split paragraph) a line is a
// paragraph, cut into sentences by the runtime's text layer (Translator.translateText); --split
// sentence / wrapped / none, --html (the whole input is one HTML document). A sentence that fails
// is kept untranslated and reported on stderr with its line number (with --split none: the line's
// output is left empty), and the exit code is 1. -m twice: two models chained through a pivot
// language (de-en, then en-fr: every sentence goes through both), as the native CLI's.
// MTLITE_WASM_SIMD=0 in the environment loads the module without SIMD128.
import { readFile } from 'node:fs/promises';
import { formatFixed6 } from './format.js';
import { Mtlite, MtliteError } from './mtlite.js';

const USAGE = `usage: mtlite.mjs translate -m MODEL [options] [TEXT ...]
       mtlite.mjs version
translate options (as in \`mtlite translate\`):
  -m, --model MODEL          the .mtlite model file; twice: two models chained through a pivot language
                             (de-en, then en-fr)
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
  --split MODE               paragraph (default: a line is a paragraph), sentence (a line is a sentence),
                             wrapped (blank lines separate paragraphs), none (the default with a
                             per-line option: --n-best, --scores, --alignments, --output-ids, --stream)
  --html                     the input is one HTML document: tags, entities and comments kept in place
  --max-length-break N       a sentence of more source tokens is translated in pieces (default 128)
  --max-text-bytes N         UTF-8 bytes of text per call of the text layer (default 65536)
  --sort-window N            lines translated per call of the text layer (default 64 x --batch; one line
                             with --batch 1); the output is the same in any case
  -q, --quiet                no progress line on stderr`;

class UsageError extends Error {}

function parseArgs(argv) {
  const a = { beam: 1, nBest: 1, batch: 1, maxLength: 256, maxSourceTokens: 256, maxInputBytes: 16384,
    maxLengthRatio: 0, maxLengthOffset: 10, lengthPenalty: 1, maxLengthBreak: 128, maxTextBytes: 65536, sortWindow: -1,
    texts: [], given: new Set() };
  const ints = { '--beam': ['beam', 1, 64], '--n-best': ['nBest', 1, 64], '--batch': ['batch', 1, 1024],
    '--max-length': ['maxLength', 1, 65536], '--max-source-tokens': ['maxSourceTokens', 1, 65536],
    '--max-input-bytes': ['maxInputBytes', 1, 1 << 24], '--max-length-offset': ['maxLengthOffset', 0, 65536],
    '--max-length-break': ['maxLengthBreak', 1, 65536], '--max-text-bytes': ['maxTextBytes', 1, 1 << 24],
    '--sort-window': ['sortWindow', 0, 1 << 20] };
  const floats = { '--max-length-ratio': 'maxLengthRatio', '--length-penalty': 'lengthPenalty' };
  const flags = { '--scores': 'scores', '--alignments': 'alignments', '--output-ids': 'outputIds',
    '--shortlist': 'shortlist', '--stream': 'stream', '--verify': 'verify', '-q': 'quiet', '--quiet': 'quiet',
    '--html': 'html' };
  const splits = ['paragraph', 'sentence', 'wrapped', 'none'];
  for (let i = 0; i < argv.length; ++i) {
    let arg = argv[i], value;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    if (eq > 0) [arg, value] = [arg.slice(0, eq), arg.slice(eq + 1)];
    const next = () => {
      if (value !== undefined) return value;
      if (i + 1 >= argv.length) throw new UsageError(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '-m' || arg === '--model') {
      const m = next();
      if (m === '') throw new UsageError(`${arg} must not be empty`);
      if (a.secondModel !== undefined) {
        throw new UsageError(`${arg} is given more than twice (one model, or two chained through a pivot language)`);
      }
      if (a.model === undefined) a.model = m;
      else a.secondModel = m;
    }
    else if (arg === '--split') {
      a.split = next();
      if (!splits.includes(a.split)) throw new UsageError(`--split: '${a.split}' is not one of ${splits.join(', ')}`);
    }
    else if (arg in ints) {
      const [key, lo, hi] = ints[arg];
      const s = next(), v = Number(s);
      if (!/^[+-]?\d+$/.test(s) || v < lo || v > hi) throw new UsageError(`${arg}: '${s}' is not an integer in [${lo}, ${hi}]`);
      a[key] = v;
      a.given.add(key);
    } else if (arg in floats) {
      const s = next(), v = Number(s);
      if (s.trim() === '' || !Number.isFinite(v)) throw new UsageError(`${arg}: '${s}' is not a number`);
      a[floats[arg]] = v;
      a.given.add(floats[arg]);
    } else if (arg in flags && value === undefined) a[flags[arg]] = true;
    else if (arg === '-h' || arg === '--help') throw new UsageError('');
    else if (arg.startsWith('-') && arg !== '-') throw new UsageError(`unknown option ${arg}`);
    else a.texts.push(arg);
  }
  if (!a.model) throw new UsageError('-m/--model is required');
  const perLine = a.nBest > 1 || a.scores || a.alignments || a.outputIds || a.stream;
  if (perLine && ((a.split !== undefined && a.split !== 'none') || a.html)) {
    throw new UsageError(`--split ${a.split ?? 'wrapped'}${a.html ? ' / --html' : ''} cannot be combined with --n-best, ` +
      '--scores, --alignments, --output-ids, --input-ids, --stream or --forced-logits (use --split none)');
  }
  // The split mode (the native CLI's EffectiveSplit): --split, else wrapped with --html, none with a
  // per-line option, paragraph otherwise.
  a.effectiveSplit = a.split ?? (a.html ? 'wrapped' : perLine ? 'none' : 'paragraph');
  a.textMode = a.html || a.effectiveSplit !== 'none';
  // without --beam: checked against the model's beam (applyModelDefaults)
  if (a.given.has('beam') && a.nBest > a.beam) throw new UsageError(`--n-best (${a.nBest}) cannot exceed --beam (${a.beam})`);
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
  // The model (and the pivot chain's second), each checked as the native CLI does, in order.
  const load = async (path) => {
    let m;
    try {
      m = mt.loadModel(await readFile(path), { verify: a.verify });
    } catch (e) {
      const why = e instanceof MtliteError ? e.message : `IO_ERROR: cannot open '${path}': ${e.message}`;
      process.stderr.write(`mtlite translate: ${path}: ${why}\n`);
      return null;
    }
    if (a.shortlist && !m.config.hasShortlist) {
      process.stderr.write(`mtlite translate: ${path} has no shortlist section (add one with \`mtlite shortlist\`)\n`);
      m.dispose();
      return null;
    }
    return m;
  };
  const model = await load(a.model);
  if (!model) return 1;
  const second = a.secondModel === undefined ? undefined : await load(a.secondModel);
  if (second === null) return 1;
  // the options not given: the (first) model's recorded decoding defaults, as the native CLI
  for (const [key, value] of Object.entries(model.decodingDefaults)) if (!a.given.has(key)) a[key] = value;
  if (a.nBest > a.beam) {
    process.stderr.write(`mtlite translate: --n-best (${a.nBest}) cannot exceed the beam (${a.beam}` +
      `${a.given.has('beam') ? '' : ", the model's default; give --beam"})\n`);
    model.dispose();
    if (second) second.dispose();
    return 2;
  }
  const c = model.config;
  // (positions stored: the limits fit the model, and a pivot chain's both models)
  const cap = (v) => [c, ...(second ? [second.config] : [])].reduce(
    (n, k) => (k.positionsStored ? Math.min(n, k.maxPositions) : n), v);
  let tr;
  try {
    tr = model.createTranslator({ maxBatch: a.batch, maxBeam: a.beam, maxNBest: a.nBest, maxTargetTokens: cap(a.maxLength),
      maxSourceTokens: cap(a.maxSourceTokens), maxInputBytes: a.maxInputBytes, alignments: Boolean(a.alignments || a.html),
      maxTextBytes: a.textMode ? a.maxTextBytes : 0, pivot: second });
  } catch (e) {
    process.stderr.write(`mtlite translate: ${e.message}\n`);
    return 1;
  }
  const done = () => {
    tr.dispose();
    model.dispose();
    if (second) second.dispose();
  };
  if (a.textMode) {
    const rc = await textMain(a, tr);
    done();
    return rc;
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
  done();
  return rc;
}

// The number of elements of the sorted array `a` that are <= v.
function upperBound(a, v) {
  let lo = 0, hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const isBlank = (line) => line.every((c) => c === 32 || c === 9 || c === 13);
const NEWLINE = Buffer.from('\n');

// The text layer's path, as the native CLI's (runtime/cli/translate_cmd.cc, TextRunner): lines
// (--split paragraph / sentence) in windows of whole lines (--sort-window lines, default 64 x
// --batch, one with --batch 1; --max-text-bytes at most) joined by '\n' into one text; blocks of lines that end at a blank line once half of
// --max-text-bytes is reached (--split wrapped); or the whole input (--html). A sentence that fails
// is kept untranslated and reported with its line number; a window whose call fails as a whole (or
// whose translation holds another number of line breaks) is translated again line by line.
async function textMain(a, tr) {
  const options = { beam: a.beam, maxLength: tr.limits.maxTargetTokens, maxLengthRatio: a.maxLengthRatio,
    maxLengthOffset: a.maxLengthOffset, lengthPenalty: a.lengthPenalty, shortlist: a.shortlist,
    split: a.effectiveSplit, html: a.html, maxLengthBreak: a.maxLengthBreak, textBytes: true };
  const wrapped = a.effectiveSplit === 'wrapped';
  let rc = 0, firstLine = 0, linesDone = 0;
  const t0 = performance.now();
  const attempt = (bytes) => {
    try {
      return [tr.translateText(bytes, options), null];
    } catch (e) {
      if (!(e instanceof MtliteError)) throw e;
      return [null, e];
    }
  };
  // The failed sentences of r, each with its input line (lineOf: of a UTF-8 byte offset).
  const report = (r, lineOf) => {
    if (!r.failed) return;
    rc = 1;
    let first = true;
    for (const sentence of r.sentences) {
      if (!sentence.error) continue;
      process.stderr.write(`mtlite translate: line ${lineOf(sentence.bytes.sourceStart)}: ${sentence.error.code}: ` +
        `a sentence was kept untranslated${first ? ` (${r.firstError.reason})` : ''}\n`);
      first = false;
    }
  };
  const progress = () => {
    if (!a.quiet && linesDone >= 200) {
      const secs = (performance.now() - t0) / 1000;
      process.stderr.write(`mtlite: ${linesDone} lines (${(linesDone / Math.max(secs, 1e-9)).toFixed(1)} lines/s)\n`);
    }
  };

  if (a.html) { // the whole input is one document
    let text;
    if (a.texts.length) text = Buffer.from(a.texts.join('\n'));
    else {
      const chunks = [];
      let size = 0;
      for await (const chunk of process.stdin) {
        chunks.push(chunk);
        size += chunk.length;
        if (size > a.maxTextBytes) break;
      }
      text = Buffer.concat(chunks);
    }
    if (text.length > a.maxTextBytes) {
      process.stderr.write(`mtlite translate: the input is more than --max-text-bytes ${a.maxTextBytes} bytes (raise it)\n`);
      return 1;
    }
    const starts = [0];
    for (let i = text.indexOf(10); i >= 0; i = text.indexOf(10, i + 1)) starts.push(i + 1);
    const [r, e] = attempt(text);
    if (!r) {
      process.stderr.write(`mtlite translate: ${e.code}: ${e.reason}\n`);
      return 1;
    }
    report(r, (pos) => upperBound(starts, pos));
    process.stdout.write(r.textBytes);
    if (a.texts.length && (r.textBytes.length === 0 || r.textBytes[r.textBytes.length - 1] !== 10)) {
      process.stdout.write(NEWLINE);
    }
    linesDone = starts.length;
    progress();
    return rc;
  }

  const input = inputLines(a.texts)[Symbol.asyncIterator]();
  const nextLine = async () => {
    const { value, done } = await input.next();
    return done ? null : value;
  };
  const maxText = a.maxTextBytes;
  // (the native CLI's SortWindowLines: --sort-window, default 64 x --batch; one line with --batch 1)
  const maxLines = wrapped ? Infinity : a.batch <= 1 ? 1 : a.sortWindow < 0 ? 64 * a.batch : Math.max(a.sortWindow, 1);
  // Translates the window's n lines (joined into text) and writes n output lines.
  const windowOut = (lines, text, starts) => {
    const n = lines.length;
    const [r] = attempt(text);
    if (r) {
      let breaks = 0;
      for (const c of r.textBytes) if (c === 10) ++breaks;
      if (breaks === n - 1) {
        report(r, (pos) => firstLine + upperBound(starts, pos));
        process.stdout.write(r.textBytes);
        process.stdout.write(NEWLINE);
        firstLine += n;
        linesDone += n;
        return;
      }
    }
    for (const line of lines) { // line by line
      const [ri, e] = attempt(line);
      let o;
      if (ri) {
        report(ri, () => firstLine + 1);
        o = Buffer.from(ri.textBytes);
        if (!wrapped) for (let i = 0; i < o.length; ++i) if (o[i] === 10) o[i] = 32;
      } else {
        process.stderr.write(`mtlite translate: line ${firstLine + 1}: ${e.code}: ${e.reason} (kept untranslated)\n`);
        rc = 1;
        o = line;
      }
      process.stdout.write(o);
      process.stdout.write(NEWLINE);
      ++firstLine;
      ++linesDone;
    }
  };
  let line = await nextLine();
  while (line !== null) {
    const lines = [], starts = [];
    let size = 0;
    while (line !== null) {
      const n = lines.length;
      if (n && (size + 1 + line.length > maxText || n >= maxLines)) break; // the next window's
      starts.push(n ? size + 1 : 0);
      size += (n ? 1 : 0) + line.length;
      lines.push(line);
      const blank = isBlank(line);
      line = await nextLine();
      if (wrapped && blank && size >= maxText / 2) break;
    }
    const parts = [];
    lines.forEach((l, i) => parts.push(...(i ? [NEWLINE, l] : [l])));
    windowOut(lines, Buffer.concat(parts, size), starts);
  }
  progress();
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
