# Bare-metal Arm Cortex-M55 (Armv8.1-M mainline with Helium/MVE and FPU), arm-none-eabi gcc with
# newlib (Debian: gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib).
# Board: mps3-an547 (Corstone-300; qemu-system-arm -M mps3-an547). The runtime is the minimal
# profile (no threads, files, environment or exceptions: runtime/platform/baremetal.cc), its
# kernel table "mve" when runtime/kernels/mve/ is there, else the scalar reference.
#   cmake --preset cortex-m55 && cmake --build --preset cortex-m55
#   bash scripts/baremetal_test.sh cortex-m55
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR cortex-m55)
set(MTLITE_BAREMETAL_CPU_FLAGS "-mcpu=cortex-m55 -mfloat-abi=hard -mthumb")
set(MTLITE_BAREMETAL_DEFAULT_BOARD mps3-an547)
include("${CMAKE_CURRENT_LIST_DIR}/baremetal-common.cmake")
