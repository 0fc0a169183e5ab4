# 32-bit ARMv7-A Linux, hard-float ABI, with NEON (Cortex-A7/A9/A15/A17, Raspberry Pi 2+ in 32-bit
# mode). Debian's armhf default is -mfpu=vfpv3-d16 (no NEON), and its -mfpu=auto does not enable
# the NEON intrinsics, so the FPU is named here for every file. Binaries need a NEON core.
#   cmake --preset armhf && cmake --build --preset armhf && ctest --preset armhf
# See docs/arm.md.
set(CMAKE_SYSTEM_PROCESSOR armv7)
set(MTLITE_CROSS_TRIPLET arm-linux-gnueabihf)
set(MTLITE_CROSS_DEBARCH armhf)
set(MTLITE_CROSS_QEMU qemu-arm)
set(CMAKE_C_FLAGS_INIT   "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard")
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard")
include("${CMAKE_CURRENT_LIST_DIR}/linux-cross-common.cmake")
