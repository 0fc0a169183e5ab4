# 64-bit ARM Linux (ARMv8-A, NEON always on; the sdot kernels are built into their own file with
# -march=armv8.2-a+dotprod and picked at run time). Debian cross toolchain + qemu-user:
#   cmake --preset aarch64 && cmake --build --preset aarch64 && ctest --preset aarch64
# or by hand:
#   cmake -S . -B build-aarch64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=platforms/aarch64-linux-gnu.cmake \
#         -DCMAKE_BUILD_TYPE=Release -DMTLITE_MODEL_DIR=$PWD/build/models
# See docs/arm.md.
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(MTLITE_CROSS_TRIPLET aarch64-linux-gnu)
set(MTLITE_CROSS_DEBARCH arm64)
set(MTLITE_CROSS_QEMU qemu-aarch64)
include("${CMAKE_CURRENT_LIST_DIR}/linux-cross-common.cmake")
# No -march=native and no -mcpu: the build must run on any ARMv8-A core (Cortex-A53 up).
