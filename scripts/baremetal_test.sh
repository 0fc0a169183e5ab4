#!/usr/bin/env bash
# Builds examples/baremetal (the translator with the model embedded, no OS, no heap while
# translating) for a bare-metal Cortex-M target, runs it under qemu-system-arm and checks it:
#   1. the link fails, naming the region and the bytes, when the model does not fit its region
#      (the demo model forced into a region smaller than it: QSPI on mps3-an547, SSRAM1 on
#      mps2-an500);
#   2. configure + build build-<target> (toolchain platforms/<target>.cmake, the minimal runtime,
#      the model embedded by the host's `mtlite embed --section .flash_model`, the arena sized by
#      the host's `mtlite info --limits ... --header`);
#   3. the ELF: no C library stdio, environment, threads, mmap or exceptions; malloc's only memory
#      is the board's 64 KB error-message heap (_sbrk of platforms/baremetal/startup.c);
#   4. `mtlite info --limits ... --board <board>`: every part fits, and the model's region is the
#      one the build chose;
#   5. the lines translated on the target, greedy and beam 2: every line identical to the host CLI
#      (`mtlite translate --split none`, same model and max length); the run used no heap at all,
#      the arena and model tables it needs on this target (32-bit) are within the host-made budget,
#      the stack within the board's; the greedy translations are printed on stdout;
#   6. an error (a line over the source-token limit): reported on stderr, exit status 1, the next
#      line translated, no fault;
#   7. the sizes: code and constants without the model, the model, RAM (arena + tables), stack.
#
#   bash scripts/baremetal_test.sh [cortex-m55|cortex-m7] [MODEL.mtlite [LINES.txt]]
# MODEL default: the host build's demo.int8.mtlite; LINES default: the first 30 lines of
# tests/data/dev/multi30k.val.en (MTLITE_BAREMETAL_LINES=N: another count of them).
# Environment: JOBS (2), MTLITE_HOST_BUILD (build: its mtlite and models/ are read, never
# written), MTLITE_HOST_CLI (default $MTLITE_HOST_BUILD/mtlite), MTLITE_BAREMETAL_LIMITS
# (1,64,64,2), MTLITE_BAREMETAL_BUILD (build-<target>), MTLITE_BAREMETAL_TIMEOUT (qemu seconds
# per run, 900).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD

target=${1:-cortex-m55}
case "$target" in
  cortex-m55) board=mps3-an547; small_region=QSPI ;;
  cortex-m7)  board=mps2-an500; small_region=SSRAM1 ;;
  *) echo "usage: $0 [cortex-m55|cortex-m7] [MODEL.mtlite [LINES.txt]]" >&2; exit 2 ;;
esac
JOBS=${JOBS:-2}
HOST=$(realpath -m "${MTLITE_HOST_BUILD:-build}")
CLI=$(realpath -m "${MTLITE_HOST_CLI:-$HOST/mtlite}")
DEMO=$HOST/models/demo.int8.mtlite
MODEL=$(realpath -m "${2:-$DEMO}")
LIMITS=${MTLITE_BAREMETAL_LIMITS:-1,64,64,2}
OUT=$(realpath -m "${MTLITE_BAREMETAL_BUILD:-build-$target}")
TIMEOUT=${MTLITE_BAREMETAL_TIMEOUT:-900}
WORK=$OUT/check
IFS=, read -r _ _ MAXLEN BEAM <<< "$LIMITS"

