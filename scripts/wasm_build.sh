#!/usr/bin/env bash
# Builds the WebAssembly modules of the JavaScript package web/ (docs/wasm.md) with emscripten
# (Debian: emscripten node-acorn; scripts/setup.sh installs them), through the CMake preset `wasm`:
#   build-wasm/         SIMD128 and the kernel table "wasm-simd128", and the kernel test program
#                       (mtlite_wasm_kernel_test.wasm, run by scripts/wasm_test.sh)
#   build-wasm-nosimd/  the scalar reference only, for engines without SIMD128
# and copies the modules into web/dist/ (mtlite.wasm, mtlite-nosimd.wasm), where web/mtlite.js
# loads them from. Prints each module's path and size, raw and gzipped.
#   MTLITE_WASM_NOSIMD=0  skips the module without SIMD128; JOBS (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
# emscripten's JavaScript optimizer needs Debian's acorn (node-acorn) on node's module path.
export NODE_PATH=${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs
for tool in emcmake emcc node; do
  command -v $tool >/dev/null || { echo "wasm_build: $tool missing (apt-get install emscripten node-acorn nodejs; scripts/setup.sh does)" >&2; exit 1; }
done
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

build() {  # <dir> <simd ON|OFF> <module name> <targets...>
  local dir=$1 simd=$2 name=$3
  shift 3
  mkdir -p "$dir"
  emcmake cmake --preset wasm -B "$dir" -DMTLITE_WASM_SIMD="$simd" -DMTLITE_WASM_NAME="$name" "${launcher[@]}" \
    >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log" >&2; exit 1; }
  cmake --build "$dir" -j"$JOBS" --target "$@"
}

mkdir -p web/dist
size() {  # <file>: path, bytes, gzipped bytes
  printf 'wasm_build: %s: %d bytes, %d gzipped\n' "$1" "$(stat -c %s "$1")" "$(gzip -9 -c "$1" | wc -c)"
}
build build-wasm ON mtlite mtlite_wasm mtlite_wasm_kernel_test
cp build-wasm/mtlite.wasm web/dist/mtlite.wasm
if [ "${MTLITE_WASM_NOSIMD:-1}" != 0 ]; then
  build build-wasm-nosimd OFF mtlite-nosimd mtlite_wasm
  cp build-wasm-nosimd/mtlite-nosimd.wasm web/dist/mtlite-nosimd.wasm
fi
for f in web/dist/mtlite.wasm web/dist/mtlite-nosimd.wasm; do
  [ -f "$f" ] && size "$f"
done
