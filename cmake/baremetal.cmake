# Bare-metal Arm Cortex-M (platforms/cortex-m55.cmake, platforms/cortex-m7.cmake; docs/deploy.md
# "Run on a microcontroller"): included by the top-level CMakeLists when the toolchain file says
# CMAKE_SYSTEM_NAME Generic. The runtime is the minimal profile (no threads, XNNPACK, files,
# environment, exceptions or RTTI); there is no target `mtlite` CLI (the host's embeds the model
# and prints the budget). Board support, shared by every bare-metal program of the tree:
#   platforms/baremetal/startup.c        vector table, reset (FPU/MVE enable), faults, _sbrk
#   platforms/baremetal/semihosting.c    console and exit (bm_read, bm_write, bm_exit)
#   platforms/baremetal/syscalls.c       hosted profile only: newlib's stdio on the console
#   platforms/baremetal/sections.ld      output sections; <board>/memory.ld: MEMORY;
#   platforms/baremetal/<board>/<board>.ld, <board>-hosted.ld: the two profiles' placement
#
#   mtlite_baremetal_executable(<target> [PROFILE firmware|hosted] [MODEL_REGION <region>])
# links <target> (an add_executable of C/C++ sources) for MTLITE_BAREMETAL_BOARD: adds the board
# sources and include directory, the linker script, --gc-sections, a map file <target>.map next
# to the ELF. PROFILE firmware (the default): <board>.ld, no C library stdio, a 64 KB heap, and
# the model region alias it writes (MODEL_REGION; default: the board's first model region).
# PROFILE hosted, for test programs: <board>-hosted.ld (a heap of megabytes in the board's large
# RAM: 256 MB of DDR on mps3-an547, 16 MB of PSRAM on mps2-an500) and syscalls.c: printf,
# iostreams and stdin through semihosting; main's return value ends the program through exit()
# (stdio flushed).
if(NOT MTLITE_MINIMAL)
  message(FATAL_ERROR "A bare-metal build is a minimal build: configure with -DMTLITE_MINIMAL=ON "
          "(cmake --preset cortex-m55 / cortex-m7)")
endif()
set(MTLITE_BAREMETAL_DIR ${CMAKE_SOURCE_DIR}/platforms/baremetal)
if(NOT EXISTS ${MTLITE_BAREMETAL_DIR}/${MTLITE_BAREMETAL_BOARD}/${MTLITE_BAREMETAL_BOARD}.ld)
  message(FATAL_ERROR "MTLITE_BAREMETAL_BOARD='${MTLITE_BAREMETAL_BOARD}': no "
          "platforms/baremetal/${MTLITE_BAREMETAL_BOARD}/${MTLITE_BAREMETAL_BOARD}.ld")
endif()
# The board's read-only regions that can hold a model, in order of preference (smallest, fastest
# first), with their sizes; `mtlite info --board` has the same table (runtime/cli/board_info.cc).
if(MTLITE_BAREMETAL_BOARD STREQUAL "mps3-an547")
  set(MTLITE_BAREMETAL_MODEL_REGIONS QSPI DDR)
  set(MTLITE_BAREMETAL_REGION_BYTES_QSPI 8388608)
  set(MTLITE_BAREMETAL_REGION_BYTES_DDR 2147483648)
  set(MTLITE_BAREMETAL_QEMU_MACHINE mps3-an547)
elseif(MTLITE_BAREMETAL_BOARD STREQUAL "mps2-an500")
  set(MTLITE_BAREMETAL_MODEL_REGIONS PSRAM)
  set(MTLITE_BAREMETAL_REGION_BYTES_PSRAM 16777216)
  set(MTLITE_BAREMETAL_QEMU_MACHINE mps2-an500)
else()
  message(FATAL_ERROR "MTLITE_BAREMETAL_BOARD='${MTLITE_BAREMETAL_BOARD}' has no model regions in cmake/baremetal.cmake")
endif()

# FlatBuffers is header-only: its headers come from the host's package, through a directory that
# holds them alone (never the host's /usr/include, whose C library headers are not the target's).
find_path(MTLITE_HOST_FLATBUFFERS_DIR flatbuffers/flatbuffers.h PATHS /usr/local/include /usr/include
          NO_CMAKE_FIND_ROOT_PATH NO_DEFAULT_PATH REQUIRED)
