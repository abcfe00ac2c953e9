# Instrumented builds of gpuopt's own code, each in a build directory of its
# own so that the main build is untouched (docs/Reliability.md):
#
#   GPUOPT_ENABLE_SANITIZERS  AddressSanitizer + UndefinedBehaviorSanitizer
#                             (`make check-asan`, build-asan/; gcc or clang).
#   GPUOPT_ENABLE_FUZZERS     the same plus libFuzzer's coverage
#                             instrumentation, and the fuzz targets of fuzz/
#                             (`make fuzz`, build-fuzz/; needs clang).
#
# Only code compiled here is instrumented: MLIR, LLVM and LibTorch come
# prebuilt. Every UBSan check aborts (-fno-sanitize-recover) so that a report
# fails the test or the fuzz run that triggered it.

if(GPUOPT_ENABLE_FUZZERS AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "GPUOPT_ENABLE_FUZZERS needs clang (libFuzzer); "
                      "configure with -DCMAKE_CXX_COMPILER=clang++-22")
endif()

if(GPUOPT_ENABLE_SANITIZERS OR GPUOPT_ENABLE_FUZZERS)
  set(GPUOPT_SANITIZER_FLAGS
    -fsanitize=address,undefined -fno-sanitize-recover=all
    -fno-omit-frame-pointer)
  add_compile_options(${GPUOPT_SANITIZER_FLAGS})
  add_link_options(${GPUOPT_SANITIZER_FLAGS})
endif()

if(GPUOPT_ENABLE_FUZZERS)
  # Coverage feedback for all of gpuopt's code; the fuzz targets alone link
  # libFuzzer's main (-fsanitize=fuzzer, fuzz/CMakeLists.txt).
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
