# WebAssembly (docs/wasm.md): `bash scripts/wasm_build.sh` configures this through emcmake with the
# preset `wasm` (MTLITE_MINIMAL: no threads, XNNPACK, mmap or file I/O) and builds
#   mtlite_wasm              <build>/mtlite.wasm: the runtime and the C API (runtime/include/mtlite/mtlite.h)
#                            with the glue of web/src/mtlite_web.cc, a WASI reactor that web/mtlite.js
#                            instantiates itself (no emscripten JavaScript)
#   mtlite_wasm_kernel_test  <build>/mtlite_wasm_kernel_test.wasm: the kernel tests of tests/unit (every
#                            table against the reference, bit for bit) on a small stand-in for GoogleTest
#                            (tests/wasm/), a WASI command run by tests/wasm/run_wasi.mjs under node
# MTLITE_WASM_SIMD=ON (default): SIMD128 and the kernel table "wasm-simd128" (runtime/kernels/wasm/);
# OFF: the scalar reference only, for engines without SIMD128 (an engine rejects a whole module that
# holds an instruction it lacks, so the choice is made by loading one module or the other).
if(NOT MTLITE_MINIMAL)
  message(FATAL_ERROR "The WebAssembly build is a minimal build: configure with -DMTLITE_MINIMAL=ON "
          "(emcmake cmake --preset wasm, or scripts/wasm_build.sh)")
endif()
option(MTLITE_WASM_SIMD "WebAssembly: SIMD128 and the wasm-simd128 kernel table" ON)
set(MTLITE_WASM_NAME "mtlite" CACHE STRING "File name (without .wasm) of the WebAssembly module")

# FlatBuffers is header-only: its headers come from the host's package, through a directory that
# holds them alone (never the host's /usr/include, whose C library headers are not the target's).
find_path(MTLITE_HOST_FLATBUFFERS_DIR flatbuffers/flatbuffers.h PATHS /usr/local/include /usr/include
          NO_CMAKE_FIND_ROOT_PATH REQUIRED)
set(_mtlite_fb ${CMAKE_BINARY_DIR}/host-headers)
file(MAKE_DIRECTORY ${_mtlite_fb})
if(NOT EXISTS ${_mtlite_fb}/flatbuffers)
  file(CREATE_LINK ${MTLITE_HOST_FLATBUFFERS_DIR}/flatbuffers ${_mtlite_fb}/flatbuffers SYMBOLIC)
endif()
set(FLATBUFFERS_INCLUDE_DIR ${_mtlite_fb} CACHE PATH "FlatBuffers headers" FORCE)

# No exceptions or RTTI in the runtime. The minimal build leaves the thread pool's and XNNPACK's
# members unused, which clang (unlike the firmware's gcc) reports.
add_compile_options(-fno-exceptions -fno-rtti -Wno-unused-private-field -Wno-unused-const-variable)

# The functions web/mtlite.js calls: the C API and the glue (web/src/mtlite_web.cc).
set(_mtlite_wasm_exports
  mtlite_version mtlite_kernel_table mtlite_last_error mtlite_limits_default
  mtlite_model_storage_bytes mtlite_model_from_buffer_storage mtlite_model_free
  mtlite_arena_bytes mtlite_translator_create_in_arena mtlite_translator_free
  mtlite_translator_create_pivot mtlite_translator_arena_bytes
  mtlite_result_count mtlite_result_get
  mtlite_profile_summary_get mtlite_profile_entry_get mtlite_profile_event_get
  mtlite_translate_text mtlite_text_sentence_get mtlite_text_word_get
  mtlite_web_translate mtlite_web_translate_text mtlite_web_alloc mtlite_web_free mtlite_web_model_info
  mtlite_web_html_text mtlite_web_vocab_new mtlite_web_vocab_free mtlite_web_tokenize)
list(TRANSFORM _mtlite_wasm_exports PREPEND "'_")
list(TRANSFORM _mtlite_wasm_exports APPEND "'")
list(JOIN _mtlite_wasm_exports "," _mtlite_wasm_exports)

set(_mtlite_wasm_link
  -sSTANDALONE_WASM=1 -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=4194304 -sTOTAL_STACK=1048576
  -sFILESYSTEM=0 -sSUPPORT_LONGJMP=0)
add_executable(mtlite_wasm ${CMAKE_SOURCE_DIR}/web/src/mtlite_web.cc)
set_target_properties(mtlite_wasm PROPERTIES OUTPUT_NAME ${MTLITE_WASM_NAME} SUFFIX ".wasm")
target_link_libraries(mtlite_wasm PRIVATE mtlite)
# The glue reads two of the runtime's internal headers (the HTML parser, the vocabulary tables).
target_include_directories(mtlite_wasm PRIVATE ${CMAKE_SOURCE_DIR}/runtime/src)
target_link_options(mtlite_wasm PRIVATE ${_mtlite_wasm_link} --no-entry --js-library ${CMAKE_SOURCE_DIR}/web/src/imports.js
  "SHELL:-s EXPORTED_FUNCTIONS=[${_mtlite_wasm_exports}]")

# The kernel tests of tests/unit, unchanged, on tests/wasm/gtest/gtest.h.
file(GLOB _mtlite_kernel_tests CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/unit/kernels*_test.cc)
add_executable(mtlite_wasm_kernel_test ${_mtlite_kernel_tests} ${CMAKE_SOURCE_DIR}/tests/wasm/gtest_main.cc)
set_target_properties(mtlite_wasm_kernel_test PROPERTIES SUFFIX ".wasm")
target_include_directories(mtlite_wasm_kernel_test PRIVATE ${CMAKE_SOURCE_DIR}/tests/wasm ${CMAKE_SOURCE_DIR}/tests)
target_link_libraries(mtlite_wasm_kernel_test PRIVATE mtlite_kernels)
target_link_options(mtlite_wasm_kernel_test PRIVATE ${_mtlite_wasm_link})
