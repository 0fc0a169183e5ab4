#!/usr/bin/env bash
# Runs every test: host build (unit + python parity), sanitizer build, bounded fuzzing, and
# the ARM cross builds under qemu. Assumes scripts/setup.sh ran (it installs the packages).
#   MTLITE_TEST_ARM=0   skip the ARM cross builds
#   MTLITE_FUZZ_SECONDS fuzzing budget (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
JOBS=${JOBS:-2}
step() { echo; echo "===== $* ====="; }

step "host build + tests"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$JOBS"
ctest --test-dir build --output-on-failure -j"$JOBS"

step "valgrind: no uninitialised reads in a translate (arena is not zero-filled)"
printf 'Two dogs play in the snow.\n\nA woman with a red hat is sitting on a bench.\n' |
  valgrind -q --error-exitcode=9 ./build/mtlite translate -m build/models/demo.int8.mtlite --beam 4 --n-best 2 \
    --alignments --batch 3 --threads 2 >/dev/null

step "ASan/UBSan build + unit tests"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMTLITE_SANITIZE=address,undefined \
      -DMTLITE_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$JOBS"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$JOBS" -LE python

if [ -x scripts/fuzz.sh ]; then
  step "fuzz Model::Load for ${MTLITE_FUZZ_SECONDS:-60}s"
  bash scripts/fuzz.sh "${MTLITE_FUZZ_SECONDS:-60}"
fi

if [ "${MTLITE_TEST_ARM:-1}" = 1 ] && [ -x scripts/cross_test.sh ]; then
  for arch in aarch64 armhf; do
    step "ARM cross build + qemu tests: $arch"
    bash scripts/cross_test.sh "$arch"
  done
fi
step "all tests passed"
