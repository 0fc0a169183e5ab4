#!/usr/bin/env bash
# Runs every test: host build (unit + python parity + fuzz seed replays + bad-input CLI),
# valgrind, ASan/UBSan build, ThreadSanitizer (translators sharing one Model), the firmware-style
# build and its RAM budget, bounded fuzzing of every target, and the ARM cross builds (tests,
# firmware example) under qemu. Assumes scripts/setup.sh ran (it installs
# the packages).
#   MTLITE_TEST_ARM=0   skip the ARM cross builds
#   MTLITE_FUZZ_SECONDS fuzzing time per target (default 30; tests/fuzz/*_fuzz.cc, JOBS at a time)
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
export MTLITE_REQUIRE_BERGAMOT=1  # the Marian checks fail instead of skipping without Bergamot (setup.sh installs it)
JOBS=${JOBS:-2}
step() { echo; echo "===== $* ===== ($(date +%T))"; }

step "host build + tests"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$JOBS"
ctest --test-dir build --output-on-failure -j"$JOBS"

step "WebAssembly: the module (SIMD128 and without), its kernels bit for bit, the JavaScript API, the Node CLI against the native one"
bash scripts/wasm_test.sh

step "valgrind: no uninitialised reads in a translate (arena is not zero-filled)"
printf 'Two dogs play in the snow.\n\nA woman with a red hat is sitting on a bench.\n' |
  valgrind -q --error-exitcode=9 ./build/mtlite translate -m build/models/demo.int8.mtlite --beam 4 --n-best 2 \
    --alignments --batch 3 --threads 2 >/dev/null

step "ASan/UBSan build + unit tests"
# -O1 -g1 (line tables for the reports): as sanitizer runs are usually built, and it compiles in
# about half the time of -O2 -g
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMTLITE_SANITIZE=address,undefined \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
      -DMTLITE_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$JOBS"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$JOBS" -LE python

step "ThreadSanitizer: the layers' thread pool; 8 translators sharing one Model (int8; only what the tests need is built)"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMTLITE_SANITIZE=thread \
      -DMTLITE_BUILD_CONVERTER=OFF -DMTLITE_BUILD_BENCH=OFF -DMTLITE_MODEL_DIR="$PWD/build/models" >/dev/null
cmake --build build-tsan -j"$JOBS" --target thread_pool_test concurrency_test
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ./build-tsan/tests/thread_pool_test --gtest_brief=1
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ./build-tsan/tests/concurrency_test --gtest_brief=1

step "firmware build (MTLITE_MINIMAL, embedded model, no heap) + RAM budget check: x86_64"
bash scripts/firmware_test.sh x86_64

step "fuzz every target for ${MTLITE_FUZZ_SECONDS:-30}s"
MTLITE_FUZZ_JOBS="${MTLITE_FUZZ_JOBS:-$JOBS}" bash scripts/fuzz.sh "${MTLITE_FUZZ_SECONDS:-30}"

if [ "${MTLITE_TEST_ARM:-1}" = 1 ] && [ -x scripts/cross_test.sh ]; then
  for arch in aarch64 armhf; do
    step "ARM cross build + qemu tests: $arch"
    bash scripts/cross_test.sh "$arch"
    step "firmware build + RAM budget check under qemu: $arch"
    bash scripts/firmware_test.sh "$arch"
    step "the README's deploy steps, as written, in a clean copy of the tree: $arch"
    bash scripts/deploy_test.sh "$arch"
  done
fi
if [ "${MTLITE_TEST_ARM:-1}" = 1 ]; then
  step "bare metal: the kernel tests on an emulated Cortex-M55, tables reference and mve bit for bit"
  bash scripts/baremetal_kernel_test.sh cortex-m55
  step "bare metal: the kernel tests on an emulated Cortex-M7, table reference"
  bash scripts/baremetal_kernel_test.sh cortex-m7
  # 30 dev lines on the Cortex-M55 (mve), 8 on the Cortex-M7 (the scalar table is ~4x slower under qemu)
  for target in cortex-m55:30 cortex-m7:8; do
    step "bare metal: the translator on an emulated ${target%%:*} (qemu-system-arm), identical to the host CLI, no heap"
    MTLITE_BAREMETAL_LINES=${MTLITE_BAREMETAL_LINES:-${target##*:}} bash scripts/baremetal_test.sh "${target%%:*}" >/dev/null
  done
fi
step "all tests passed"
