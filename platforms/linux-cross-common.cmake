# Shared part of the Debian/Ubuntu Linux cross toolchain files (aarch64-linux-gnu.cmake,
# arm-linux-gnueabihf.cmake). The including file sets:
#   MTLITE_CROSS_TRIPLET  GNU triplet of the cross compiler and multiarch dirs (aarch64-linux-gnu)
#   MTLITE_CROSS_DEBARCH  Debian architecture (arm64), names the .sysroot/<debarch> folder
#   MTLITE_CROSS_QEMU     qemu-user binary that runs the target's programs (qemu-aarch64)
#   CMAKE_SYSTEM_PROCESSOR
# What it needs on the build machine (scripts/setup.sh installs it):
#   crossbuild-essential-<debarch>, qemu-user, libgtest-dev:<debarch>, libflatbuffers-dev:<debarch>,
#   and .sysroot/<debarch> made by scripts/arm_sysroot.sh (XNNPACK, pthreadpool, cpuinfo: those are
#   not Multi-Arch in Debian and cannot be co-installed with the amd64 packages).
# This file is read again for every try_compile; keep it free of side effects.
set(CMAKE_SYSTEM_NAME Linux)

set(CMAKE_C_COMPILER   ${MTLITE_CROSS_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${MTLITE_CROSS_TRIPLET}-g++)
# GCC's -Wpsabi notes ("parameter passing ... changed in GCC 7.1/9.1") are about ABI compatibility
# with objects built by old compilers; everything here is built by one compiler: silence them.
if(NOT CMAKE_CXX_FLAGS_INIT MATCHES "-Wno-psabi")  # this file is read more than once
  string(APPEND CMAKE_CXX_FLAGS_INIT " -Wno-psabi")
endif()
# Debian multiarch: lets find_library/find_package look in /usr/lib/<triplet>.
set(CMAKE_LIBRARY_ARCHITECTURE ${MTLITE_CROSS_TRIPLET})

get_filename_component(MTLITE_CROSS_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../.sysroot/${MTLITE_CROSS_DEBARCH}" ABSOLUTE)
# The minimal profile (MTLITE_MINIMAL) links none of it.
if(NOT MTLITE_MINIMAL AND NOT EXISTS "${MTLITE_CROSS_SYSROOT}/usr/include/xnnpack.h")
  message(WARNING "${MTLITE_CROSS_SYSROOT} has no XNNPACK/pthreadpool: run scripts/arm_sysroot.sh ${MTLITE_CROSS_DEBARCH}")
endif()

# Search order: the private sysroot first (XNNPACK, pthreadpool), then the cross toolchain's own
# dir, then / for the multiarch packages (/usr/lib/<triplet>, /usr/include). `/` is needed, or
# GTest and the flatbuffers headers from the :<debarch> packages are not found.
set(CMAKE_FIND_ROOT_PATH "${MTLITE_CROSS_SYSROOT}" "/usr/${MTLITE_CROSS_TRIPLET}" "/")
# Programs (flatc) are host programs; everything else must come from the target roots.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config must not hand out the host's x86-64 libraries.
set(ENV{PKG_CONFIG_LIBDIR} "${MTLITE_CROSS_SYSROOT}/usr/lib/${MTLITE_CROSS_TRIPLET}/pkgconfig:/usr/lib/${MTLITE_CROSS_TRIPLET}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# XNNPACK's libXNNPACK.so.0 needs libcpuinfo.so.0, which only the private sysroot has: tell the
# linker where to resolve it (it is not linked directly).
set(CMAKE_EXE_LINKER_FLAGS_INIT    "-Wl,-rpath-link,${MTLITE_CROSS_SYSROOT}/usr/lib/${MTLITE_CROSS_TRIPLET}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${MTLITE_CROSS_SYSROOT}/usr/lib/${MTLITE_CROSS_TRIPLET}")

# ctest (and gtest_discover_tests, which runs at ctest time: DISCOVERY_MODE PRE_TEST) run target
# programs through qemu-user. Not `-L /usr/<triplet>` alone: that mixes the cross loader with the
# multiarch libc and forked children hang (armhf: segfault). With -E LD_LIBRARY_PATH the cross libc
# and libstdc++ are taken first, then the private sysroot, then the multiarch dirs.
# The CPU is left to qemu's default (`max` on aarch64) so QEMU_CPU=<cpu> in the environment picks
# another one (e.g. QEMU_CPU=cortex-a72: no dotprod).
find_program(MTLITE_QEMU_EXECUTABLE ${MTLITE_CROSS_QEMU} NO_CMAKE_FIND_ROOT_PATH)
if(NOT MTLITE_QEMU_EXECUTABLE)
  message(WARNING "${MTLITE_CROSS_QEMU} not found (Debian: qemu-user): ctest cannot run the ${CMAKE_SYSTEM_PROCESSOR} tests")
  set(MTLITE_QEMU_EXECUTABLE ${MTLITE_CROSS_QEMU})
endif()
# -DCMAKE_CROSSCOMPILING_EMULATOR=... on the command line takes precedence.
if(NOT CMAKE_CROSSCOMPILING_EMULATOR)
  set(CMAKE_CROSSCOMPILING_EMULATOR
      "${MTLITE_QEMU_EXECUTABLE};-L;/usr/${MTLITE_CROSS_TRIPLET};-E;LD_LIBRARY_PATH=/usr/${MTLITE_CROSS_TRIPLET}/lib:${MTLITE_CROSS_SYSROOT}/usr/lib/${MTLITE_CROSS_TRIPLET}:/usr/lib/${MTLITE_CROSS_TRIPLET}:/lib/${MTLITE_CROSS_TRIPLET}")
endif()
# Recorded in the cache for scripts (scripts/cross_test.sh runs the CLI through the same command).
set(MTLITE_CROSS_EMULATOR "${CMAKE_CROSSCOMPILING_EMULATOR}" CACHE INTERNAL "emulator command (;-list)")
