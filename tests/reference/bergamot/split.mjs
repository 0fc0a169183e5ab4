#!/usr/bin/env node
// Bergamot's sentence split of paragraphs (ssplit-mode paragraph): each stdin line is one
// paragraph, translated with the model given (Bergamot splits only text it translates), and
// written as one JSON line with the byte ranges of its source sentences, which the Response
// holds (size(), getSourceSentence(i) -> {begin, end}, UTF-8 byte offsets into the line):
//
//   node split.mjs --model M.bin --vocab V.spm [--vocab TRG.spm] [--batch N] < paragraphs > spans.jsonl
//   {"spans": [[0, 12], [13, 40]]}
//
// No nonbreaking-prefix file is given (the package ships none), so ssplit knows no
// abbreviations here: it splits after every terminator followed by whitespace and an uppercase
// letter or digit.
import {readFileSync} from 'node:fs';

import {aligned, loadBergamot} from './translate.mjs';

function parseArgs(argv) {
  const a = {vocab: [], batch: 64, model: null};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i].replace(/^--/, '');
    const v = argv[i + 1];
    if (!(k in a) || v === undefined) throw new Error(`unknown or incomplete option ${argv[i]}`);
    if (k === 'vocab') a.vocab.push(v); else a[k] = v;
    i++;
  }
  if (!a.model || a.vocab.length < 1 || a.vocab.length > 2) throw new Error('need --model and one or two --vocab');
  a.batch = parseInt(a.batch, 10);
  if (!(a.batch >= 1)) throw new Error('--batch must be positive');
  return a;
}

function createSplitModel(M, a) {
  const config = [
    'beam-size: 1',
    'normalize: 1.0',
    'word-penalty: 0',
    'max-length-factor: 1',  // the translation is not used: keep it short
    'max-length-break: 1024',
    'mini-batch-words: 4096',
    'workspace: 512',
    'cpu-threads: 0',
    'gemm-precision: float32',
    'skip-cost: true',
    'ssplit-mode: paragraph',
    'quiet: true',
    'quiet-translation: true',
  ].join('\n') + '\n';
  const model = aligned(M, readFileSync(a.model), 256);
  const vocabs = new M.AlignedMemoryList();
  for (const v of a.vocab) vocabs.push_back(aligned(M, readFileSync(v), 64));
  return new M.TranslationModel(config, model, new M.AlignedMemory(0, 64), vocabs, null);
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const input = readFileSync(0, 'utf8').split('\n');
  if (input.length && input[input.length - 1] === '') input.pop();
  const M = await loadBergamot();
  const tm = createSplitModel(M, a);
  const service = new M.BlockingService({cacheSize: 0});
  const lines = [];
  for (let i = 0; i < input.length; i += a.batch) {
    const v = new M.VectorString();
    const opts = new M.VectorResponseOptions();
    for (const text of input.slice(i, i + a.batch)) {
      v.push_back(text);
      opts.push_back({qualityScores: false, alignment: false, html: false});
    }
    const responses = service.translate(tm, v, opts);
    for (let j = 0; j < responses.size(); j++) {
      const r = responses.get(j);
      const spans = [];
      for (let k = 0; k < r.size(); k++) {
        const range = r.getSourceSentence(k);
        spans.push([range.begin, range.end]);
      }
      lines.push(JSON.stringify({spans}));
    }
    responses.delete();
    v.delete();
    opts.delete();
  }
  process.stdout.write(lines.join('\n') + (lines.length ? '\n' : ''));
}

main().catch((e) => {
  process.stderr.write(`split.mjs: ${e && e.message ? e.message : e}\n`);
  process.exit(1);
});
