# Shared part of the bare-metal toolchain files (platforms/cortex-m*.cmake): arm-none-eabi gcc,
# newlib-nano, no start files of the C library (platforms/baremetal/startup.c is the start-up).
# The file that includes this sets CMAKE_SYSTEM_PROCESSOR, MTLITE_BAREMETAL_CPU_FLAGS and
# MTLITE_BAREMETAL_DEFAULT_BOARD.
set(MTLITE_BAREMETAL_TRIPLET arm-none-eabi)
set(CMAKE_C_COMPILER ${MTLITE_BAREMETAL_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${MTLITE_BAREMETAL_TRIPLET}-g++)
set(CMAKE_ASM_COMPILER ${MTLITE_BAREMETAL_TRIPLET}-gcc)
# No OS to run a test program on: configure checks compile a static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_C_FLAGS_INIT "${MTLITE_BAREMETAL_CPU_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${MTLITE_BAREMETAL_CPU_FLAGS}")
set(CMAKE_ASM_FLAGS_INIT "${MTLITE_BAREMETAL_CPU_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nano.specs -nostartfiles")
set(MTLITE_BAREMETAL_BOARD "${MTLITE_BAREMETAL_DEFAULT_BOARD}" CACHE STRING
    "Board of the bare-metal programs (platforms/baremetal/<board>/)")
# Programs and headers of the host (flatc, FlatBuffers) are found by the top-level CMakeLists
# without the find root path; libraries and headers of the target come from the toolchain only.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
