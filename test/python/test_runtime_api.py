"""One C ABI for CPU and CUDA artifacts: libgpuopt_runtime.so (runtime/api/).

gpuopt.compiled.CompiledModel loads a CUDA artifact through
libgpuopt_runtime.so with the methods and exceptions of a CPU model library
(test_compile_cpu.py covers those, and the runtime running a model library).
Without an NVIDIA driver (this machine) a CUDA artifact is checked as far as
the driver: the weights are bound first, then the missing driver is one
located error. A runtime built without the CUDA toolkit says so. GPU
execution is test_cuda.py's, where a GPU is present.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from gpuopt.compiled import CompiledModel, CompiledModelError, ModelOptions, is_cuda_artifact, runtime_library
from gpuopt.tools import REPO_ROOT, build_dir, tool

CUDA_RUNTIME = (build_dir() / "bin" / "gpuopt-cuda-run").exists()
needs_cuda_runtime = pytest.mark.skipif(
    not CUDA_RUNTIME, reason="the runtime was built without CUDA (no CUDA toolkit at configure time)"
)

MODEL = """
func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = seg.param "conv.weight" : tensor<4x3x1x1xf32>
  %b = seg.param "conv.bias" : tensor<4xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}
"""


def has_driver() -> bool:
    """Whether libcuda.so.1 (an NVIDIA driver) can be loaded."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


