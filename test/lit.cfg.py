# -*- Python -*-
# lit configuration of gpuopt's IR-level and tool tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "GPUOPT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gpuopt_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "python", "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", config.gpuopt_python))
config.substitutions.append(("%gpuopt_src", config.gpuopt_src_root))
config.substitutions.append(("%gpuopt_obj", config.gpuopt_obj_root))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# `not` (RUN: not gpuopt-compile ...) comes from LLVM's tools.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

if config.gpuopt_enable_torch:
    config.available_features.add("torch")
if config.gpuopt_enable_sanitizers:
    config.available_features.add("sanitizers")

tool_dirs = [config.gpuopt_tools_dir, config.llvm_tools_dir]
# The CUDA toolkit's ptxas assembles cubins (gpu-module-to-binary format=bin);
# gpuopt-cuda-run is built when the toolkit's headers are found.
if os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("ptxas")
if os.path.exists(os.path.join(config.gpuopt_tools_dir, "gpuopt-cuda-run")):
    config.available_features.add("cuda-runtime")
# Whether an NVIDIA driver can be loaded: the runtime's "no NVIDIA driver"
# error is tested where it cannot.
try:
    import ctypes

    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass

# Whether cuDNN 9 and cuBLASLt load (their descriptors need no GPU).
try:
    ctypes.CDLL("libcudnn.so.9")
    ctypes.CDLL("libcublasLt.so.13")
    config.available_features.add("cuda-vendor-libraries")
except OSError:
    pass

tools = [
    "not",
    "gpuopt-opt",
    "gpuopt-compile",
    "gpuopt-cpu-kernels-test",
    "gpuopt-file-io-test",
    "gpuopt-artifact-test",
    "gpuopt-cuda-plan-check-test",
    "gpuopt-cuda-library-plan-test",
    "gpuopt-threads-test",
    "gpuopt-cpu-features-test",
    ToolSubst("gpuopt-run", unresolved="ignore"),
    ToolSubst("gpuopt-cuda-run", unresolved="ignore"),
    ToolSubst("gpuopt-cuda-libraries-test", unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
