#!/usr/bin/env bash
# Instructions per source token (encoder) and per target token (decoder step) of the kernels on
# a Cortex-M55, for the tables "reference" and "mve" of one build, counted by the emulator:
# bench/baremetal_icount.cc built with arm-none-eabi-g++ (the board support platforms/baremetal in
# its hosted profile, as the bare-metal kernel tests: C library stdio, a large heap) and run under
#   qemu-system-arm -M mps3-an547 -icount shift=0
# (virtual time = 1 ns per instruction, read through SysTick). Deterministic: the same build
# gives the same counts on any host. Prints one line per shape and table, then the ratios.
#   usage: bench/baremetal_icount.sh [demo|opus-mt-base]   (default: both)
#   env:   OUT=<dir> (default build-baremetal-icount), JOBS=2, CXX, CC, QEMU, TIMEOUT=900
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build-baremetal-icount}
JOBS=${JOBS:-2}
CXX=${CXX:-arm-none-eabi-g++}
CC=${CC:-arm-none-eabi-gcc}
QEMU=${QEMU:-qemu-system-arm}
TIMEOUT=${TIMEOUT:-900}
ARCH="-mcpu=cortex-m55 -mfloat-abi=hard -mthumb"
COMMON="$ARCH -O2 -ffp-contract=off -ffunction-sections -fdata-sections -Wall -Wextra -Wno-unused-parameter"
BM=platforms/baremetal
INC="-Iruntime/kernels -Iruntime/platform -I$BM -DMTLITE_HAVE_MVE_KERNELS=1"
mkdir -p "$OUT"
objs=() pids=()
compile() {  # driver src flags...
  local driver=$1 src=$2; shift 2
  local o=$OUT/$(echo "$src" | tr '/' '_').o
  objs+=("$o")
  if [ ! -f "$o" ] || [ "$src" -nt "$o" ] || [ -n "$(find runtime/kernels $BM -name '*.h' -newer "$o" -print -quit)" ]; then
    $driver $COMMON "$@" $INC -c "$src" -o "$o" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$JOBS" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
  fi
}
for f in $BM/startup.c $BM/semihosting.c $BM/syscalls.c; do compile "$CC" "$f" -std=c11; done
for f in runtime/kernels/*.cc runtime/kernels/reference/*.cc runtime/kernels/mve/*.cc runtime/platform/baremetal.cc \
         bench/baremetal_icount.cc; do
  compile "$CXX" "$f" -std=c++17
done
for p in "${pids[@]}"; do wait "$p"; done
$CXX $ARCH -nostartfiles -T $BM/mps3-an547/mps3-an547-hosted.ld -L$BM -Wl,--gc-sections -Wl,--no-warn-execstack \
  -o "$OUT/baremetal_icount.elf" "${objs[@]}"

t0=$(date +%s)
set +e
timeout "$TIMEOUT" "$QEMU" -M mps3-an547 -display none -monitor none -serial none -icount shift=0 \
  -semihosting-config enable=on,target=native${1:+,arg=icount,arg=$1} -kernel "$OUT/baremetal_icount.elf" \
  < /dev/null | tee "$OUT/icount.log"
rc=${PIPESTATUS[0]}
set -e
echo "(qemu: $(( $(date +%s) - t0 )) s, exit status $rc)"
# ratios reference / mve per shape
awk '{ for (i = 1; i <= NF; ++i) { split($i, kv, "="); f[kv[1]] = kv[2] }
       if (f["table"] == "") next
       e[f["shape"], f["table"]] = f["encoder_insn_per_source_token"]; dd[f["shape"], f["table"]] = f["decoder_insn_per_target_token"]
       if (!(f["shape"] in seen)) { seen[f["shape"]] = 1; order[++n] = f["shape"] } delete f }
     END { for (i = 1; i <= n; ++i) { s = order[i]
             if (e[s, "mve"] > 0) printf "shape=%s encoder reference/mve = %.2f, decoder step reference/mve = %.2f\n", s,
               e[s, "reference"] / e[s, "mve"], dd[s, "reference"] / dd[s, "mve"] } }' "$OUT/icount.log"
exit "$rc"
