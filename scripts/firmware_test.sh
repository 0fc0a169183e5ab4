#!/usr/bin/env bash
# Builds the firmware-style example (examples/firmware) with the minimal runtime (MTLITE_MINIMAL:
# no threads, XNNPACK, mmap or file I/O), statically linked, for one target, and runs it under
# qemu-user (natively for x86_64):
#   1. the host build (build/) provides the reference CLI (x86-64) and the demo models; a second
#      model, random weights of another shape (d_model 512, relu, 3+3 layers, separate target
#      vocabulary: tests/reference/make_random_checkpoint.py --preset big-relu-sep), is made once
#      into build/firmware-models/;
#   2. configure + build build-firmware-<arch> (Release, MTLITE_MINIMAL=ON, the target's toolchain
#      file): the runtime library, the target's `mtlite` and mtlite_firmware_example with the demo
#      model embedded (`mtlite embed`, .incbin) and its static arrays sized by the target's own
#      `mtlite info --limits ... --header` (run under qemu by the build);
#   3. examples/firmware/check_example.sh: translations token-identical to the x86-64 CLI (greedy,
#      then beam), 0 heap allocations from main to exit, and the RAM budget the target's `mtlite
#      info --limits` prints within [1, 1.25] x what the example really used (painted stack +
#      arena high-water);
#   4. the same with the second model: only -DMTLITE_FIRMWARE_MODEL changes (and the limits);
#   5. prints the sizes: the runtime library's .text + .rodata (archive, and as linked into the
#      static example, whose map file it reads) and the example binary.
#
#   bash scripts/firmware_test.sh <aarch64|armhf|x86_64>
# Environment: JOBS (default 2), MTLITE_HOST_BUILD (default build), MTLITE_FIRMWARE_LINES (greedy
# lines of the demo model, default 40; beam 4 on 8 of them), MTLITE_FIRMWARE_LIMITS (default
# 1,128,128,4).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD

arch=${1:-}
case "$arch" in
  aarch64) triplet=aarch64-linux-gnu;   qemu=qemu-aarch64 ;;
  armhf)   triplet=arm-linux-gnueabihf; qemu=qemu-arm ;;
  x86_64)  triplet=;                    qemu= ;;
  *) echo "usage: $0 <aarch64|armhf|x86_64>" >&2; exit 2 ;;
esac
JOBS=${JOBS:-2}
HOST=$(realpath -m "${MTLITE_HOST_BUILD:-build}")
OUT=$SRC/build-firmware-$arch
LINES=${MTLITE_FIRMWARE_LINES:-40}
LIMITS=${MTLITE_FIRMWARE_LIMITS:-1,128,128,4}
DATA=$SRC/tests/data/dev/multi30k.val.en
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE

say() { echo "firmware_test[$arch]: $*"; }
die() { echo "firmware_test[$arch]: FAIL: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
T0=$(now)

if [ -n "$triplet" ]; then
  command -v "$triplet-g++" >/dev/null || die "$triplet-g++ missing (apt-get install crossbuild-essential-*; scripts/setup.sh does)"
  command -v "$qemu" >/dev/null || die "$qemu missing (apt-get install qemu-user)"
fi

# ---- 1. host build: reference CLI, demo models, the second model ------------------------------
t=$(now)
if [ ! -f "$HOST/build.ninja" ] && [ ! -f "$HOST/Makefile" ]; then
  say "no host build in $HOST: configuring it"
  cmake -S "$SRC" -B "$HOST" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$HOST" -j"$JOBS" --target mtlite_cli demo_models
DEMO=$HOST/models/demo.int8.mtlite
[ -f "$DEMO" ] || die "$DEMO was not made"
SECOND=$HOST/firmware-models/rand512-relu.int8.mtlite
if [ ! -f "$SECOND" ]; then
  say "making the second model (random d_model 512, relu, 3+3 layers)"
  rm -rf "$HOST/firmware-models/rand512-relu"
  mkdir -p "$HOST/firmware-models"
  /usr/bin/python3 tests/reference/make_random_checkpoint.py "$HOST/firmware-models/rand512-relu" \
    --preset big-relu-sep >/dev/null
  "$HOST/mtlite" convert "$HOST/firmware-models/rand512-relu" -o "$SECOND.tmp" --quantize int8 --quiet
  mv "$SECOND.tmp" "$SECOND"
fi
say "host build and models ready ($(since "$t") s)"

# ---- 2. minimal build for the target ------------------------------------------------------------
configure() {  # <model> <limits>
  local args=(-DCMAKE_BUILD_TYPE=Release -DMTLITE_MINIMAL=ON -DMTLITE_BUILD_CONVERTER=OFF
              -DMTLITE_MODEL_DIR="$HOST/models" -DMTLITE_FIRMWARE_MODEL="$1" -DMTLITE_FIRMWARE_LIMITS="$2")
  [ -n "$triplet" ] && args+=(-DCMAKE_TOOLCHAIN_FILE="$SRC/platforms/$triplet.cmake")
  cmake -S "$SRC" -B "$OUT" -G Ninja "${args[@]}" >/dev/null
}
t=$(now)
if [ -n "$triplet" ]; then
  debarch=$([ "$arch" = aarch64 ] && echo arm64 || echo armhf)
  bash scripts/arm_sysroot.sh "$debarch"  # the toolchain file expects it (the minimal build links none of it)
fi
configure "$DEMO" "$LIMITS"
cmake --build "$OUT" -j"$JOBS" --target mtlite_firmware_example mtlite_cli
EXAMPLE=$OUT/examples/firmware/mtlite_firmware_example
[ -x "$EXAMPLE" ] || die "$EXAMPLE was not built"
if readelf -l "$EXAMPLE" | grep -q INTERP; then die "$EXAMPLE is not statically linked"; fi
say "minimal build done ($(since "$t") s)"

if [ -n "$triplet" ]; then
  emu_line=$(grep '^MTLITE_CROSS_EMULATOR:' "$OUT/CMakeCache.txt" | cut -d= -f2-)
  [ -n "$emu_line" ] || die "MTLITE_CROSS_EMULATOR not in $OUT/CMakeCache.txt"
  INFO="${emu_line//;/ } $OUT/mtlite"   # the target's mtlite (dynamically linked: the emulator's -L/-E)
  unset QEMU_CPU QEMU_LD_PREFIX MTLITE_KERNELS MTLITE_ASSUME_DOTPROD
else
  INFO=$OUT/mtlite
fi

# ---- 3. the demo model ----------------------------------------------------------------------------
t=$(now)
MTLITE_CHECK_EMU="$qemu" MTLITE_CHECK_INFO="$INFO" MTLITE_CHECK_LINES="$LINES" MTLITE_CHECK_BEAM_LINES=8 \
MTLITE_CHECK_WORK="$OUT/check-demo" MTLITE_CHECK_LABEL="$arch demo" \
  bash examples/firmware/check_example.sh "$EXAMPLE" "$HOST/mtlite" "$DEMO" "$LIMITS" "$DATA"
say "demo model checked ($(since "$t") s)"

# ---- 5 (first, while the demo model is embedded). sizes ----------------------------------------
FOOT=$OUT/generated/footprint.h
fp() { sed -n "s/^#define MTLITE_FOOTPRINT_$1 \([0-9]*\)u$/\1/p" "$FOOT"; }
lib_text=$(fp TEXT) lib_rodata=$(fp RODATA) lib_data=$(fp DATA) lib_bss=$(fp BSS)
MAP=$OUT/examples/firmware/mtlite_firmware_example.map
# Input sections of libmtlite.a / libmtlite_kernels.a that the linker kept (after "Linker script
# and memory map"; a long section name sits on its own line, its address/size/file on the next).
read -r linked_text linked_rodata linked_data linked_bss <<< "$(awk '
  function hex(s,   v, i, c) {
    v = 0; s = tolower(substr(s, 3))
    for (i = 1; i <= length(s); ++i) { c = index("0123456789abcdef", substr(s, i, 1)); v = v * 16 + c - 1 }
    return v
  }
  /^Linker script and memory map/ { on = 1; next }
  !on { next }
  /^ \.[^ ]+$/ { pending = $1; next }
  {
    name = ""; size = ""; file = ""
    if ($0 ~ /^ \.[^ ]+ +0x[0-9a-f]+ +0x[0-9a-f]+ /) { name = $1; size = $3; file = $4 }
    else if (pending != "" && $0 ~ /^ +0x[0-9a-f]+ +0x[0-9a-f]+ /) { name = pending; size = $2; file = $3 }
    pending = ""
    if (name == "" || file !~ /libmtlite(_kernels)?\.a\(/) next
    n = hex(size)
    if (name ~ /^\.text/) t += n
    else if (name ~ /^\.rodata/ || name ~ /^\.data\.rel\.ro/) r += n
    else if (name ~ /^\.(data|tdata)/) d += n
    else if (name ~ /^\.(bss|tbss)/) b += n
  }
  END { printf "%d %d %d %d\n", t, r, d, b }' "$MAP")"
read -r bin_text bin_data bin_bss _ <<< "$("${triplet:+$triplet-}size" "$EXAMPLE" | awk 'NR == 2 { print $1, $2, $3 }')"
model_bytes=$(stat -c %s "$DEMO")
say "sizes ($arch, minimal, -O3):"
say "  runtime library archive (libmtlite.a + libmtlite_kernels.a): .text $lib_text + .rodata $lib_rodata = $((lib_text + lib_rodata)) bytes; .data $lib_data, .bss $lib_bss"
say "  runtime as linked into the static example (gc-sections):     .text $linked_text + .rodata $linked_rodata = $((linked_text + linked_rodata)) bytes; .data $linked_data, .bss $linked_bss"
say "  whole example binary (size): text $bin_text (incl. the $model_bytes-byte model), data $bin_data, bss $bin_bss (incl. arena + model tables)"

# ---- 4. the second model: only the model (and the limits) change --------------------------------
t=$(now)
LIMITS2=1,64,32,2
configure "$SECOND" "$LIMITS2"
cmake --build "$OUT" -j"$JOBS" --target mtlite_firmware_example
MTLITE_CHECK_EMU="$qemu" MTLITE_CHECK_INFO="$INFO" MTLITE_CHECK_LINES=12 MTLITE_CHECK_BEAM_LINES=4 \
MTLITE_CHECK_WORK="$OUT/check-second" MTLITE_CHECK_LABEL="$arch d512-relu-3+3" \
  bash examples/firmware/check_example.sh "$EXAMPLE" "$HOST/mtlite" "$SECOND" "$LIMITS2" "$DATA"
say "second model checked ($(since "$t") s)"
say "all passed ($(since "$T0") s)"