say() { echo "baremetal_test[$target]: $*" >&2; }
die() { echo "baremetal_test[$target]: FAIL: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
T0=$(now)

for tool in arm-none-eabi-gcc arm-none-eabi-nm arm-none-eabi-size qemu-system-arm; do
  command -v "$tool" >/dev/null || die "$tool missing (apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm; scripts/setup.sh does)"
done
[ -x "$CLI" ] || die "no host mtlite at $CLI: build the host tree first (cmake --build build --target mtlite_cli demo_models)"
[ -f "$MODEL" ] || die "no model $MODEL (the demo model: cmake --build build --target demo_models)"
[ "$BEAM" -ge 2 ] || die "MTLITE_BAREMETAL_LIMITS=$LIMITS: the beam limit must be at least 2 (the check runs beam 2)"
mkdir -p "$WORK"
if [ -n "${3:-}" ]; then
  [ -f "$3" ] || die "no lines file $3"
  cp "$3" "$WORK/lines.txt"
else
  head -n "${MTLITE_BAREMETAL_LINES:-30}" tests/data/dev/multi30k.val.en > "$WORK/lines.txt"
fi
NLINES=$(wc -l < "$WORK/lines.txt")
[ "$NLINES" -gt 0 ] || die "no lines to translate"

configure() {  # <model> <region>
  cmake -S "$SRC" -B "$OUT" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE="$SRC/platforms/$target.cmake" \
    -DMTLITE_MINIMAL=ON -DMTLITE_BUILD_CONVERTER=OFF -DMTLITE_HOST_CLI="$CLI" -DMTLITE_FIRMWARE_MODEL="$1" \
    -DMTLITE_FIRMWARE_LIMITS="$LIMITS" -DMTLITE_BAREMETAL_MODEL_REGION="$2" > "$WORK/configure.log" 2>&1 \
    || { cat "$WORK/configure.log" >&2; die "configure failed"; }
}
build() { cmake --build "$OUT" -j"$JOBS" --target mtlite_baremetal_example > "$WORK/build.log" 2>&1; }
ELF=$OUT/examples/baremetal/mtlite_baremetal_example.elf

# ---- 1. a model that does not fit its region fails the link, saying where and by how much -------
t=$(now)
[ -f "$DEMO" ] || die "no demo model $DEMO for the too-large-model check"
configure "$DEMO" "$small_region"
if build; then die "the link succeeded with the $(stat -c %s "$DEMO")-byte demo model in region $small_region"; fi
grep -q "ld returned" "$WORK/build.log" || { grep -v '^\[' "$WORK/build.log" | tail -20 >&2; die "the build failed before the link"; }
grep -q "will not fit in region \`$small_region'" "$WORK/build.log" || { tail -20 "$WORK/build.log" >&2; die "the failed link does not name region $small_region"; }
grep -q "region \`$small_region' overflowed by [0-9]* bytes" "$WORK/build.log" || die "the failed link does not say by how many bytes"
grep -q "mtlite: the model (.flash_model) does not fit its read-only region" "$WORK/build.log" || die "the linker script's ASSERT message is missing"
say "too large a model: link fails with '$(grep -o "region \`$small_region' overflowed by [0-9]* bytes" "$WORK/build.log" | head -1)' ($(since "$t") s)"

# ---- 2. the build -----------------------------------------------------------------------------------
t=$(now)
configure "$MODEL" ""
build || { grep -v '^\[' "$WORK/build.log" | tail -30 >&2; die "build failed"; }
[ -f "$ELF" ] || die "$ELF was not built"
region=$(sed -n 's/^REGION_ALIAS("MODEL_FLASH", \([A-Z0-9]*\));$/\1/p' "$OUT/examples/baremetal/mtlite_baremetal_example-ld/model_region.ld")
say "built $ELF (model $(stat -c %s "$MODEL") bytes in $region, limits $LIMITS) ($(since "$t") s)"

# ---- 3. what the ELF links --------------------------------------------------------------------------
NM=$WORK/nm.txt
arm-none-eabi-nm "$ELF" > "$NM"
bad=$(grep -E ' [TtWw] (printf|fprintf|puts|fputs|fwrite|fopen|_write|_read|_open|_fstat|getenv|mmap|pthread_create|__cxa_throw|__cxa_allocate_exception|_Unwind_RaiseException|__cxa_guard_acquire)$' "$NM" || true)
bad+=$(arm-none-eabi-nm -C "$ELF" | grep -E ' [TtWw] std::(thread|mutex)' || true)
[ -z "$bad" ] || die "the ELF links what a bare-metal build must not: $bad"
grep -Eq '^[0-9a-f]+ T _sbrk$' "$NM" || die "no _sbrk in the ELF"
grep -A1 -E '^ \.text\._sbrk' "$ELF.map" | grep -q 'startup\.c' || die "_sbrk is not the board's (startup.c)"
heap_size=$((16#$(awk '$3 == "__heap_size" { print $1 }' "$NM")))
[ "$heap_size" -eq 65536 ] || die "the error-message heap is $heap_size bytes, not 65536"
say "ELF: no stdio, environment, threads, mmap or exceptions; malloc only over the board's $heap_size-byte error-message heap"

# ---- 4. mtlite info --board --------------------------------------------------------------------------
if "$CLI" info --help 2>&1 | grep -q -- '--board'; then
  "$CLI" info "$MODEL" --limits "$LIMITS" --board "$board" > "$WORK/info.txt" 2> "$WORK/info.err" \
    || { cat "$WORK/info.err" >&2; die "mtlite info --board $board: a part does not fit"; }
  info_region=$(awk '$1 == "model" && $4 == "->" { print $5 }' "$WORK/info.txt")
  [ "$info_region" = "$region" ] || die "mtlite info --board puts the model in '$info_region', the build in '$region'"
  say "mtlite info --board $board: all parts fit, model in $info_region as the build chose"
else
  say "WARNING: $CLI has no 'info --board' (an older host build): step 4 not checked"
fi

# ---- 5. translations, greedy and beam 2 ----------------------------------------------------------
QEMU=(timeout "$TIMEOUT" qemu-system-arm -M "$board" -display none -serial none -monitor none
      -semihosting-config enable=on,target=native -kernel "$ELF")
stat_of() { sed -n "s/^$2=//p" "$1"; }
run() {  # <name> <beam>
  local name=$1 beam=$2 t rc=0
  "$CLI" translate -m "$MODEL" --split none --max-length "$MAXLEN" --beam "$beam" < "$WORK/lines.txt" \
    > "$WORK/$name.ref" 2> "$WORK/$name.ref.err" || { cat "$WORK/$name.ref.err" >&2; die "host translate failed"; }
  t=$(now)
  "${QEMU[@]}" -append "--beam $beam --max-length $MAXLEN --stats" < "$WORK/lines.txt" > "$WORK/$name.out" \
    2> "$WORK/$name.err" || rc=$?
  local secs; secs=$(since "$t")
  [ "$rc" -eq 0 ] || { tail -20 "$WORK/$name.err" >&2; die "$name: the target exited with $rc"; }
  local n same
  n=$(wc -l < "$WORK/$name.out")
  [ "$n" -eq "$NLINES" ] || die "$name: $n output lines for $NLINES input lines"
  same=$(paste -d '\t' "$WORK/$name.out" "$WORK/$name.ref" | awk -F '\t' '$1 == $2' | wc -l)
  if [ "$same" -ne "$NLINES" ]; then
    diff "$WORK/$name.ref" "$WORK/$name.out" | head -20 >&2
    die "$name (beam $beam): $((NLINES - same)) of $NLINES lines differ from the host CLI"
  fi
  local e="$WORK/$name.err"
  [ "$(stat_of "$e" heap_used)" = 0 ] || die "$name: the run took $(stat_of "$e" heap_used) bytes of heap"
  [ "$(stat_of "$e" arena_needed)" -le "$(stat_of "$e" arena_bytes)" ] || die "$name: the arena is smaller than this target needs"
  [ "$(stat_of "$e" model_storage_needed)" -le "$(stat_of "$e" model_storage_bytes)" ] || die "$name: the model tables are smaller than this target needs"
  [ "$(stat_of "$e" stack_high_water)" -lt "$(stat_of "$e" stack_size)" ] || die "$name: the stack overflowed"
  say "$name: $NLINES lines, beam $beam, max length $MAXLEN: all identical to the host CLI; kernel table $(stat_of "$e" kernel_table), heap used 0, stack high-water $(stat_of "$e" stack_high_water) of $(stat_of "$e" stack_size) ($secs s in qemu)"
}
t=$(now)
run greedy 1
run beam2 2
cat "$WORK/greedy.out"
say "translations checked ($(since "$t") s; beam-2 output: $WORK/beam2.out)"

# ---- 6. an error is reported, not a crash -------------------------------------------------------------
t=$(now)
{ for _ in $(seq 1 120); do printf 'word '; done; echo; head -n 1 "$WORK/lines.txt"; } > "$WORK/error.txt"
rc=0
"${QEMU[@]}" -append "--max-length $MAXLEN --stats" < "$WORK/error.txt" > "$WORK/error.out" 2> "$WORK/error.err" || rc=$?
[ "$rc" -eq 1 ] || { tail "$WORK/error.err" >&2; die "a line over the source-token limit: exit status $rc, not 1"; }
grep -q '^line 1: ' "$WORK/error.err" || die "the error is not reported on stderr"
[ "$(sed -n 2p "$WORK/error.out")" = "$(head -n 1 "$WORK/greedy.out")" ] || die "the line after the error is not translated"
heap_err=$(stat_of "$WORK/error.err" heap_used)
[ "$heap_err" -gt 0 ] && [ "$heap_err" -le "$heap_size" ] || die "error path: heap used $heap_err"
say "error path: '$(sed -n 's/^line 1: //p' "$WORK/error.err" | cut -c1-90)', exit 1, next line translated, $heap_err bytes of the error heap ($(since "$t") s)"

# ---- 7. sizes -------------------------------------------------------------------------------------------
sec() { arm-none-eabi-size -A "$ELF" | awk -v s="$1" '$1 == s { print $2 }'; }
code=$(( $(sec .vectors) + $(sec .text) + $(sec .rodata) + $(sec .ARM.exidx) + $(sec .data) ))
say "sizes ($target, $board, -O3, limits $LIMITS): code + constants (.text $(sec .text), .rodata $(sec .rodata), .data image $(sec .data)) $code bytes without the model; model $(sec .flash_model) in $region; .bss $(sec .bss); arena + model tables (.sram_bss) $(sec .sram_bss); error heap $(sec .heap); stack $(sec .stack) (high-water greedy $(stat_of "$WORK/greedy.err" stack_high_water), beam 2 $(stat_of "$WORK/beam2.err" stack_high_water))"
say "all passed ($(since "$T0") s)"
