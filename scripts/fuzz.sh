#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan) and fuzzes them for a bounded time.
#
#   bash scripts/fuzz.sh [SECONDS=60] [NAME...]
#
# NAME is a target tests/fuzz/NAME_fuzz.cc (model_load, tokenizer, translate, cli_args, zip,
# marian_checkpoint, ...); without one every target runs for SECONDS each. An unknown NAME is an
# error.
#   - Seeds: tests/fuzz/seeds/NAME/, copied into build-fuzz/corpus/NAME/ (which keeps growing
#     across runs; the committed seeds never change).
#   - Per-target libFuzzer flags: tests/fuzz/NAME_fuzz.options (`flag = value` lines under
#     `[libfuzzer]`, the OSS-Fuzz convention); default -max_len=4096.
#   - The text-path targets load the demo model named by MTLITE_FUZZ_MODEL. A fuzz tree cannot
#     make it (clang, no converter), so unless the variable is set, the host build
#     (MTLITE_HOST_BUILD, default build/) converts it first: build/models/demo.int8.mtlite.
#   - Exits non-zero when a fuzzer finds a crash, a failed property, a leak, a timeout or a
#     sanitizer report; the reproducer is left in build-fuzz/findings/NAME/ and the log in
#     build-fuzz/logs/NAME.log. Replay it with the fuzzer binary, or add it to the seeds as
#     regression-* (the host build replays every seed in ctest: fuzz_replay_NAME).
# Environment: MTLITE_FUZZ_BUILD_DIR (default build-fuzz), MTLITE_HOST_BUILD, MTLITE_FUZZ_MODEL,
#   MTLITE_FUZZ_JOBS (targets fuzzed at once, one core each; default 1), JOBS (build, default 2).
set -euo pipefail
seconds="${1:-60}"
shift || true
only=("$@")
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${MTLITE_FUZZ_BUILD_DIR:-$root/build-fuzz}"
host="$(realpath -m "${MTLITE_HOST_BUILD:-$root/build}")"
jobs="${MTLITE_FUZZ_JOBS:-1}"
say() { echo "fuzz: $*"; }
die() { echo "fuzz: FAIL: $*" >&2; exit 1; }

case "$seconds" in ''|*[!0-9]*) echo "usage: $0 [SECONDS] [NAME...]" >&2; exit 2 ;; esac
all=()
for f in "$root"/tests/fuzz/*_fuzz.cc; do
  n=$(basename "$f" _fuzz.cc)
  all+=("$n")
done
if [ "${#only[@]}" -gt 0 ]; then
  for n in "${only[@]}"; do
    [ -f "$root/tests/fuzz/${n}_fuzz.cc" ] ||
      { echo "fuzz: unknown target '$n' (targets: ${all[*]})" >&2; exit 2; }
  done
  names=("${only[@]}")
else
  names=("${all[@]}")
fi

# The demo model, for the targets that load it.
needs_model=0
for n in "${names[@]}"; do
  if grep -q 'LoadFuzzModel' "$root/tests/fuzz/${n}_fuzz.cc"; then needs_model=1; fi
done
if [ "$needs_model" = 1 ] && [ -z "${MTLITE_FUZZ_MODEL:-}" ]; then
  if [ ! -f "$host/build.ninja" ] && [ ! -f "$host/Makefile" ]; then
    say "no host build in $host: configuring it (it converts the demo model)"
    cmake -S "$root" -B "$host" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$host" -j"${JOBS:-2}" --target demo_models >/dev/null
  export MTLITE_FUZZ_MODEL="$host/models/demo.int8.mtlite"
fi
if [ "$needs_model" = 1 ]; then
  [ -f "$MTLITE_FUZZ_MODEL" ] || die "MTLITE_FUZZ_MODEL=$MTLITE_FUZZ_MODEL does not exist"
  say "model: $MTLITE_FUZZ_MODEL"
fi

# MTLITE_FUZZ=ON adds -fsanitize=fuzzer-no-link to every library (coverage of the runtime's
# branches); the targets themselves link -fsanitize=fuzzer (tests/CMakeLists.txt).
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMTLITE_FUZZ=ON -DMTLITE_SANITIZE=address,undefined -DMTLITE_BUILD_CONVERTER=OFF \
  -DMTLITE_BUILD_BENCH=OFF -DMTLITE_BUILD_TESTS=ON -DCMAKE_C_FLAGS="-g" -DCMAKE_CXX_FLAGS="-g" >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target "${names[@]/%/_fuzz}"

# libFuzzer flags from tests/fuzz/NAME_fuzz.options ([libfuzzer] section: `key = value`).
options() {
  local file="$root/tests/fuzz/$1_fuzz.options" max_len=4096 line section="" k v out=()
  if [ -f "$file" ]; then
    while IFS= read -r line || [ -n "$line" ]; do
      line="${line%%#*}"
      case "$line" in
        \[*\]*) section="${line#[}"; section="${section%%]*}"; continue ;;
      esac
      [ "$section" = libfuzzer ] || continue
      k=$(echo "${line%%=*}" | tr -d ' \t'); v=$(echo "${line#*=}" | tr -d ' \t')
      [ -n "$k" ] && [ "$k" != "$line" ] || continue
      if [ "$k" = max_len ]; then max_len=$v; else out+=("-$k=$v"); fi
    done < "$file"
  fi
  echo "-max_len=$max_len ${out[*]:-}"
}

run_one() {  # NAME: fuzz it; prints one summary line; returns non-zero on a finding
  local n=$1 corpus="$build/corpus/$1" findings="$build/findings/$1" log="$build/logs/$1.log"
  mkdir -p "$corpus" "$findings" "$build/logs"
  if [ -d "$root/tests/fuzz/seeds/$n" ]; then cp -n "$root/tests/fuzz/seeds/$n"/* "$corpus/" 2>/dev/null || true; fi
  # shellcheck disable=SC2046
  if ! "$build/tests/${n}_fuzz" "$corpus" $(options "$n") -max_total_time="$seconds" -timeout=10 \
       -rss_limit_mb=2048 -artifact_prefix="$findings/" -print_final_stats=1 > "$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz[$n]: FINDING after $(grep -c '' "$log") log lines: reproducer in $findings/, log $log" >&2
    return 1
  fi
  local runs cov ft
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  echo "fuzz[$n]: ${seconds}s clean: ${runs:-?} runs, cov ${cov:-?}, ft ${ft:-?}, corpus $(ls "$corpus" | wc -l) files"
}

say "fuzzing ${names[*]} for ${seconds}s each (${jobs} at a time)"
rc=0
pids=()
for n in "${names[@]}"; do
  run_one "$n" & pids+=($!)
  if [ "${#pids[@]}" -ge "$jobs" ]; then
    wait "${pids[0]}" || rc=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || rc=1; done
[ "$rc" = 0 ] || die "a fuzzer found a problem (see above)"
say "all clean"