@pytest.fixture(scope="module")
def cuda_model(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A CUDA artifact (PTX for sm_86: no ptxas needed), its weights and an input."""
    out = tmp_path_factory.mktemp("cuda")
    (out / "m.mlir").write_text(MODEL)
    proc = subprocess.run(
        [
            str(tool("gpuopt-compile")),
            str(out / "m.mlir"),
            "--target=cuda",
            "--cuda-arch=sm_86",
            "--cuda-format=ptx",
            "-o",
            str(out / "m.gpuopt"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    rng = np.random.default_rng(0)
    np.save(out / "x.npy", rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
    save_file(
        {
            "conv.weight": rng.standard_normal((4, 3, 1, 1)).astype(np.float32),
            "conv.bias": np.zeros(4, np.float32),
        },
        str(out / "m.safetensors"),
    )
    return {"dir": out, "model": out / "m.gpuopt", "weights": out / "m.safetensors", "x": out / "x.npy"}


def gpuopt_run(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(tool("gpuopt-run")), *map(str, args)], capture_output=True, text=True, check=False
    )


def test_identifies_cuda_artifacts(cuda_model: dict[str, Path], tmp_path: Path) -> None:
    assert is_cuda_artifact(cuda_model["model"])
    gpoa = tmp_path / "flat.bin"
    gpoa.write_bytes(b"\x10\0\0\0GPOA" + bytes(24))
    assert is_cuda_artifact(gpoa)
    elf = tmp_path / "lib.gpuopt"
    elf.write_bytes(b"\x7fELF" + bytes(60))
    assert not is_cuda_artifact(elf)
    assert is_cuda_artifact(tmp_path / "missing.gpuopt")
    assert not is_cuda_artifact(tmp_path / "missing.so")


@needs_cuda_runtime
def test_cuda_artifact_without_a_driver(cuda_model: dict[str, Path], tmp_path: Path) -> None:
    if has_driver():
        pytest.skip("an NVIDIA driver is present: the no-driver path does not apply")
    model = cuda_model["model"]
    want = f"{model}: no NVIDIA driver: cannot load libcuda.so.1 ("
    with pytest.raises(CompiledModelError) as info:
        CompiledModel(model, cuda_model["weights"])
    assert str(info.value).startswith(want), str(info.value)
    y = tmp_path / "y.npy"
    proc = gpuopt_run(
        model, f"--weights={cuda_model['weights']}", f"--input=@{cuda_model['x']}", f"--output=@{y}"
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"gpuopt-run: error: {want}"), proc.stderr
    assert not y.exists()


@needs_cuda_runtime
def test_cuda_errors_before_the_driver(cuda_model: dict[str, Path], tmp_path: Path) -> None:
    """What is checked before the GPU is touched fails the same on any machine."""
    model = cuda_model["model"]
    wrong = tmp_path / "wrong.safetensors"
    save_file({"conv.weight": np.zeros((4, 3, 1, 1), np.float32)}, str(wrong))
    cases = [
        (wrong, {}, f"{wrong}: missing parameter 'conv.bias' of shape [4]"),
        (None, {}, f"{model}: no weights file given (a CUDA model is created with one)"),
        (tmp_path / "none.safetensors", {}, f"{tmp_path / 'none.safetensors'}: cannot open"),
    ]
    for weights, kwargs, message in cases:
        with pytest.raises(CompiledModelError) as info:
            CompiledModel(model, weights, **kwargs)
        assert str(info.value).startswith(message), str(info.value)
        flags = [] if weights is None else [f"--weights={weights}"]
        proc = gpuopt_run(model, *flags, f"--input=@{cuda_model['x']}")
        assert proc.returncode == 1
        assert proc.stderr.startswith(f"gpuopt-run: error: {message}"), proc.stderr
    with pytest.raises(ValueError, match="device must be >= 0, got -1"):
        CompiledModel(model, cuda_model["weights"], device=-1)


def test_device_applies_to_cuda_artifacts_only(tmp_path: Path) -> None:
    so = tmp_path / "m.so"
    so.write_bytes(b"\x7fELF" + bytes(60))
    with pytest.raises(ValueError, match="m.so is a CPU model library; device applies to CUDA artifacts"):
        CompiledModel(so, None, device=0)
    proc = gpuopt_run(so, "--device=0")
    assert proc.returncode == 1
    assert (
        proc.stderr
        == f"gpuopt-run: error: {so} is a compiled model library; --device applies to CUDA artifacts\n"
    )


def create_through_runtime(lib: ctypes.CDLL, artifact: Path, weights: Path | None) -> str:
    """gpuopt_model_create of ``lib`` on ``artifact``; the error (or "")."""
    lib.gpuopt_model_create.restype = ctypes.c_void_p
    lib.gpuopt_model_create.argtypes = [ctypes.POINTER(ModelOptions), ctypes.c_char_p, ctypes.c_size_t]
    lib.gpuopt_model_destroy.argtypes = [ctypes.c_void_p]
    options = ModelOptions()
    lib.gpuopt_model_options_init(ctypes.byref(options))
    options.artifact_path = str(artifact).encode()
    options.weights_path = None if weights is None else str(weights).encode()
    err = ctypes.create_string_buffer(1024)
    model = lib.gpuopt_model_create(ctypes.byref(options), err, 1024)
    if model:
        lib.gpuopt_model_destroy(model)
        return ""
    return err.value.decode()


def test_runtime_refuses_what_is_no_artifact(tmp_path: Path) -> None:
    lib = ctypes.CDLL(str(runtime_library()))
    text = tmp_path / "notes.txt"
    text.write_text("not a model")
    assert create_through_runtime(lib, text, None) == (
        f'{text} is not a gpuopt artifact: neither a model library (an ELF file) nor a CUDA artifact ("GPOA" at '
        "bytes 4..7)"
    )
    missing = tmp_path / "missing.bin"
    assert create_through_runtime(lib, missing, None).startswith(f"{missing}: cannot open")
    assert create_through_runtime(lib, tmp_path / "missing.so", None).startswith(
        f"cannot load {tmp_path}/missing.so"
    )
    fifo = tmp_path / "pipe.so"
    os.mkfifo(fifo)
    assert create_through_runtime(lib, fifo, None) == f"cannot load {fifo}: not a regular file (fifo)"


def test_runtime_built_without_cuda(tmp_path: Path) -> None:
    """The standalone runtime project with GPUOPT_WITH_CUDA=OFF: a CUDA
    artifact is a clear error from libgpuopt_runtime.so (found through
    GPUOPT_RUNTIME_LIBRARY)."""
    build = tmp_path / "build"
    for cmd in (
        [
            "cmake",
            "-G",
            "Ninja",
            "-S",
            str(REPO_ROOT / "runtime"),
            "-B",
            str(build),
            "-DGPUOPT_WITH_CUDA=OFF",
        ],
        ["ninja", "-C", str(build), "-j2", "gpuopt_runtime"],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    artifact = tmp_path / "m.gpuopt"
    artifact.write_bytes(b"\x10\0\0\0GPOA" + bytes(24))
    script = (
        "import sys\n"
        "from gpuopt.compiled import CompiledModel, CompiledModelError\n"
        "try:\n"
        "    CompiledModel(sys.argv[1], sys.argv[2])\n"
        "except CompiledModelError as e:\n"
        "    print(e)\n"
    )
    env = dict(os.environ, GPUOPT_RUNTIME_LIBRARY=str(build / "lib" / "libgpuopt_runtime.so"))
    proc = subprocess.run(
        [sys.executable, "-c", script, str(artifact), str(tmp_path / "w.safetensors")],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        f"{artifact} is a CUDA artifact, but this runtime was built without CUDA support (no CUDA toolkit was "
        "found when it was built)\n"
    )
    env["GPUOPT_RUNTIME_LIBRARY"] = str(tmp_path / "nowhere.so")
    proc = subprocess.run(
        [sys.executable, "-c", script, str(artifact), str(tmp_path / "w.safetensors")],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert proc.stdout == (
        f"{artifact} is a CUDA artifact, which runs through libgpuopt_runtime.so: {tmp_path / 'nowhere.so'} does "
        "not exist (build the gpuopt_runtime target or set GPUOPT_RUNTIME_LIBRARY)\n"
    ), proc.stderr
