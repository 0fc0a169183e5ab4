# Android arm64-v8a. Wraps the NDK's own toolchain file (NDK r23 or newer):
#   export ANDROID_NDK=/path/to/android-ndk-r26d
#   cmake --preset android-arm64 && cmake --build --preset android-arm64
# or by hand:
#   cmake -S . -B build-android-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=platforms/android-arm64-v8a.cmake \
#         -DANDROID_NDK=$ANDROID_NDK -DANDROID_PLATFORM=android-24 -DMTLITE_ANDROID_PREFIX=<deps> \
#         -DMTLITE_BUILD_TESTS=OFF
# Settings (cache variables or environment):
#   ANDROID_NDK            NDK root (also read from $ANDROID_NDK, $ANDROID_NDK_HOME, $ANDROID_NDK_ROOT)
#   ANDROID_PLATFORM       minimum API level, default android-24 (Android 7.0)
#   ANDROID_STL            default c++_static (no libc++_shared.so to ship)
#   MTLITE_ANDROID_PREFIX  prefix holding include/ and lib/ with pthreadpool (required) and XNNPACK
#                          built for arm64-v8a (Debian has no Android packages; or configure with
#                          -DMTLITE_USE_XNNPACK=OFF), plus include/flatbuffers/ (header-only; copy the
#                          flatbuffers headers matching the host flatc there). Never point it, or
#                          FLATBUFFERS_INCLUDE_DIR, at the build machine's /usr/include: glibc headers
#                          would shadow Bionic's.
# flatc runs on the build machine (the NDK toolchain already searches programs on the host).
# The NDK cannot be installed on the project's Debian machines (no Debian package), so this target
# is documented and configure-checked only; see docs/arm.md.
if(NOT ANDROID_NDK)
  foreach(_v ANDROID_NDK ANDROID_NDK_HOME ANDROID_NDK_ROOT)
    if(NOT ANDROID_NDK AND DEFINED ENV{${_v}} AND NOT "$ENV{${_v}}" STREQUAL "")
      set(ANDROID_NDK "$ENV{${_v}}")
    endif()
  endforeach()
endif()
if(NOT ANDROID_NDK)
  message(FATAL_ERROR
    "android-arm64-v8a.cmake: ANDROID_NDK is not set. Install the Android NDK (r23 or newer) and "
    "pass -DANDROID_NDK=/path/to/ndk or export ANDROID_NDK=/path/to/ndk. See docs/arm.md.")
endif()
if(NOT EXISTS "${ANDROID_NDK}/build/cmake/android.toolchain.cmake")
  message(FATAL_ERROR
    "android-arm64-v8a.cmake: ${ANDROID_NDK}/build/cmake/android.toolchain.cmake does not exist: "
    "ANDROID_NDK must point at the root of an Android NDK (r23 or newer).")
endif()
# Remember it for re-runs (cache) and for try_compile projects, which read this file again but
# see neither the -D values nor the cache of this project.
set(ANDROID_NDK "${ANDROID_NDK}" CACHE PATH "Android NDK root")
set(ENV{ANDROID_NDK} "${ANDROID_NDK}")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ANDROID_NDK ANDROID_PLATFORM ANDROID_STL MTLITE_ANDROID_PREFIX)

set(ANDROID_ABI arm64-v8a)   # this file is the arm64-v8a one; not overridable
if(NOT ANDROID_PLATFORM)
  set(ANDROID_PLATFORM android-24)
endif()
if(NOT ANDROID_STL)
  set(ANDROID_STL c++_static)
endif()
set(ANDROID_ARM_NEON ON)
include("${ANDROID_NDK}/build/cmake/android.toolchain.cmake")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
if(MTLITE_ANDROID_PREFIX)
  list(APPEND CMAKE_FIND_ROOT_PATH "${MTLITE_ANDROID_PREFIX}")
endif()
