#!/usr/bin/env bash
# The WebAssembly build and its tests (docs/wasm.md), against the host build's CLI and demo model:
#   1. scripts/wasm_build.sh: the modules (SIMD128 and without) and the kernel test program;
#   2. the kernel tests of tests/unit under node: every kernel of the "wasm-simd128" table against
#      the scalar reference, bit for bit (tile edges and tails included);
#   3. the JavaScript API (tests/wasm/api_test.mjs) and its edges (tests/wasm/js_defects_test.mjs:
#      bad models' reasons, calls from onToken, wrong arguments, defaults), the text layer and
#      tokenize (tests/wasm/text_test.mjs), AsyncTranslator in worker_threads (tests/wasm/async_test.mjs),
#      a model's recorded decoding defaults (tests/wasm/decoding_defaults_test.mjs),
#      two models chained through a pivot language (tests/wasm/pivot_test.mjs: the demo model, then
#      the demo converted again as de-xx) with both modules, its
#      TypeScript declarations (tsc, Debian node-typescript), the CLI's number format
#      (tests/wasm/format_test.mjs);
#   4. `node web/mtlite.mjs translate` against the native `mtlite translate`, byte for byte (stdout,
#      stderr, exit code): dev sentences greedy with --scores and beam 4 with --n-best 4 --scores,
#      batches with alignments, streaming, the module without SIMD128, and the bad input lines of
#      tests/unit/host/cli_bad_input_test.cc (tests/wasm/bad_input.mjs) with several batch sizes, and the
#      text layer (--split paragraph / sentence / wrapped, --html, --max-length-break,
#      --max-text-bytes) on tests/wasm/data/ and the page's sample article, and a pivot chain
#      (-m MODEL -m SECOND: greedy, beam with n-best, alignments, streaming, paragraphs, --html,
#      languages that do not meet);
#   5. the page (web/page/) in headless Chromium (tests/wasm/page_test.mjs): the demo model, 20
#      sentences translated in its Web Worker equal to the native CLI's, token by token; a
#      screenshot in build-wasm/test/page.png; its text and HTML modes in Chromium and Firefox
#      (puppeteer-core from tests/wasm/node_modules): paragraphs, an HTML snippet and the sample
#      page equal to the native CLI's (paragraph mode, --html); a screenshot in
#      build-wasm/test/page_text.png (docs/images/page_text.png is one);
#   6. `npm pack --dry-run`: the package holds the API, its declarations, the worker, the CLI and both modules.
# Environment: MTLITE_HOST_BUILD (default build; needs mtlite and models/demo.int8.mtlite),
# MTLITE_WASM_LINES (dev sentences, default 300: half multi30k, half tatoeba), MTLITE_WASM_PAGE=0
# (skip the page; CHROMIUM: the browser, default chromium; MTLITE_WASM_FIREFOX=0 skips Firefox,
# FIREFOX: its command, default firefox-esr), JOBS.
set -euo pipefail
cd "$(dirname "$0")/.."
HOST=$(realpath -m "${MTLITE_HOST_BUILD:-build}")
LINES=${MTLITE_WASM_LINES:-300}
MODEL=$HOST/models/demo.int8.mtlite
WORK=build-wasm/test
say() { echo "wasm_test: $*"; }
die() { echo "wasm_test: FAIL: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
T0=$(now)
[ -x "$HOST/mtlite" ] && [ -f "$MODEL" ] || die "no host build in $HOST (mtlite, models/demo.int8.mtlite): build it first"

t=$(now)
bash scripts/wasm_build.sh
say "build done ($(since "$t") s)"
rm -rf "$WORK" && mkdir -p "$WORK"

t=$(now)
node tests/wasm/run_wasi.mjs build-wasm/mtlite_wasm_kernel_test.wasm > "$WORK/kernels.log" || {
  grep -v '^\[ ' "$WORK/kernels.log" >&2; die "kernel tests"; }
grep -q 'kernel tables: reference wasm-simd128 ' "$WORK/kernels.log" || die "the wasm-simd128 table was not tested"
say "kernel tests: $(tail -1 "$WORK/kernels.log") ($(since "$t") s)"

# the second model of a pivot chain: the demo again, as if it translated from German ("de-xx": it
# runs on the first's German output)
SECOND=$WORK/second.int8.mtlite
"$HOST/mtlite" convert models/marian-en-de-tiny --source-lang de --target-lang xx -o "$SECOND" > /dev/null ||
  die "convert the pivot chain's second model"

t=$(now)
node tests/wasm/api_test.mjs "$MODEL" || die "JavaScript API (SIMD128 module)"
node tests/wasm/api_test.mjs "$MODEL" --simd=0 || die "JavaScript API (module without SIMD128)"
node tests/wasm/js_defects_test.mjs "$MODEL" || die "JavaScript API edges (SIMD128 module)"
node tests/wasm/js_defects_test.mjs "$MODEL" --simd=0 || die "JavaScript API edges (module without SIMD128)"
node tests/wasm/text_test.mjs "$MODEL" || die "the text layer and tokenize (SIMD128 module)"
node tests/wasm/text_test.mjs "$MODEL" --simd=0 || die "the text layer and tokenize (module without SIMD128)"
node tests/wasm/async_test.mjs "$MODEL" || die "AsyncTranslator in worker_threads (SIMD128 module)"
node tests/wasm/async_test.mjs "$MODEL" --simd=0 || die "AsyncTranslator in worker_threads (module without SIMD128)"
node tests/wasm/pivot_test.mjs "$MODEL" "$SECOND" || die "a pivot chain (SIMD128 module)"
# a model with recorded decoding defaults (the Marian fixture as a release folder with a decoder.yml)
REL=$WORK/release && mkdir -p "$REL"
cp tests/data/marian/untied.npz "$REL/opus.model1.npz" && cp tests/data/marian/vocab.yml "$REL/opus.vocab.yml"
cp models/marian-en-de-tiny/source.spm "$REL/source.spm" && cp models/marian-en-de-tiny/source.spm "$REL/target.spm"
printf 'beam-size: 3\nnormalize: 0.6\nmax-length-factor: 2\n' > "$REL/decoder.yml"
"$HOST/mtlite" convert "$REL" -o "$WORK/defaults.mtlite" -q && \
  "$HOST/mtlite" convert "$REL" -o "$WORK/no-defaults.mtlite" -q --decoding-defaults none ||
  die "convert the decoding-defaults models"
node tests/wasm/decoding_defaults_test.mjs "$WORK/defaults.mtlite" "$WORK/no-defaults.mtlite" ||
  die "decoding defaults (SIMD128 module)"
printf 'a b c d e f\ng a g a\nf e d c b a g\n' > "$WORK/defaults.in"
for flags in "" "--beam 1"; do  # node's translate takes the model's defaults as the native one does
  cmp <(node web/mtlite.mjs translate -q -m "$WORK/defaults.mtlite" --split none --scores $flags < "$WORK/defaults.in") \
      <("$HOST/mtlite" translate -q -m "$WORK/defaults.mtlite" --split none --scores $flags < "$WORK/defaults.in") ||
    die "node web/mtlite.mjs translate with a model's decoding defaults ($flags) differs from mtlite translate"
done
node tests/wasm/pivot_test.mjs "$MODEL" "$SECOND" --simd=0 || die "a pivot chain (module without SIMD128)"
node tests/wasm/format_test.mjs || die "number format"
if command -v tsc >/dev/null; then
  tsc --noEmit --strict --target es2020 --module es2020 --moduleResolution node tests/wasm/types_test.ts ||
    die "TypeScript declarations (web/mtlite.d.ts)"
  say "TypeScript declarations compile"
else
  say "tsc missing (apt-get install node-typescript): web/mtlite.d.ts NOT checked"
fi
say "API tests done ($(since "$t") s)"

# compare <name> <input> [flags...]: native and WebAssembly CLI, stdout, stderr and exit code
# (PIVOT=<second model>: the chain -m MODEL -m PIVOT)
compare() {
  local name=$1 input=$2
  shift 2
  local rn=0 rw=0 models=(-m "$MODEL")
  [ -z "${PIVOT:-}" ] || models+=(-m "$PIVOT")
  "$HOST/mtlite" translate "${models[@]}" -q "$@" < "$input" > "$WORK/$name.native.out" 2> "$WORK/$name.native.err" || rn=$?
  node web/mtlite.mjs translate "${models[@]}" -q "$@" < "$input" > "$WORK/$name.wasm.out" 2> "$WORK/$name.wasm.err" || rw=$?
  [ "$rn" = "$rw" ] || die "$name: exit code $rw, native $rn"
  cmp "$WORK/$name.native.out" "$WORK/$name.wasm.out" || die "$name: stdout differs from the native CLI's ($WORK)"
  cmp "$WORK/$name.native.err" "$WORK/$name.wasm.err" || die "$name: stderr differs from the native CLI's ($WORK)"
  say "  $name: $(wc -l < "$WORK/$name.native.out") output lines, $(wc -l < "$WORK/$name.native.err") error lines, exit $rn: same"
}
t=$(now)
head -n $((LINES / 2)) tests/data/dev/multi30k.val.en > "$WORK/dev.en"
head -n $((LINES - LINES / 2)) tests/data/dev/tatoeba.dev.en >> "$WORK/dev.en"
head -n 40 "$WORK/dev.en" > "$WORK/dev40.en"
node tests/wasm/bad_input.mjs > "$WORK/bad.txt"
compare greedy "$WORK/dev.en" --scores
compare beam4-nbest "$WORK/dev.en" --beam 4 --n-best 4 --scores
compare batch-alignments "$WORK/dev40.en" --batch 7 --beam 2 --alignments
compare stream "$WORK/dev40.en" --stream --beam 3
MTLITE_WASM_SIMD=0 compare nosimd-greedy "$WORK/dev40.en" --scores
# Marian's search (the demo converted with --semantics marian) with Marian's length cap
"$HOST/mtlite" convert models/marian-en-de-tiny --semantics marian -o "$WORK/marian.int8.mtlite" > /dev/null ||
  die "convert --semantics marian"
MODEL="$WORK/marian.int8.mtlite" compare marian-beam4 "$WORK/dev.en" --beam 4 --n-best 2 --length-penalty 0.6 \
  --max-length-ratio 3 --max-length-offset 1
compare bad-input "$WORK/bad.txt"
compare bad-input-batch "$WORK/bad.txt" --batch 4
compare bad-input-beam "$WORK/bad.txt" --batch 16 --beam 2
compare bad-input-bytes "$WORK/bad.txt" --max-input-bytes 2000000
compare bad-input-wrapped "$WORK/bad.txt" --split wrapped --batch 3
# the text layer (Translator.translateText): paragraphs of several sentences (abbreviations,
# numbers, quotes), windows of lines, pieces at --max-length-break, --max-text-bytes per line
# (lines over it kept untranslated), soft line breaks and blank lines (--split wrapped), HTML
compare paragraphs tests/wasm/data/paragraphs.en
compare paragraphs-batch tests/wasm/data/paragraphs.en --batch 4 --beam 2
compare paragraphs-break tests/wasm/data/paragraphs.en --max-length-break 5 --batch 2
compare paragraphs-text-bytes tests/wasm/data/paragraphs.en --max-text-bytes 100 --batch 4
compare paragraph-dev "$WORK/dev.en" --batch 8
compare sentence-dev "$WORK/dev40.en" --split sentence --batch 3
compare wrapped tests/wasm/data/wrapped.en --split wrapped
compare wrapped-text-bytes tests/wasm/data/wrapped.en --split wrapped --max-text-bytes 60 --batch 2
compare html tests/wasm/data/snippet.html --html
compare html-beam tests/wasm/data/snippet.html --html --beam 2 --batch 8
compare html-text-bytes tests/wasm/data/snippet.html --html --max-text-bytes 200
compare html-sample web/page/sample.html --html --batch 8
# two models chained through a pivot language (the int8 demo, then the demo as de-xx)
PIVOT=$SECOND compare pivot-greedy "$WORK/dev.en" --scores
PIVOT=$SECOND compare pivot-beam4-nbest "$WORK/dev40.en" --beam 4 --n-best 2 --scores --max-length-ratio 3 --max-length-offset 1
PIVOT=$SECOND compare pivot-batch-alignments "$WORK/dev40.en" --batch 7 --beam 2 --alignments
PIVOT=$SECOND compare pivot-stream "$WORK/dev40.en" --stream --beam 2
PIVOT=$SECOND compare pivot-paragraphs tests/wasm/data/paragraphs.en --batch 4
PIVOT=$SECOND compare pivot-html tests/wasm/data/snippet.html --html
PIVOT=$SECOND MTLITE_WASM_SIMD=0 compare pivot-nosimd "$WORK/dev40.en" --batch 3
PIVOT=$MODEL compare pivot-languages "$WORK/dev40.en"
say "CLI equal to the native one ($(since "$t") s)"

t=$(now)
if [ "${MTLITE_WASM_PAGE:-1}" = 0 ]; then
  say "MTLITE_WASM_PAGE=0: the page is NOT tested in Chromium"
else
  command -v "${CHROMIUM:-chromium}" >/dev/null ||
    die "chromium missing (apt-get install chromium; scripts/setup.sh does), or MTLITE_WASM_PAGE=0 to skip the page"
  tail -n 20 "$WORK/dev.en" > "$WORK/page.en"
  "$HOST/mtlite" translate -m "$MODEL" -q < "$WORK/page.en" > "$WORK/page.native"
  "$HOST/mtlite" translate -m "$MODEL" -q < tests/wasm/data/paragraphs.en > "$WORK/page-paragraphs.native"
  "$HOST/mtlite" translate -m "$MODEL" -q --html < tests/wasm/data/snippet.html > "$WORK/page-snippet.native"
  "$HOST/mtlite" translate -m "$MODEL" -q --html < web/page/sample.html > "$WORK/page-sample.native"
  [ -d tests/wasm/node_modules/puppeteer-core ] || [ "${MTLITE_WASM_FIREFOX:-1}" = 0 ] ||
    die "tests/wasm/node_modules missing (cd tests/wasm && npm ci; scripts/setup.sh does), or MTLITE_WASM_FIREFOX=0"
  node tests/wasm/page_test.mjs "$WORK/page.en" "$WORK/page.native" "$WORK/page.png" 1 \
    tests/wasm/data/paragraphs.en "$WORK/page-paragraphs.native" tests/wasm/data/snippet.html "$WORK/page-snippet.native" \
    "$WORK/page-sample.native" "$WORK/page_text.png" || die "the page in Chromium / Firefox"
  say "page in headless Chromium and Firefox ($(since "$t") s)"
fi

t=$(now)
(cd web && npm pack --dry-run --offline --json 2>/dev/null) > "$WORK/pack.json"
for f in mtlite.js mtlite.d.ts mtlite.mjs wasi.js worker.js format.js README.md dist/mtlite.wasm dist/mtlite-nosimd.wasm; do
  grep -q "\"path\": \"$f\"" "$WORK/pack.json" || die "npm pack: $f is not in the package"
done
say "npm pack: $(grep -c '"path"' "$WORK/pack.json") files ($(since "$t") s)"
say "all passed ($(since "$T0") s)"
