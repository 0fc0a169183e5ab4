#!/usr/bin/env bash
# The kernel tests of tests/unit (kernels*_test.cc, unchanged, linked into one program on the
# minimal test runner tests/wasm/gtest) built for a bare-metal Cortex-M with arm-none-eabi-g++ and
# newlib, and run on the emulated board under qemu-system-arm (semihosting for the console and the
# exit status). Start-up and memory map are the board support of platforms/baremetal in its
# hosted profile: startup.c (vector table, reset, faults, _sbrk), semihosting.c, syscalls.c
# (newlib's stdio on the semihosting console) and <board>/<board>-hosted.ld (a large heap).
#   cortex-m55  Armv8.1-M with Helium, mps3-an547: the tables "reference" and "mve" (runtime/kernels/mve/)
#   cortex-m7   Armv7E-M with a double-precision FPU, mps2-an500: the table "reference"
# Every table the build has is checked against the reference bit for bit, as on every other target.
#   usage: scripts/baremetal_kernel_test.sh [cortex-m55|cortex-m7] [filter]
#          (default cortex-m55; filter: run the tests whose Suite.Name contains it)
#   env:   OUT=<dir> (default build-baremetal-kernels; objects and ELF in OUT/<target>), JOBS=2,
#          CXX=arm-none-eabi-g++, CC=arm-none-eabi-gcc, QEMU=qemu-system-arm, TIMEOUT=600 (seconds for the run)
# Exit status: 0 when every test passed, non-zero on any failure (or a fault, or no test run).
set -euo pipefail
cd "$(dirname "$0")/.."
target=cortex-m55
case "${1:-}" in
  cortex-m55|cortex-m7) target=$1; shift ;;
  -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
esac
filter=${1:-}
OUT=${OUT:-build-baremetal-kernels}/$target
JOBS=${JOBS:-2}
CXX=${CXX:-arm-none-eabi-g++}
CC=${CC:-arm-none-eabi-gcc}
QEMU=${QEMU:-qemu-system-arm}
TIMEOUT=${TIMEOUT:-600}
for tool in "$CXX" "$CC" "$QEMU"; do
  command -v "$tool" >/dev/null || { echo "baremetal_kernel_test: $tool not found" >&2; exit 1; }
done

BM=platforms/baremetal
case "$target" in
  cortex-m55)
    board=mps3-an547
    ARCH="-mcpu=cortex-m55 -mfloat-abi=hard -mthumb"
    KERNEL_SRCS="runtime/kernels/mve/*.cc"
    DEFS="-DMTLITE_HAVE_MVE_KERNELS=1" ;;
  cortex-m7)
    board=mps2-an500
    ARCH="-mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard -mthumb"
    KERNEL_SRCS=""
    DEFS="" ;;
esac
COMMON="$ARCH -O2 -ffp-contract=off -ffunction-sections -fdata-sections -Wall -Wextra -Wno-unused-parameter"
INC="-Iruntime/kernels -Iruntime/platform -Itests -Itests/unit -Itests/wasm -I$BM $DEFS"
mkdir -p "$OUT"

objs=() pids=()
compile() {  # driver src flags...
  local driver=$1 src=$2; shift 2
  local o=$OUT/$(echo "$src" | tr '/' '_').o
  objs+=("$o")
  if [ ! -f "$o" ] || [ "$src" -nt "$o" ] || [ -n "$(find runtime/kernels tests/unit/kernel_tester.h tests/wasm/gtest $BM -name '*.h' -newer "$o" -print -quit)" ]; then
    $driver $COMMON "$@" $INC -c "$src" -o "$o" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$JOBS" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
  fi
}
echo "[baremetal] building kernel tests for $target ($OUT)"
for f in $BM/startup.c $BM/semihosting.c $BM/syscalls.c; do compile "$CC" "$f" -std=c11; done
# shellcheck disable=SC2086  # KERNEL_SRCS is a glob
for f in runtime/kernels/*.cc runtime/kernels/reference/*.cc $KERNEL_SRCS runtime/platform/baremetal.cc; do
  compile "$CXX" "$f" -std=c++17
done
# -Wno-format: uint32_t is unsigned long on arm-none-eabi, so the testers' %x formats warn (same size)
for f in tests/unit/kernels*_test.cc tests/wasm/gtest_main.cc; do compile "$CXX" "$f" -std=c++17 -Wno-format; done
for p in "${pids[@]}"; do wait "$p"; done
$CXX $ARCH -nostartfiles -T "$BM/$board/$board-hosted.ld" -L"$BM" -Wl,--gc-sections \
  -Wl,--no-warn-execstack -Wl,-Map="$OUT/kernel_test.elf.map" -o "$OUT/kernel_test.elf" "${objs[@]}"

echo "[baremetal] $QEMU -M $board ($target)"
t0=$(date +%s)
set +e
timeout "$TIMEOUT" "$QEMU" -M "$board" -display none -monitor none -serial none \
  -semihosting-config enable=on,target=native${filter:+,arg=test,arg=$filter} -kernel "$OUT/kernel_test.elf" \
  < /dev/null | tee "$OUT/kernel_test.log"
rc=${PIPESTATUS[0]}
set -e
echo "[baremetal] $target: exit status $rc ($(( $(date +%s) - t0 )) s)"
if [ "$rc" -eq 0 ] && ! grep -q ' 0 failed' "$OUT/kernel_test.log"; then rc=1; fi
exit "$rc"
