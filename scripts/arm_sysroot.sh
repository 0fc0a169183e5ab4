#!/usr/bin/env bash
# Unpacks Debian's ARM XNNPACK, pthreadpool and cpuinfo packages into .sysroot/<arch>.
#
# Why: libxnnpack-dev and libpthreadpool-dev are not Multi-Arch, so their :arm64/:armhf copies
# cannot be co-installed with the amd64 ones (apt would remove the host packages and
# python3-torch). `apt-get download` + `dpkg -x` into a private folder works; the toolchain
# files in platforms/ list that folder in CMAKE_FIND_ROOT_PATH and qemu's LD_LIBRARY_PATH.
#
#   bash scripts/arm_sysroot.sh [arm64|armhf ...]     (default: arm64 armhf)
#
# Idempotent: a stamp file records the exact package versions; when they still match the
# apt candidates, nothing is downloaded. Needs `dpkg --add-architecture <arch>` + apt-get update
# (scripts/setup.sh does both). Exits non-zero with a clear message when something is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD/.sysroot

die() { echo "arm_sysroot: $*" >&2; exit 1; }
triplet_of() {
  case "$1" in
    arm64) echo aarch64-linux-gnu ;;
    armhf) echo arm-linux-gnueabihf ;;
    *) die "unknown architecture '$1' (use arm64 or armhf)" ;;
  esac
}
# Candidate versions of every package name we may use, for one arch, in ONE apt-cache call
# (apt-cache takes seconds per call with three architectures enabled). Names apt does not know
# are simply absent from the table.
ALL_NAMES=(libxnnpack-dev libxnnpack0 libxnnpack0.0 libpthreadpool-dev libpthreadpool0
           libcpuinfo0 libcpuinfo-dev libclog0 libclog-dev)
declare -A CAND
load_candidates() {
  CAND=()
  local name="" line
  while IFS= read -r line; do
    case "$line" in
      [a-z0-9]*:) name=${line%:}; name=${name%:*} ;;
      *Candidate:*) v=${line##*Candidate: }; [ "$v" != "(none)" ] && [ -n "$name" ] && CAND[$name]=$v ;;
    esac
  done < <(apt-cache policy "${ALL_NAMES[@]/%/:$1}" 2>/dev/null)
}
# First of the given names that exists (sonames in package names change across Debian
# releases: libxnnpack0 in bookworm, libxnnpack0.0 elsewhere).
pick() {
  for n in "$@"; do [ -n "${CAND[$n]:-}" ] && { echo "$n"; return 0; }; done
  return 1
}

archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(arm64 armhf)

for arch in "${archs[@]}"; do
  triplet=$(triplet_of "$arch")
  # (no `dpkg ... | grep -q` under pipefail: grep exiting early can fail the pipeline with SIGPIPE)
  archs_enabled="$(dpkg --print-architecture) $(dpkg --print-foreign-architectures | tr '\n' ' ')"
  [[ " $archs_enabled " == *" $arch "* ]] ||
    die "architecture $arch is not enabled: run 'dpkg --add-architecture $arch && apt-get update' (scripts/setup.sh does)"

  load_candidates "$arch"
  if [ -z "${CAND[libxnnpack-dev]:-}" ]; then
    # Lists made before the architecture was added (or cleaned): refresh once. A mirror mid-sync
    # can fail one index; that is fine as long as these packages are then known.
    echo "arm_sysroot: apt does not know libxnnpack-dev:$arch; running apt-get update" >&2
    apt-get update -qq || echo "arm_sysroot: apt-get update reported errors; continuing" >&2
    load_candidates "$arch"
  fi
  pkgs=()
  # Required: headers + .so symlink (-dev) and the shared libraries they point to.
  for group in "libxnnpack-dev" "libxnnpack0 libxnnpack0.0" \
               "libpthreadpool-dev" "libpthreadpool0" \
               "libcpuinfo0"; do
    # shellcheck disable=SC2086
    p=$(pick $group) || die "no package among '$group' for $arch (apt-get update after adding the architecture?)"
    pkgs+=("$p")
  done
  # Optional: clog was split out of cpuinfo in some releases; take it when it exists.
  for opt in libcpuinfo-dev libclog0 libclog-dev; do
    p=$(pick "$opt") && pkgs+=("$p") || true
  done

  want=$(for p in "${pkgs[@]}"; do echo "$p:$arch=${CAND[$p]}"; done)
  dest=$root/$arch
  if [ -f "$dest/.done" ] && [ "$(cat "$dest/.done")" = "$want" ] &&
     [ -f "$dest/usr/include/xnnpack.h" ] && [ -e "$dest/usr/lib/$triplet/libXNNPACK.so" ]; then
    echo "arm_sysroot: $arch up to date ($dest)"
    continue
  fi

  echo "arm_sysroot: unpacking ${pkgs[*]} ($arch) into $dest"
  mkdir -p "$root"
  tmp=$(mktemp -d "$root/.tmp.$arch.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/debs" "$tmp/root"
  ok=0
  for i in 1 2 3; do
    # apt-get download warns about running unsandboxed as root; that is harmless here.
    if (cd "$tmp/debs" && apt-get download -q=2 "${pkgs[@]/%/:$arch}" 2> >(grep -v unsandboxed >&2)); then
      ok=1; break
    fi
    echo "arm_sysroot: download failed (try $i/3), retrying" >&2; sleep 5
  done
  [ $ok = 1 ] || die "apt-get download failed for ${pkgs[*]} ($arch)"
  for d in "$tmp"/debs/*.deb; do dpkg-deb -x "$d" "$tmp/root"; done

  # Check that what the toolchain files look for is there before replacing the old sysroot.
  for f in usr/include/xnnpack.h usr/include/pthreadpool.h \
           "usr/lib/$triplet/libXNNPACK.so" "usr/lib/$triplet/libpthreadpool.so" \
           "usr/lib/$triplet/libcpuinfo.so.0"; do
    [ -e "$tmp/root/$f" ] || die "$f missing after unpacking ${pkgs[*]} ($arch)"
  done
  if command -v file >/dev/null; then
    [[ "$(file -L "$tmp/root/usr/lib/$triplet/libXNNPACK.so")" == *ARM* ]] ||
      die "libXNNPACK.so for $arch is not an ARM library"
  fi

  printf '%s' "$want" > "$tmp/root/.done"
  rm -rf "$dest"
  mv "$tmp/root" "$dest"
  rm -rf "$tmp"
  trap - EXIT
  echo "arm_sysroot: $arch ready"
done
