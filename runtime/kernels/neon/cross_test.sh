#!/usr/bin/env bash
# Builds the kernel tests (tests/unit/kernels*_test.cc, linked into one binary) with the
# kernels (reference + NEON + dotprod) for arm64 and armhf with the Debian cross compilers
# (GoogleTest compiled from /usr/src/googletest), statically linked, and runs it under
# qemu-user on several CPU models:
#   arm64: -cpu max (neon + neon-dotprod), -cpu cortex-a72 (no dotprod: neon only)
#   armhf: -cpu max with MTLITE_ASSUME_DOTPROD=1 (qemu-arm runs vsdot but does not report it),
#          -cpu cortex-a15 (neon only)
# Independent of the CMake cross build (platforms/); meant as a quick kernel check.
#   usage: runtime/kernels/neon/cross_test.sh [arm64|armhf]...   (default: both)
#   env:   OUT=<dir> (default build-kernels-cross), JOBS=2, GTEST_FILTER=...
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-build-kernels-cross}
JOBS=${JOBS:-2}
GTEST_SRC=/usr/src/googletest/googletest
archs=("$@")
[ ${#archs[@]} -eq 0 ] && archs=(arm64 armhf)

build() {
  local arch=$1 cxx base neon dot
  case $arch in
    arm64) cxx=aarch64-linux-gnu-g++; base=""; neon=""; dot="-march=armv8.2-a+dotprod" ;;
    armhf) cxx=arm-linux-gnueabihf-g++; base=""; neon="-mfpu=neon-vfpv4"
           dot="-march=armv8.2-a+dotprod -mfpu=neon-fp-armv8" ;;
    *) echo "unknown arch $arch" >&2; return 1 ;;
  esac
  local d=$OUT/$arch
  mkdir -p "$d"
  local common="-O2 -std=c++17 -ffp-contract=off -Wall -Wextra -Wno-unused-parameter $base"
  local inc="-Iruntime/kernels -Iruntime/platform -Itests -Itests/unit -DMTLITE_HAVE_NEON_KERNELS=1"
  if [ ! -f "$d/libgtest.a" ]; then
    echo "[$arch] building GoogleTest"
    $cxx $common -w -I$GTEST_SRC/include -I$GTEST_SRC -c $GTEST_SRC/src/gtest-all.cc -o "$d/gtest-all.o"
    $cxx $common -w -I$GTEST_SRC/include -I$GTEST_SRC -c $GTEST_SRC/src/gtest_main.cc -o "$d/gtest_main.o"
    ar rcs "$d/libgtest.a" "$d/gtest-all.o" "$d/gtest_main.o"
  fi
  echo "[$arch] building kernels_test"
  local objs=() pids=()
  compile() {  # src flags...
    local src=$1; shift
    local o=$d/$(echo "$src" | tr '/' '_').o
    objs+=("$o")
    $cxx $common "$@" $inc -c "$src" -o "$o" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$JOBS" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
  }
  compile runtime/kernels/dispatch.cc
  compile runtime/platform/posix.cc
  for f in runtime/kernels/reference/*.cc; do compile "$f"; done
  for f in runtime/kernels/neon/*.cc; do compile "$f" $neon; done
  for f in runtime/kernels/neon_dotprod/*.cc; do compile "$f" $dot; done
  for f in tests/unit/kernels*_test.cc; do compile "$f" -I$GTEST_SRC/include; done
  for p in "${pids[@]}"; do wait "$p"; done
  $cxx -static -o "$d/kernels_test" "${objs[@]}" "$d/libgtest.a" -pthread
}

run() {  # arch cpu [env...]
  local arch=$1 cpu=$2; shift 2
  local qemu=qemu-aarch64
  [ "$arch" = armhf ] && qemu=qemu-arm
  echo "=== $arch qemu -cpu $cpu $* ==="
  local t0=$(date +%s)
  env "$@" $qemu -cpu "$cpu" "$OUT/$arch/kernels_test" --gtest_brief=1 ${GTEST_FILTER:+--gtest_filter=$GTEST_FILTER}
  echo "($(( $(date +%s) - t0 )) s)"
}

for a in "${archs[@]}"; do build "$a"; done
for a in "${archs[@]}"; do
  if [ "$a" = arm64 ]; then
    run arm64 max
    run arm64 cortex-a72
  else
    run armhf max MTLITE_ASSUME_DOTPROD=1
    run armhf cortex-a15
  fi
done
