#!/usr/bin/env bash
# Installs everything mtlite needs on a fresh Debian bookworm machine (apt only), builds the
# host tree in build/, converts the bundled demo model, translates a sample sentence and installs
# mtlite into /usr/local (CLI, headers + static libraries with CMake and pkg-config files, and the
# Python package, which Debian's /usr/bin/python3 then imports from any directory).
#   MTLITE_INSTALL_PREFIX=DIR  install there instead (MTLITE_INSTALL_PREFIX= skips the install)
#   MTLITE_SETUP_ARM=0  skips the ARM cross toolchains and sysroot (default: install them)
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

PKGS=(build-essential cmake ninja-build pkg-config git
      libflatbuffers-dev flatbuffers-compiler nlohmann-json3-dev zlib1g-dev
      libsentencepiece-dev libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
      libgtest-dev libgmock-dev libbenchmark-dev
      clang-14 libclang-rt-14-dev valgrind
      python3 python3-numpy python3-torch libopenblas0-pthread python3-sentencepiece python3-matplotlib
      python3-dev pybind11-dev python3-pytest
      emscripten node-acorn nodejs node-typescript chromium firefox-esr)
ARM_PKGS=(crossbuild-essential-arm64 crossbuild-essential-armhf qemu-user
          libc6:arm64 libc6:armhf libstdc++6:arm64 libstdc++6:armhf
          libgtest-dev:arm64 libgtest-dev:armhf libflatbuffers-dev:arm64 libflatbuffers-dev:armhf
          gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm)  # bare metal (Cortex-M)

apt_update() {  # a mirror mid-sync can fail one index; retry, and carry on if packages install
  for i in 1 2 3; do $SUDO apt-get update -qq && return 0; sleep 5; done
  echo "setup: apt-get update reported errors; continuing" >&2
}
missing() { for p in "$@"; do dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "ok installed" || echo "$p"; done; }

want=("${PKGS[@]}")
if [ "${MTLITE_SETUP_ARM:-1}" = 1 ]; then
  for a in arm64 armhf; do dpkg --print-foreign-architectures | grep -qx $a || $SUDO dpkg --add-architecture $a; done
  want+=("${ARM_PKGS[@]}")
fi
todo=($(missing "${want[@]}"))
if [ ${#todo[@]} -gt 0 ]; then
  apt_update
  for i in 1 2 3; do
    $SUDO apt-get install -y -qq --no-install-recommends "${todo[@]}" && break
    [ $i = 3 ] && { echo "setup: apt-get install failed" >&2; exit 1; }
    sleep 5; apt_update
  done
fi
if [ "${MTLITE_SETUP_ARM:-1}" = 1 ]; then bash scripts/arm_sysroot.sh; fi

# The Marian-checkpoint checks use Bergamot (Marian compiled to WebAssembly, an npm package) as an
# independent oracle: tests/reference/bergamot, installed from its package-lock.json.
if ! command -v npm >/dev/null 2>&1; then
  apt_update
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm || { echo "setup: nodejs/npm install failed" >&2; exit 1; }
fi
for i in 1 2 3; do
  (cd tests/reference/bergamot && npm ci --no-audit --no-fund --loglevel=error) && break
  [ $i = 3 ] && { echo "setup: npm ci in tests/reference/bergamot failed" >&2; exit 1; }
  sleep 5
done
# The page test drives headless Firefox through puppeteer-core (tests/wasm, from its package-lock.json).
for i in 1 2 3; do
  (cd tests/wasm && npm ci --no-audit --no-fund --loglevel=error) && break
  [ $i = 3 ] && { echo "setup: npm ci in tests/wasm failed" >&2; exit 1; }
  sleep 5
done

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
echo "== translate a sample with the bundled demo model (int8) =="
./build/mtlite translate -m build/models/demo.int8.mtlite "A man is riding a bike down the street."
echo "== WebAssembly modules of the JavaScript package web/ =="
bash scripts/wasm_build.sh

PREFIX=${MTLITE_INSTALL_PREFIX-/usr/local}
if [ -n "$PREFIX" ]; then
  echo "== install into $PREFIX =="
  if [ -w "$PREFIX" ] || [ ! -e "$PREFIX" ]; then cmake --install build --prefix "$PREFIX" >/dev/null
  else $SUDO cmake --install build --prefix "$PREFIX" >/dev/null; fi
  if [ "$PREFIX" = /usr/local ]; then
    (cd / && /usr/bin/python3 -c "import mtlite; print('python: mtlite', mtlite.__version__, 'from', mtlite.__file__)")
  fi
fi