set(_mtlite_fb ${CMAKE_BINARY_DIR}/host-headers)
file(MAKE_DIRECTORY ${_mtlite_fb})
if(NOT EXISTS ${_mtlite_fb}/flatbuffers)
  file(CREATE_LINK ${MTLITE_HOST_FLATBUFFERS_DIR}/flatbuffers ${_mtlite_fb}/flatbuffers SYMBOLIC)
endif()
set(FLATBUFFERS_INCLUDE_DIR ${_mtlite_fb} CACHE PATH "FlatBuffers headers" FORCE)

# Position-dependent code: one image at fixed addresses, no GOT to relocate at start-up.
set(CMAKE_POSITION_INDEPENDENT_CODE OFF)
# No exceptions, RTTI or thread-safe statics (one core, no threads) in any bare-metal code.
add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions> $<$<COMPILE_LANGUAGE:CXX>:-fno-rtti>
                    $<$<COMPILE_LANGUAGE:CXX>:-fno-threadsafe-statics>)

function(mtlite_baremetal_executable target)
  cmake_parse_arguments(ARG "" "MODEL_REGION;PROFILE" "" ${ARGN})
  if(NOT ARG_PROFILE)
    set(ARG_PROFILE firmware)
  endif()
  set(_sources ${MTLITE_BAREMETAL_DIR}/startup.c ${MTLITE_BAREMETAL_DIR}/semihosting.c)
  set(_ld_dir ${CMAKE_CURRENT_BINARY_DIR}/${target}-ld)
  if(ARG_PROFILE STREQUAL "firmware")
    if(NOT ARG_MODEL_REGION)
      list(GET MTLITE_BAREMETAL_MODEL_REGIONS 0 ARG_MODEL_REGION)
    endif()
    file(MAKE_DIRECTORY ${_ld_dir})
    file(WRITE ${_ld_dir}/model_region.ld.tmp "REGION_ALIAS(\"MODEL_FLASH\", ${ARG_MODEL_REGION});\n")
    file(COPY_FILE ${_ld_dir}/model_region.ld.tmp ${_ld_dir}/model_region.ld ONLY_IF_DIFFERENT)
    set(_board_ld ${MTLITE_BAREMETAL_DIR}/${MTLITE_BAREMETAL_BOARD}/${MTLITE_BAREMETAL_BOARD}.ld)
    set(_ld_deps ${_ld_dir}/model_region.ld)
    set(_ld_search -L${_ld_dir})
  elseif(ARG_PROFILE STREQUAL "hosted")
    if(ARG_MODEL_REGION)
      message(FATAL_ERROR "mtlite_baremetal_executable(${target}): PROFILE hosted places the model "
              "itself (in the board's large RAM); no MODEL_REGION")
    endif()
    set(_board_ld ${MTLITE_BAREMETAL_DIR}/${MTLITE_BAREMETAL_BOARD}/${MTLITE_BAREMETAL_BOARD}-hosted.ld)
    list(APPEND _sources ${MTLITE_BAREMETAL_DIR}/syscalls.c)
    set(_ld_deps "")
    set(_ld_search "")
    # newlib-nano's printf formats floating point only when asked to
    target_link_options(${target} PRIVATE LINKER:-u,_printf_float)
  else()
    message(FATAL_ERROR "mtlite_baremetal_executable(${target}): PROFILE '${ARG_PROFILE}' is "
            "neither firmware nor hosted")
  endif()
  target_sources(${target} PRIVATE ${_sources})
  target_include_directories(${target} PRIVATE ${MTLITE_BAREMETAL_DIR})
  target_link_options(${target} PRIVATE -T${_board_ld} ${_ld_search} -L${MTLITE_BAREMETAL_DIR}
                      -Wl,--gc-sections -Wl,-Map=$<TARGET_FILE:${target}>.map -Wl,--no-warn-execstack)
  set_target_properties(${target} PROPERTIES SUFFIX ".elf"
    LINK_DEPENDS "${_board_ld};${MTLITE_BAREMETAL_DIR}/${MTLITE_BAREMETAL_BOARD}/memory.ld;${MTLITE_BAREMETAL_DIR}/sections.ld;${_ld_deps}")
endfunction()
