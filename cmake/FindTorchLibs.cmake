# Locate the LibTorch that ships inside the PyPI torch wheel and expose the
# CPU-only part of it as the imported target gpuopt::torch_cpu.
#
# The wheel's own TorchConfig.cmake wants to configure CUDA against whatever
# toolkit it finds; the reference backend only needs ATen on the CPU, so we
# link libtorch_cpu and libc10 directly. GPUOPT_TORCH_DIR is the `torch`
# package directory; by default it is asked from GPUOPT_PYTHON.

set(GPUOPT_PYTHON "${PROJECT_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH
    "Python interpreter whose torch package provides LibTorch")
if(NOT GPUOPT_TORCH_DIR)
  execute_process(
    COMMAND ${GPUOPT_PYTHON} -c
      "import os, torch; print(os.path.dirname(torch.__file__)); print(int(torch._C._GLIBCXX_USE_CXX11_ABI))"
    OUTPUT_VARIABLE _gpuopt_torch_out
    RESULT_VARIABLE _gpuopt_torch_rc
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _gpuopt_torch_rc EQUAL 0)
    message(FATAL_ERROR
      "gpuopt: cannot import torch with ${GPUOPT_PYTHON}. Run `make venv` "
      "(or pass -DGPUOPT_TORCH_DIR=<site-packages>/torch), or configure with "
      "-DGPUOPT_ENABLE_TORCH=OFF to build without the reference backend.")
  endif()
  string(REPLACE "\n" ";" _gpuopt_torch_out "${_gpuopt_torch_out}")
  list(GET _gpuopt_torch_out 0 _dir)
  list(GET _gpuopt_torch_out 1 _abi)
  set(GPUOPT_TORCH_DIR "${_dir}" CACHE PATH "torch package directory")
  set(GPUOPT_TORCH_CXX11_ABI "${_abi}" CACHE STRING "torch's _GLIBCXX_USE_CXX11_ABI")
endif()
if(NOT DEFINED GPUOPT_TORCH_CXX11_ABI)
  set(GPUOPT_TORCH_CXX11_ABI 1)
endif()

find_library(GPUOPT_TORCH_CPU_LIB torch_cpu PATHS "${GPUOPT_TORCH_DIR}/lib" NO_DEFAULT_PATH REQUIRED)
find_library(GPUOPT_C10_LIB c10 PATHS "${GPUOPT_TORCH_DIR}/lib" NO_DEFAULT_PATH REQUIRED)
message(STATUS "gpuopt: LibTorch from ${GPUOPT_TORCH_DIR}")

add_library(gpuopt_torch_cpu INTERFACE)
target_include_directories(gpuopt_torch_cpu SYSTEM INTERFACE
  "${GPUOPT_TORCH_DIR}/include"
  "${GPUOPT_TORCH_DIR}/include/torch/csrc/api/include")
target_compile_definitions(gpuopt_torch_cpu INTERFACE
  _GLIBCXX_USE_CXX11_ABI=${GPUOPT_TORCH_CXX11_ABI})
target_link_libraries(gpuopt_torch_cpu INTERFACE
  ${GPUOPT_TORCH_CPU_LIB} ${GPUOPT_C10_LIB})
add_library(gpuopt::torch_cpu ALIAS gpuopt_torch_cpu)
