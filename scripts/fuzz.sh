#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan) and fuzzes Model::FromBuffer for a bounded
# time. Usage: scripts/fuzz.sh [seconds=60]. Exits non-zero when the fuzzer finds a crash, leak,
# timeout or sanitizer report (the reproducer is left in build-fuzz/findings/).
set -euo pipefail
seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${MTLITE_FUZZ_BUILD_DIR:-$root/build-fuzz}"

# MTLITE_FUZZ=ON adds -fsanitize=fuzzer-no-link to every library (coverage for the loader's
# branches); the fuzz target itself is linked with -fsanitize=fuzzer (tests/CMakeLists.txt).
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMTLITE_FUZZ=ON -DMTLITE_SANITIZE=address,undefined -DMTLITE_BUILD_CONVERTER=OFF \
  -DMTLITE_BUILD_BENCH=OFF -DMTLITE_BUILD_TESTS=ON -DCMAKE_C_FLAGS="-g" -DCMAKE_CXX_FLAGS="-g" >/dev/null
cmake --build "$build" -j2 --target model_load_fuzz

# Work on a copy of the seeds so the committed corpus never changes.
corpus="$build/corpus/model_load"
findings="$build/findings"
mkdir -p "$corpus" "$findings"
cp -n "$root"/tests/fuzz/seeds/* "$corpus/" 2>/dev/null || true

echo "fuzzing Model::FromBuffer for ${seconds}s (corpus $corpus)"
"$build/tests/model_load_fuzz" "$corpus" \
  -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$findings/" -print_final_stats=1
