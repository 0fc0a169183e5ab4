#!/usr/bin/env bash
# Runs the README's "Deploy to a device" commands exactly as written, so the README is what is
# tested:
#   1. takes the first ```sh block after the "## Deploy to a device" heading of README.md;
#      for armhf the target names in it are swapped (aarch64-linux-gnu -> arm-linux-gnueabihf,
#      qemu-aarch64 -> qemu-arm), as the README tells the reader;
#   2. copies the tree (tracked and untracked files that git does not ignore: no build outputs, no
#      .sysroot) into a temporary directory and runs the commands there, one by one, with the host
#      build's `mtlite` first on PATH (the README assumes the one scripts/setup.sh installs);
#   3. the last command translates a sentence with the built firmware example under qemu-user: its
#      output must be the host CLI's translation of the same sentence (the kernels are
#      bit-identical across ISAs), and the example must be statically linked;
#   4. a cross configure of the copy with only -DCMAKE_TOOLCHAIN_FILE (and the sysroot of
#      scripts/arm_sysroot.sh) must generate a build that has everything it needs (ninja's dry
#      run): without a model the firmware example is left out.
#
#   bash scripts/deploy_test.sh <aarch64|armhf>
# Environment: JOBS (default 2; the README's `cmake --build` gets it as CMAKE_BUILD_PARALLEL_LEVEL),
# MTLITE_HOST_BUILD (default build; built if it lacks the CLI), MTLITE_DEPLOY_KEEP=1 keeps the copy.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD

arch=${1:-}
case "$arch" in
  aarch64) triplet=aarch64-linux-gnu;   qemu=qemu-aarch64; debarch=arm64 ;;
  armhf)   triplet=arm-linux-gnueabihf; qemu=qemu-arm;     debarch=armhf ;;
  *) echo "usage: $0 <aarch64|armhf>" >&2; exit 2 ;;
esac
JOBS=${JOBS:-2}
HOST=$(realpath -m "${MTLITE_HOST_BUILD:-build}")

say() { echo "deploy_test[$arch]: $*"; }
die() { echo "deploy_test[$arch]: FAIL: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
T0=$(now)

command -v "$triplet-g++" >/dev/null || die "$triplet-g++ missing (apt-get install crossbuild-essential-*; scripts/setup.sh does)"
command -v "$qemu" >/dev/null || die "$qemu missing (apt-get install qemu-user)"

# ---- 1. the README's commands -------------------------------------------------------------------
block=$(awk '
  /^## / { in_section = ($0 == "## Deploy to a device") ; next }
  in_section && !in_block && /^```sh$/ { in_block = 1; next }
  in_block && /^```$/ { exit }
  in_block { print }' README.md)
[ -n "$block" ] || die "README.md has no \`\`\`sh block under \"## Deploy to a device\""
if [ "$arch" = armhf ]; then
  block=$(sed -e 's/aarch64-linux-gnu/arm-linux-gnueabihf/g' -e 's/qemu-aarch64/qemu-arm/g' <<< "$block")
fi
# One command per entry: continuation lines joined.
mapfile -t commands < <(awk '{ line = line $0 } /\\$/ { sub(/\\$/, "", line); next } { print line; line = "" }' <<< "$block")
[ "${#commands[@]}" -ge 2 ] || die "the deploy block has fewer than two commands"
last=${commands[${#commands[@]}-1]}
grep -q "$qemu" <<< "$last" || die "the deploy block's last command does not run the example under $qemu: $last"

# ---- 2. the host's mtlite, a clean copy of the tree -------------------------------------------
t=$(now)
if [ ! -x "$HOST/mtlite" ]; then
  if [ ! -f "$HOST/build.ninja" ] && [ ! -f "$HOST/Makefile" ]; then
    cmake -S "$SRC" -B "$HOST" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$HOST" -j"$JOBS" --target mtlite_cli
fi
BIN=$(mktemp -d)
WORK=$(mktemp -d)
cleanup() { rm -rf "$BIN"; [ "${MTLITE_DEPLOY_KEEP:-0}" = 1 ] && say "copy kept in $WORK" || rm -rf "$WORK"; }
trap cleanup EXIT
ln -s "$HOST/mtlite" "$BIN/mtlite"
git -C "$SRC" ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi; done |
  tar -C "$SRC" --null -T - -cf - | tar -C "$WORK" -xf -
say "host mtlite and a clean copy in $WORK ready ($(since "$t") s)"

# ---- 3. run them --------------------------------------------------------------------------------
export PATH="$BIN:$PATH" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS"
unset QEMU_CPU QEMU_LD_PREFIX MTLITE_KERNELS MTLITE_ASSUME_DOTPROD
LOG=$WORK/deploy.log
for c in "${commands[@]:0:${#commands[@]}-1}"; do
  t=$(now)
  say "\$ $c"
  (cd "$WORK" && bash -euo pipefail -c "$c") >>"$LOG" 2>&1 || { tail -n 40 "$LOG" >&2; die "command failed: $c"; }
  say "  ok ($(since "$t") s)"
done
for f in en-de.mtlite mtlite_budget.h model_data.S; do
  grep -q -- "$f" <<< "$block" || continue
  [ -s "$WORK/$f" ] || die "$f was not written"
done
EXAMPLE=$(find "$WORK" -name mtlite_firmware_example -type f -perm -u+x | head -n 1)
[ -n "$EXAMPLE" ] || die "no mtlite_firmware_example was built"
if readelf -l "$EXAMPLE" | grep -q INTERP; then die "$EXAMPLE is not statically linked"; fi
say "\$ $last"
got=$(cd "$WORK" && bash -euo pipefail -c "$last" 2>>"$LOG") || { tail -n 20 "$LOG" >&2; die "command failed: $last"; }
[ -n "$got" ] || die "the example printed no translation"
sentence=$(sed -n 's/^echo "\([^"]*\)" |.*/\1/p' <<< "$last")
if [ -n "$sentence" ]; then
  want=$(printf '%s\n' "$sentence" | "$HOST/mtlite" translate -m "$WORK/en-de.mtlite" -q)
  [ "$got" = "$want" ] || die "the $arch example translated \"$sentence\" as \"$got\", the host CLI as \"$want\""
fi
say "\"$sentence\" -> \"$got\" (as the host CLI)"

# ---- 4. a cross configure with only the toolchain file: no model, so no firmware example -------
# The full library links XNNPACK and pthreadpool from the private sysroot (docs/arm.md).
t=$(now)
bash scripts/arm_sysroot.sh "$debarch" >>"$LOG" 2>&1 || { tail -n 5 "$LOG" >&2; die "scripts/arm_sysroot.sh $debarch failed"; }
ln -s "$SRC/.sysroot" "$WORK/.sysroot"
(cd "$WORK" && cmake -S . -B build-toolchain-only -G Ninja -DCMAKE_TOOLCHAIN_FILE="platforms/$triplet.cmake" \
   -DCMAKE_SUPPRESS_REGENERATION=ON) \
  >>"$LOG" 2>&1 || { tail -n 20 "$LOG" >&2; die "configure with only -DCMAKE_TOOLCHAIN_FILE failed"; }
# No regeneration rule: with one, a dry run stops after "Re-running CMake" and checks nothing.
ninja -C "$WORK/build-toolchain-only" -n >>"$LOG" 2>&1 ||
  { tail -n 5 "$LOG" >&2; die "a cross configure with only -DCMAKE_TOOLCHAIN_FILE does not build (dry run)"; }
say "a configure with only the toolchain file builds (dry run, $(since "$t") s)"
say "passed ($(since "$T0") s)"
