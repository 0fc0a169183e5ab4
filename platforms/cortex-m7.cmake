# Bare-metal Arm Cortex-M7 (Armv7E-M with double-precision FPU, no Helium), arm-none-eabi gcc with
# newlib. Board: mps2-an500 (qemu-system-arm -M mps2-an500). The portable path: the runtime's
# minimal profile with the scalar reference kernel table.
#   cmake --preset cortex-m7 && cmake --build --preset cortex-m7
#   bash scripts/baremetal_test.sh cortex-m7
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR cortex-m7)
set(MTLITE_BAREMETAL_CPU_FLAGS "-mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard -mthumb")
set(MTLITE_BAREMETAL_DEFAULT_BOARD mps2-an500)
include("${CMAKE_CURRENT_LIST_DIR}/baremetal-common.cmake")
