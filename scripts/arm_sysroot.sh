#!/usr/bin/env bash
# XNNPACK and pthreadpool for arm64/armhf cannot be co-installed with the amd64 packages, so
# their Debian .debs are unpacked into .sysroot/<arch> (listed in the toolchain files).
set -euo pipefail
cd "$(dirname "$0")/.."
for arch in arm64 armhf; do
  dest=.sysroot/$arch
  [ -f "$dest/.done" ] && continue
  mkdir -p "$dest/debs"
  (cd "$dest/debs" && apt-get download -qq \
      libxnnpack-dev:$arch libxnnpack0:$arch libpthreadpool-dev:$arch libpthreadpool0:$arch \
      libcpuinfo-dev:$arch libcpuinfo0:$arch libclog-dev:$arch 2>/dev/null || \
   apt-get download -qq libxnnpack-dev:$arch libxnnpack0:$arch libpthreadpool-dev:$arch libpthreadpool0:$arch \
      libcpuinfo0:$arch)
  for d in "$dest"/debs/*.deb; do dpkg -x "$d" "$dest"; done
  touch "$dest/.done"
done
