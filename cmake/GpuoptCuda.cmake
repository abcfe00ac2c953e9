# The CUDA runtime (runtime/cuda, tools/gpuopt-cuda-run) needs the CUDA
# toolkit's headers and nothing else at build time: the driver library is
# opened at run time. GPUOPT_WITH_CUDA=AUTO builds it when the toolkit is
# found (FindCUDAToolkit looks on PATH and in /usr/local/cuda).
set(GPUOPT_WITH_CUDA AUTO CACHE STRING
  "Build the CUDA runtime: AUTO (when the CUDA toolkit is found), ON or OFF")
set_property(CACHE GPUOPT_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)
set(GPUOPT_CUDA_RUNTIME OFF)
if(NOT GPUOPT_WITH_CUDA STREQUAL "OFF")
  if(GPUOPT_WITH_CUDA STREQUAL "ON")
    find_package(CUDAToolkit REQUIRED)
  else()
    find_package(CUDAToolkit QUIET)
  endif()
  if(CUDAToolkit_FOUND)
    set(GPUOPT_CUDA_RUNTIME ON)
    message(STATUS "CUDA runtime: on (toolkit ${CUDAToolkit_VERSION} in ${CUDAToolkit_BIN_DIR})")
  else()
    message(STATUS "CUDA runtime: off (no CUDA toolkit found)")
  endif()
endif()
