#!/usr/bin/env bash
# Checks mtlite_firmware_example against the CLI and against the RAM budget:
#   1. its translations of the first N lines of INPUT (greedy, then beam on a few of them) are
#      token-identical to `mtlite translate --output-ids` of the reference CLI (x86-64);
#   2. it made no heap allocation from main to exit (its heap guard counts malloc & co.);
#   3. the RAM budget `mtlite info MODEL --limits LIMITS` prints on the example's target is
#      >= what the example really used (painted stack high-water + arena high-water, and the
#      whole RAM: + model storage high-water + static data) and not more than 25 % above it.
#
#   check_example.sh EXAMPLE REF_MTLITE MODEL LIMITS INPUT
# Environment:
#   MTLITE_CHECK_EMU         command prefix that runs EXAMPLE (e.g. qemu-aarch64), default none
#   MTLITE_CHECK_INFO        the target's `mtlite` command (may contain an emulator prefix),
#                            default REF_MTLITE
#   MTLITE_CHECK_LINES       lines translated greedily (default 40); MTLITE_CHECK_BEAM_LINES
#                            of them again with the beam limit (default 8)
#   MTLITE_CHECK_MAX_LENGTH  --max-length of both (default: the TGT limit)
#   MTLITE_CHECK_WORK        scratch directory (default: a new temporary one)
#   MTLITE_CHECK_LABEL       name in the messages (default: the example's file name)
set -euo pipefail
[ $# = 5 ] || { echo "usage: $0 EXAMPLE REF_MTLITE MODEL LIMITS INPUT" >&2; exit 2; }
EXAMPLE=$1 REF=$2 MODEL=$3 LIMITS=$4 INPUT=$5
read -r -a EMU <<< "${MTLITE_CHECK_EMU:-}"
read -r -a INFO <<< "${MTLITE_CHECK_INFO:-$REF}"
LINES=${MTLITE_CHECK_LINES:-40}
BEAM_LINES=${MTLITE_CHECK_BEAM_LINES:-8}
IFS=, read -r _ _ TGT BEAM <<< "$LIMITS"
MAXLEN=${MTLITE_CHECK_MAX_LENGTH:-$TGT}
LABEL=${MTLITE_CHECK_LABEL:-$(basename "$EXAMPLE")}
WORK=${MTLITE_CHECK_WORK:-$(mktemp -d)}
mkdir -p "$WORK"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

say() { echo "check_example[$LABEL]: $*"; }
die() { echo "check_example[$LABEL]: FAIL: $*" >&2; exit 1; }

stat_of() { sed -n "s/^$2=//p" "$1"; }

# run <name> <lines> <beam>: example vs reference on the first <lines> lines
run() {
  local name=$1 n=$2 beam=$3
  head -n "$n" "$INPUT" > "$WORK/$name.src"
  "$REF" translate -m "$MODEL" --output-ids --max-length "$MAXLEN" --beam "$beam" < "$WORK/$name.src" \
    > "$WORK/$name.ref" || die "reference translate failed"
  local t0=$SECONDS
  "${EMU[@]}" "$EXAMPLE" --output-ids --max-length "$MAXLEN" --beam "$beam" --stats < "$WORK/$name.src" \
    > "$WORK/$name.out" 2> "$WORK/$name.stats" || { cat "$WORK/$name.stats" >&2; die "$name: the example failed"; }
  local lines; lines=$(wc -l < "$WORK/$name.src")
  if ! cmp -s "$WORK/$name.ref" "$WORK/$name.out"; then
    paste -d '\t' "$WORK/$name.ref" "$WORK/$name.out" | awk -F '\t' '$1 != $2 { printf "  line %d\n    reference: %s\n    example:   %s\n", NR, $1, $2 }' >&2
    die "$name (beam $beam): translations differ from the reference CLI"
  fi
  [ "$(stat_of "$WORK/$name.stats" heap_guard_active)" = 1 ] || die "the heap guard is not active (not glibc?)"
  local allocs; allocs=$(stat_of "$WORK/$name.stats" heap_allocations_at_exit)
  [ "$allocs" = 0 ] || die "$name: $allocs heap allocations between main and exit"
  say "$name: $lines lines, beam $beam, max length $MAXLEN: token-identical to the reference; 0 heap allocations ($((SECONDS - t0)) s)"
}

run greedy "$LINES" 1
if [ "$BEAM" -gt 1 ] && [ "$BEAM_LINES" -gt 0 ]; then run beam "$BEAM_LINES" "$BEAM"; fi

# ---- the RAM budget of the target's `mtlite info` vs what the example used ---------------------
"${INFO[@]}" info "$MODEL" --limits "$LIMITS" --json > "$WORK/info.json" || die "mtlite info --limits failed"
"$PY" - "$WORK/info.json" "$WORK/greedy.stats" "$WORK/beam.stats" "$LABEL" <<'EOF'
import json, os, sys
info = json.load(open(sys.argv[1]))["budget"]
def stats(path):
    if not os.path.exists(path):
        return None
    return {k: int(v) for k, v in (l.strip().split("=", 1) for l in open(path) if "=" in l)}
runs = [s for s in (stats(sys.argv[2]), stats(sys.argv[3])) if s]
label = sys.argv[4]
used = {k: max(s[k] for s in runs) for k in ("stack_high_water", "arena_high_water", "model_storage_high_water")}
g = runs[0]
problems = []
if g["arena_bytes"] != info["arena_bytes"] or g["model_storage_bytes"] != info["model_storage_bytes"]:
    problems.append("the example's arrays (%d, %d) are not the sizes `mtlite info` prints (%d, %d)"
                    % (g["arena_bytes"], g["model_storage_bytes"], info["arena_bytes"], info["model_storage_bytes"]))
for s in runs:
    if s["stack_high_water"] >= s["stack_painted"]:
        problems.append("the stack high-water reached the painted bottom (%d bytes)" % s["stack_painted"])
def check(name, printed, measured, upper=1.25):
    ratio = printed / measured if measured else float("inf")
    ok = measured <= printed <= upper * measured
    bounds = "[1, %g]" % upper if upper != float("inf") else ">= 1"
    print("check_example[%s]: %-34s printed %10d, used %10d: %.3f x %s" % (label, name, printed, measured, ratio,
          "ok" if ok else "OUT OF " + bounds))
    if not ok:
        problems.append("%s: printed %d is not within %s x used %d" % (name, printed, measured, bounds))
# The stack figure alone is only a bound: it covers the deepest option path of the probe
# (streaming callback, n-best, alignments), which this example need not take, plus a fixed
# margin that is large next to a few KiB. The budget (the totals below) is held to [1, 1.25].
check("stack of the translate call", info["stack_bytes"], used["stack_high_water"], float("inf"))
check("stack + arena", info["stack_bytes"] + info["arena_bytes"], used["stack_high_water"] + used["arena_high_water"])
check("RAM (+ model tables, static data)", info["ram_bytes"],
      used["stack_high_water"] + used["arena_high_water"] + used["model_storage_high_water"] + info["static_data_bytes"])
if problems:
    sys.exit("check_example[%s]: FAIL: %s" % (label, "; ".join(problems)))
EOF
say "all passed"
