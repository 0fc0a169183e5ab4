#!/usr/bin/env bash
# Cross-builds mtlite for an ARM Linux target and tests it under qemu-user:
#   1. the host build (build/) provides flatc-free things the target cannot make: the demo models
#      (the converter is a host tool) and the x86-64 reference output; built if missing;
#   2. configure + build build-<arch> with platforms/<triplet>.cmake (Release);
#   3. ctest: every unit test under qemu (aarch64: qemu's default cpu `max`, which has dotprod);
#      then kernels_test again: aarch64 with QEMU_CPU=cortex-a72 (no dotprod: plain NEON),
#      armhf with MTLITE_ASSUME_DOTPROD=1 (qemu-arm runs vsdot but does not advertise it);
#      the dispatcher's table list is checked in each setting;
#   4. end to end: the first N lines of tests/data/dev/multi30k.val.en translated with
#      demo.int8.mtlite (--output-ids) under qemu must be token-identical to the host's output
#      (the kernels are specified bit-identical across ISAs); differing lines are printed;
#      aarch64 also translates the first 50 of them with QEMU_CPU=cortex-a72 (the plain NEON
#      kernels end to end, as on a Raspberry Pi 3/4), which must be token-identical too;
#      plus a 3-sentence fp32 smoke run (XNNPACK f32 path on the target; must run, agreement
#      with the host is reported only, since XNNPACK's f32 GEMM is not bit-identical across ISAs).
#
#   bash scripts/cross_test.sh <aarch64|armhf>
# Environment:
#   JOBS                 build parallelism (default 2)
#   MTLITE_HOST_BUILD    host build dir (default build)
#   MTLITE_CROSS_LINES   sentences for the end-to-end check (default 200)
#   MTLITE_CROSS_FALLBACK_LINES  aarch64: sentences translated with QEMU_CPU=cortex-a72 (default 50)
#   MTLITE_USE_XNNPACK   ON/OFF for the target build (default ON)
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD

arch=${1:-}
case "$arch" in
  aarch64) triplet=aarch64-linux-gnu;   debarch=arm64 ;;
  armhf)   triplet=arm-linux-gnueabihf; debarch=armhf ;;
  *) echo "usage: $0 <aarch64|armhf>" >&2; exit 2 ;;
esac
JOBS=${JOBS:-2}
HOST=$(realpath -m "${MTLITE_HOST_BUILD:-build}")
OUT=$SRC/build-$arch
LINES=${MTLITE_CROSS_LINES:-200}
SMOKE=$(( LINES < 3 ? LINES : 3 ))                         # fp32 sentences (~4 s each under qemu)
FALLBACK=${MTLITE_CROSS_FALLBACK_LINES:-50}                # aarch64: sentences on cortex-a72
FALLBACK=$(( FALLBACK < LINES ? FALLBACK : LINES ))
DATA=$SRC/tests/data/dev/multi30k.val.en
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE

