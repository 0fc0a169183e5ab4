#!/usr/bin/env bash
# Tests the installed package: installs BUILD_DIR into a temporary prefix, then
#  1. builds tests/package/consumer (C and C++) with find_package(mtlite) against that prefix,
#  2. builds the same two programs with `pkg-config --cflags --libs mtlite` only,
#  3. runs all four on MODEL and compares their output with the build tree's CLI,
#  4. checks that the installed headers include no generated FlatBuffers header,
#  5. imports the installed Python package from another directory (when it was built).
# usage: consumer_test.sh BUILD_DIR MODEL
set -euo pipefail
BUILD=$(cd "$1" && pwd)
MODEL=$2
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PREFIX=$TMP/prefix

cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
for f in include/mtlite/mtlite.h include/mtlite/mtlite.hpp lib/libmtlite.a lib/cmake/mtlite/mtliteConfig.cmake \
         lib/pkgconfig/mtlite.pc bin/mtlite; do
  [ -e "$PREFIX/$f" ] || { echo "not installed: $f" >&2; exit 1; }
done
if grep -nE '#include .*(flatbuffers|_generated\.h)' "$PREFIX"/include/mtlite/*; then
  echo "installed headers include generated FlatBuffers headers" >&2
  exit 1
fi

# 1. CMake package
cmake -S "$HERE/consumer" -B "$TMP/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$TMP/build" >/dev/null

# 2. pkg-config (no CMake)
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
[ "$(pkg-config --modversion mtlite)" = "$("$BUILD/mtlite" --version | cut -d' ' -f2)" ]
cc -std=c11 -Wall -Werror $(pkg-config --cflags mtlite) "$HERE/consumer/main.c" -o "$TMP/pc_c" $(pkg-config --libs mtlite)
c++ -std=c++17 -Wall -Werror $(pkg-config --cflags mtlite) "$HERE/consumer/main.cc" -o "$TMP/pc_cpp" $(pkg-config --libs mtlite)

# 3. run: greedy translations equal the CLI's
S1="A man is riding a bike down the street."
S2="Two dogs play in the snow."
want=$(printf '%s\n%s\n' "$S1" "$S2" | "$BUILD/mtlite" translate -m "$MODEL" --batch 2)
[ -n "$want" ]
for exe in "$TMP/build/consumer_c" "$TMP/build/consumer_cpp" "$TMP/pc_c" "$TMP/pc_cpp"; do
  got=$("$exe" "$MODEL" "$S1" "$S2" 2>/dev/null)
  if [ "$got" != "$want" ]; then
    printf '%s printed:\n%s\nexpected:\n%s\n' "$exe" "$got" "$want" >&2
    exit 1
  fi
done
"$PREFIX/bin/mtlite" --version >/dev/null

# 5. the installed Python package, from an unrelated directory, with no build tree on the path
if [ "${MTLITE_BUILD_PYTHON:-OFF}" = "ON" ]; then
  (cd "$TMP" && env -u PYTHONPATH PYTHONPATH="$PREFIX/$MTLITE_PYTHON_INSTALL_DIR" "${MTLITE_PYTHON:-/usr/bin/python3}" -c "
import mtlite, sys
assert mtlite.__file__.startswith('$PREFIX'), mtlite.__file__
t = mtlite.Translator('$MODEL')
out = [r.text for r in t.translate_batch(['$S1', '$S2'], beam_size=1)]
assert out == '''$want'''.split('\n'), out
")
fi
echo "consumer: CMake and pkg-config builds (C, C++) and the installed Python package work"
