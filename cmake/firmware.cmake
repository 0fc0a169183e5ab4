# Deploying to a device (docs/deploy.md): the CLI's pieces for it and the firmware example.
#  * MTLITE_MINIMAL: the runtime library has no file I/O, so Model::Load (model_file.cc) is
#    compiled into the CLI's library instead;
#  * footprint.h: section sizes of this build's runtime library, for `mtlite info --limits`
#    (flash and static data on this target);
#  * ram_probe.c: stack/arena painting, for the stack figure of `mtlite info --limits` and the
#    example's own measurements;
#  * examples/firmware: `mtlite_firmware_example` (MTLITE_BUILD_FIRMWARE_EXAMPLE).
if(MTLITE_MINIMAL)
  target_sources(mtlite_commands PRIVATE ${CMAKE_SOURCE_DIR}/runtime/src/model_file.cc)
endif()
target_sources(mtlite_commands PRIVATE ${CMAKE_SOURCE_DIR}/runtime/cli/ram_probe.c)

add_custom_command(
  OUTPUT ${MTLITE_GEN_DIR}/footprint.h
  COMMAND ${CMAKE_COMMAND} -DOBJDUMP=${CMAKE_OBJDUMP} -DRUNTIME_LIB=$<TARGET_FILE:mtlite>
          -DKERNELS_LIB=$<TARGET_FILE:mtlite_kernels> -DARCH=${MTLITE_ARCH} -DMINIMAL=$<BOOL:${MTLITE_MINIMAL}>
          -DOUT=${MTLITE_GEN_DIR}/footprint.h -P ${CMAKE_SOURCE_DIR}/cmake/footprint.cmake
  DEPENDS mtlite mtlite_kernels ${CMAKE_SOURCE_DIR}/cmake/footprint.cmake
  COMMENT "runtime library footprint (objdump -h)")
target_sources(mtlite_commands PRIVATE ${MTLITE_GEN_DIR}/footprint.h)

option(MTLITE_BUILD_FIRMWARE_EXAMPLE "Build examples/firmware (mtlite_firmware_example)" ON)
if(MTLITE_BUILD_FIRMWARE_EXAMPLE)
  add_subdirectory(examples/firmware)
endif()