say() { echo "cross_test[$arch]: $*"; }
die() { echo "cross_test[$arch]: FAIL: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

command -v "$triplet-g++" >/dev/null || die "$triplet-g++ missing (apt-get install crossbuild-essential-$debarch; scripts/setup.sh does)"
[ -f "$DATA" ] || die "$DATA missing"

# ---- 1. host build: demo models + the reference translation ---------------------------------
t=$(now)
if [ ! -f "$HOST/build.ninja" ] && [ ! -f "$HOST/Makefile" ]; then
  say "no host build in $HOST: configuring it"
  cmake -S "$SRC" -B "$HOST" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$HOST" -j"$JOBS" --target mtlite_cli demo_models
MODELS=$HOST/models
for q in int8 fp16 fp32; do [ -f "$MODELS/demo.$q.mtlite" ] || die "$MODELS/demo.$q.mtlite was not made"; done
say "host build ready ($(since "$t") s)"

# ---- 2. cross build -------------------------------------------------------------------------
bash scripts/arm_sysroot.sh "$debarch"
t=$(now)
cmake -S "$SRC" -B "$OUT" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_TOOLCHAIN_FILE="$SRC/platforms/$triplet.cmake" \
      -DMTLITE_MODEL_DIR="$MODELS" -DMTLITE_USE_XNNPACK="${MTLITE_USE_XNNPACK:-ON}" >/dev/null
cmake --build "$OUT" -j"$JOBS"
say "cross build done ($(since "$t") s)"

# The emulator command the toolchain file gave ctest (a ;-list in the cache).
emu_line=$(grep '^MTLITE_CROSS_EMULATOR:' "$OUT/CMakeCache.txt" | cut -d= -f2-)
[ -n "$emu_line" ] || die "MTLITE_CROSS_EMULATOR not in $OUT/CMakeCache.txt (toolchain file?)"
IFS=';' read -r -a EMU <<< "$emu_line"
command -v "${EMU[0]}" >/dev/null || die "${EMU[0]} missing (apt-get install qemu-user)"
# The toolchain leaves the cpu to qemu's default; an inherited QEMU_CPU would change what is tested.
unset QEMU_CPU QEMU_LD_PREFIX MTLITE_KERNELS MTLITE_ASSUME_DOTPROD

# ---- 3. unit tests under qemu ---------------------------------------------------------------
t=$(now)
ctest --test-dir "$OUT" --output-on-failure -j"$JOBS"
say "ctest under ${EMU[0]} (default cpu) passed ($(since "$t") s)"

# The kernel tables the dispatcher offers under given environment settings, as printed by
# kernels_test (KernelDispatch.SimdTablePresent: "kernel tables: reference neon ... (best: ...)").
kernel_tables() {
  local line
  line=$(cd "$OUT/tests" && env "$@" "${EMU[@]}" ./kernels_test --gtest_filter='KernelDispatch.*' \
         --gtest_brief=1 | grep '^kernel tables:') ||
    die "kernels_test (KernelDispatch.*) failed or printed no 'kernel tables:' line ($*)"
  echo "$line"
}
expect_tables() {  # <label> <must have (regex)> <must not have (regex, or -)> [env ...]
  local label=$1 want=$2 nowant=$3; shift 3
  local line
  line=$(kernel_tables "$@")
  say "$label: $line"
  echo "$line" | grep -Eq "$want" || die "$label: expected tables matching '$want'"
  if [ "$nowant" != - ] && echo "$line" | grep -Eq "$nowant"; then die "$label: tables must not match '$nowant'"; fi
}
kernels_again() {  # <label> [env ...]: the whole kernels_test once more under other settings
  local label=$1; shift
  local t log=$OUT/kernels_test.$(echo "$*" | tr -c 'A-Za-z0-9\n' _).log; t=$(now)
  (cd "$OUT/tests" && env "$@" "${EMU[@]}" ./kernels_test --gtest_brief=1 > "$log" 2>&1) ||
    { cat "$log" >&2; die "kernels_test failed with $label"; }
  say "kernels_test with $label passed ($(since "$t") s)"
}
[ -x "$OUT/tests/kernels_test" ] || die "$OUT/tests/kernels_test was not built"
if [ "$arch" = aarch64 ]; then
  # qemu's default cpu (max) has dotprod: the ctest run above covered the sdot kernels.
  expect_tables "qemu cpu max" ' neon-dotprod ' -
  # Cortex-A72 (ARMv8.0) has no dotprod: the plain NEON fallback must be picked and pass.
  expect_tables "QEMU_CPU=cortex-a72" ' neon ' 'neon-dotprod' QEMU_CPU=cortex-a72
  kernels_again "QEMU_CPU=cortex-a72 (plain NEON)" QEMU_CPU=cortex-a72
else
  expect_tables "qemu-arm default cpu" ' neon ' -
  # qemu-arm executes vsdot but does not set HWCAP_ASIMDDP for 32-bit processes; the dispatcher's
  # test switch adds the dotprod table anyway, so the armv7 sdot kernels are tested too.
  expect_tables "MTLITE_ASSUME_DOTPROD=1" ' neon-dotprod ' - MTLITE_ASSUME_DOTPROD=1
  kernels_again "MTLITE_ASSUME_DOTPROD=1 (armv7 dotprod)" MTLITE_ASSUME_DOTPROD=1
fi

# ---- 4. end to end: token-identical with the host -------------------------------------------
E2E=$OUT/e2e
mkdir -p "$E2E"
head -n "$LINES" "$DATA" > "$E2E/src.en"
n=$(wc -l < "$E2E/src.en")
run_translate() {  # <out> <command...>
  local out=$1; shift
  "$@" translate -m "$MODELS/demo.int8.mtlite" --output-ids < "$E2E/src.en" > "$out" ||
    die "translate failed: $*"
  [ "$(wc -l < "$out")" = "$n" ] || die "$out has $(wc -l < "$out") lines, expected $n"
}
compare() {  # <host ids> <target ids> <label>   (line i of both = line i of src.en)
  local n; n=$(wc -l < "$1")
  if cmp -s "$1" "$2"; then
    say "$3: $n/$n lines token-identical to x86-64"
    return 0
  fi
  local bad
  bad=$(paste -d '\t' "$1" "$2" | awk -F '\t' '$1 != $2 { c++ } END { print c + 0 }')
  echo "cross_test[$arch]: $3: $bad of $n lines differ from x86-64:" >&2
  paste -d '\t' "$1" "$2" | awk -F '\t' -v src="$E2E/src.en" '
    BEGIN { while ((getline l < src) > 0) s[++k] = l }
    $1 != $2 { printf "  line %d: %s\n    x86-64: %s\n    %s: %s\n", NR, s[NR], $1, "'"$arch"'", $2 }' >&2
  return 1
}
t=$(now)
run_translate "$E2E/x86_64.ids" "$HOST/mtlite"
say "host translated $n lines ($(since "$t") s)"
t=$(now)
run_translate "$E2E/$arch.ids" "${EMU[@]}" "$OUT/mtlite"
say "$arch translated $n lines under ${EMU[0]} ($(since "$t") s)"
compare "$E2E/x86_64.ids" "$E2E/$arch.ids" "$arch int8" || die "$arch int8 output differs from x86-64"
if [ "$arch" = aarch64 ] && [ "$FALLBACK" -gt 0 ]; then
  head -n "$FALLBACK" "$E2E/src.en" > "$E2E/fallback.en"
  head -n "$FALLBACK" "$E2E/x86_64.ids" > "$E2E/x86_64.fallback.ids"
  t=$(now)
  QEMU_CPU=cortex-a72 "${EMU[@]}" "$OUT/mtlite" translate -m "$MODELS/demo.int8.mtlite" --output-ids \
    < "$E2E/fallback.en" > "$E2E/$arch.cortex-a72.ids" || die "translate failed with QEMU_CPU=cortex-a72"
  compare "$E2E/x86_64.fallback.ids" "$E2E/$arch.cortex-a72.ids" "$arch int8, QEMU_CPU=cortex-a72 (plain NEON)" ||
    die "$arch int8 output with plain NEON (cortex-a72) differs from x86-64"
  say "cortex-a72 run: $FALLBACK lines ($(since "$t") s)"
fi

# fp32 smoke: the f32 layers go through XNNPACK (when MTLITE_USE_XNNPACK=ON), which is not
# specified bit-identical across ISAs (FMA on ARM, not on x86): the run must succeed and give one
# line per sentence; agreement with the host is reported, not required.
head -n "$SMOKE" "$E2E/src.en" > "$E2E/smoke.en"
t=$(now)
"$HOST/mtlite" translate -m "$MODELS/demo.fp32.mtlite" --output-ids < "$E2E/smoke.en" > "$E2E/x86_64.fp32.ids" ||
  die "host fp32 translate failed"
"${EMU[@]}" "$OUT/mtlite" translate -m "$MODELS/demo.fp32.mtlite" --output-ids < "$E2E/smoke.en" \
  > "$E2E/$arch.fp32.ids" || die "$arch fp32 translate failed under qemu"
[ "$(wc -l < "$E2E/$arch.fp32.ids")" = "$SMOKE" ] || die "$arch fp32: expected $SMOKE lines"
same=$(paste -d '\t' "$E2E/x86_64.fp32.ids" "$E2E/$arch.fp32.ids" | awk -F '\t' '$1 == $2 { c++ } END { print c + 0 }')
say "$arch fp32 (XNNPACK=${MTLITE_USE_XNNPACK:-ON}) smoke: $SMOKE lines ran; $same/$SMOKE token-identical to x86-64 (informational) ($(since "$t") s)"

# ---- profiler: `mtlite profile` under qemu writes a valid trace and report (structure only:
# emulated timings mean nothing). 3 sentences, 2 threads (worker lanes).
t=$(now)
head -n 3 "$E2E/src.en" > "$E2E/profile.en"
"${EMU[@]}" "$OUT/mtlite" profile -m "$MODELS/demo.int8.mtlite" --input "$E2E/profile.en" --threads 2 --quiet \
  --trace "$E2E/profile.trace.json" --json "$E2E/profile.report.json" || die "mtlite profile failed under qemu"
/usr/bin/python3 "$SRC/tests/reference/profile_trace_check.py" --structure-only "$E2E/profile.trace.json" \
  --report "$E2E/profile.report.json" || die "$arch: invalid profile trace or report"
say "$arch profile: trace and report valid ($(since "$t") s)"
say "all passed"
