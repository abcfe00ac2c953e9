"""gpuopt.compile(module, example_inputs) and torch.compile(backend="gpuopt").

Models have random weights and BatchNorm statistics (gpuopt.randomize)
and random inputs; answers are compared with PyTorch eager at the CLI path's
tolerance (test_compile_cpu.py: relative L2 error <= 1e-4), and gpuopt.compile
with the CLI path itself (gpuopt.export + gpuopt-compile + CompiledModel):
the same graph text, bit-identical outputs. Every zoo model runs at 1x3x32x32
under gpuopt.compile and under torch.compile(backend="gpuopt") with zero graph
breaks (torch._dynamo.explain) and no fallback (the "gpuopt" log). The
Rolling-UNets M and L add ~40 s each; GPUOPT_SLOW_TESTS=1 runs them.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import rel_l2
from torch import nn

import gpuopt
import gpuopt.compile as gpc
from gpuopt import models
from gpuopt.capture import CaptureError
from gpuopt.compiled import CompiledModel, CompiledModelError, compile_model
from gpuopt.randomize import randomize
from gpuopt.tools import REPO_ROOT, build_dir

REL_L2 = 1e-4  # test_compile_cpu.py's, the CLI path's
SLOW = os.environ.get("GPUOPT_SLOW_TESTS") == "1"
BACKEND = "torch.compile backend 'gpuopt'"


class ConvBnRelu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)))


class TwoOutputs(nn.Module):
    """Two inputs, a dict of two outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> dict[str, torch.Tensor]:
        y = self.conv(x)
        return {"sum": y + r, "relu": torch.relu(y)}


class Cumsum(nn.Module):
    """torch.cumsum has no seg op: the capture refuses it."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(self.conv(x), dim=1)


def randn(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def eager(model: nn.Module, *xs: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(*xs)


def check_close(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    assert isinstance(got, torch.Tensor), f"{what}: got a {type(got).__name__}"
    assert got.dtype == torch.float32 and got.device.type == "cpu", what
    err = rel_l2(got.numpy(), want.numpy())
    assert err <= REL_L2, f"{what}: relative L2 error {err:.3e}"


@pytest.fixture
def compiler_calls(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The artifacts gpuopt-compile is run for, in order."""
    calls: list[Path] = []

    def counting(mlir: Path, out: Path, **kwargs: object) -> Path:
        calls.append(Path(mlir))
        return compile_model(mlir, out, **kwargs)

    monkeypatch.setattr(gpc, "compile_model", counting)
    return calls


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One artifact cache for the tests that do not test the cache itself."""
    return tmp_path_factory.mktemp("cache")


def test_conv_bn_relu_matches_eager_and_the_cli_path(tmp_path: Path, compiler_calls: list[Path]) -> None:
    model = randomize(ConvBnRelu().eval(), seed=1)
    x = randn(1, 3, 16, 16, seed=2)
    fast = gpuopt.compile(model, (x,), cache_dir=tmp_path / "cache")
    assert isinstance(fast, gpc.CompiledCallable)
    y = fast(x)
    check_close(y, eager(model, x), "gpuopt.compile")
    x2 = randn(1, 3, 16, 16, seed=3)  # a second, different input
    check_close(fast(x2), eager(model, x2), "gpuopt.compile, second input")

    # The CLI path: gpuopt.export, gpuopt-compile --pipeline=gpuopt-optimize, CompiledModel.
    gpuopt.export(model, (x,), tmp_path / "m.mlir", tmp_path / "m.safetensors")
    so = compile_model(tmp_path / "m.mlir", tmp_path / "m.so", pipeline="gpuopt-optimize")
    with CompiledModel(so, tmp_path / "m.safetensors") as cli:
        (want,) = cli.run(x.numpy())
    assert np.array_equal(y.numpy(), want), "gpuopt.compile and the CLI path differ"
    assert len(compiler_calls) == 1
    assert compiler_calls[0].read_text() == (tmp_path / "m.mlir").read_text()


def test_structured_outputs_and_two_inputs(cache: Path) -> None:
    model = randomize(TwoOutputs().eval(), seed=4)
    x, r = randn(2, 3, 8, 8, seed=5), randn(2, 4, 8, 8, seed=6)
    out = gpuopt.compile(model, (x, r), cache_dir=cache)(x, r)
    want = eager(model, x, r)
    assert isinstance(out, dict) and list(out) == ["sum", "relu"]
    for k in want:
        check_close(out[k], want[k], f"output {k}")


def test_zero_copy_inputs_and_outputs(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = randomize(ConvBnRelu().eval(), seed=7)
    x = randn(1, 3, 8, 8, seed=8)
    fast = gpuopt.compile(model, x, cache_dir=cache)
    seen: dict[str, list[int]] = {}
    real_run = CompiledModel.run

    def spy(self: CompiledModel, *arrays: np.ndarray) -> list[np.ndarray]:
        seen["in"] = [a.ctypes.data for a in arrays]
        outs = real_run(self, *arrays)
        seen["out"] = [o.ctypes.data for o in outs]
        return outs

    monkeypatch.setattr(CompiledModel, "run", spy)
    y = fast(x)
    assert seen["in"] == [x.data_ptr()], "a contiguous float32 input was copied"
    assert seen["out"] == [y.data_ptr()], "the output was copied"
    # Non-contiguous and float64 inputs are converted, with the same answer.
    xt = x.transpose(2, 3).contiguous().transpose(2, 3)
    assert not xt.is_contiguous()
    check_close(fast(xt), eager(model, x), "non-contiguous input")
    assert seen["in"] != [xt.data_ptr()]
    check_close(fast(x.double()), eager(model, x), "float64 input")


def test_cache_hit_and_what_the_key_holds(tmp_path: Path, compiler_calls: list[Path]) -> None:
    cache = tmp_path / "cache"
    model = randomize(ConvBnRelu().eval(), seed=9)
    x = randn(1, 3, 8, 8, seed=10)
    first = gpuopt.compile(model, x, cache_dir=cache)
    assert len(compiler_calls) == 1 and first.cached == {((1, 3, 8, 8),): False}
    (artifact,) = first.artifacts.values()
    assert artifact.is_relative_to(cache) and artifact.name == "model.so"
    mtime = artifact.stat().st_mtime_ns

    # Same graph and weights layout, other weight values: the cached artifact,
    # bound to the new weights (not the old ones).
    randomize(model, seed=11)
    second = gpuopt.compile(model, x, cache_dir=cache)
    assert len(compiler_calls) == 1, "the second compile ran gpuopt-compile"
    assert second.cached == {((1, 3, 8, 8),): True} and second.artifacts == first.artifacts
    assert artifact.stat().st_mtime_ns == mtime
    check_close(second(x), eager(model, x), "cached artifact, new weights")

    # Another pipeline is another artifact.
    gpuopt.compile(model, x, pipeline=None, cache_dir=cache)
    assert len(compiler_calls) == 2

    # A fresh process finds it too.
    script = textwrap.dedent(f"""
        import torch, gpuopt, gpuopt.compile as gpc
        from test_compile_api import ConvBnRelu
        calls = []
        real = gpc.compile_model
        gpc.compile_model = lambda *a, **k: calls.append(a) or real(*a, **k)
        m = ConvBnRelu().eval()
        fast = gpuopt.compile(m, torch.zeros(1, 3, 8, 8), cache_dir={str(cache)!r})
        print(len(calls), list(fast.cached.values()), list(fast.artifacts.values())[0])
    """)
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT / "python"), str(Path(__file__).parent)])
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "[True]", str(artifact)]


def test_default_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert gpc.default_cache_dir() == tmp_path / "xdg" / "gpuopt"
    model = randomize(ConvBnRelu().eval(), seed=12)
    fast = gpuopt.compile(model, randn(1, 3, 4, 4, seed=13))
    (artifact,) = fast.artifacts.values()
    assert artifact.is_relative_to(tmp_path / "xdg" / "gpuopt")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # ignored, as the XDG spec says
    assert gpc.default_cache_dir() == Path.home() / ".cache" / "gpuopt"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert gpc.default_cache_dir() == Path.home() / ".cache" / "gpuopt"


def test_shape_guard_compiles_another_artifact(cache: Path) -> None:
    model = randomize(ConvBnRelu().eval(), seed=14)
    fast = gpuopt.compile(model, randn(1, 3, 8, 8, seed=15), cache_dir=cache)
    for batch, seed in ((3, 16), (1, 17), (3, 18), (2, 19)):
        x = randn(batch, 3, 8, 8, seed=seed)
        y = fast(x)
        assert y.shape == (batch, 8, 8, 8)
        check_close(y, eager(model, x), f"batch {batch}")
    x = randn(1, 3, 12, 10, seed=20)  # other spatial sizes too
    check_close(fast(x), eager(model, x), "12x10")
    assert sorted(fast.artifacts) == [
        ((1, 3, 8, 8),),
        ((1, 3, 12, 10),),
        ((2, 3, 8, 8),),
        ((3, 3, 8, 8),),
    ]
    assert len(set(fast.artifacts.values())) == 4


def test_training_mode_is_switched_to_eval(cache: Path, caplog: pytest.LogCaptureFixture) -> None:
    model = randomize(ConvBnRelu(), seed=21)
    assert model.training
    x = randn(2, 3, 8, 8, seed=22)
    with caplog.at_level(logging.WARNING, logger="gpuopt"):
        fast = gpuopt.compile(model, x, cache_dir=cache)
    assert not model.training
    assert [r.getMessage() for r in caplog.records] == [
        "gpuopt.compile: ConvBnRelu was in training mode; switched to eval mode (gpuopt compiles inference graphs)"
    ]
    check_close(fast(x), eager(model, x), "after the switch to eval mode")


def test_bad_inputs_are_clear_errors(cache: Path) -> None:
    model = randomize(ConvBnRelu().eval(), seed=23)
    fast = gpuopt.compile(model, randn(1, 3, 8, 8, seed=24), cache_dir=cache)
    x = randn(1, 3, 8, 8, seed=25)
    cases: list[tuple[tuple, dict, type[Exception], str]] = [
        ((), {}, TypeError, "the compiled ConvBnRelu takes 1 input(s), got 0"),
        ((x, x), {}, TypeError, "the compiled ConvBnRelu takes 1 input(s), got 2"),
        ((x.numpy(),), {}, TypeError, "input 0 must be a torch.Tensor, got ndarray"),
        (
            (x.to(torch.int32),),
            {},
            TypeError,
            "input 0 has dtype torch.int32; gpuopt models take floating-point (float32) inputs",
        ),
        (
            (x[0],),
            {},
            ValueError,
            (
                "input 0 has shape (3, 8, 8) (rank 3); the compiled ConvBnRelu takes rank-4 inputs, like its "
                "example (1, 3, 8, 8) (other sizes of that rank compile another artifact)"
            ),
        ),
        (
            (x.to("meta"),),
            {},
            ValueError,
            (
                "input 0 is on device meta; a gpuopt cpu model takes CPU tensors "
                "(its runtime reads host memory): pass x.cpu()"
            ),
        ),
        (
            (x.to_sparse(),),
            {},
            TypeError,
            "input 0 is a torch.sparse_coo tensor; gpuopt takes dense (strided) tensors",
        ),
        ((), {"x": x}, TypeError, "a compiled ConvBnRelu takes its inputs by position, got keyword(s) x"),
    ]
    for args, kwargs, kind, message in cases:
        with pytest.raises(kind) as info:
            fast(*args, **kwargs)
        assert str(info.value) == message
    # A shape the model itself refuses (4 channels for a 3-channel conv).
    with pytest.raises(ValueError) as info:
        fast(randn(1, 4, 8, 8, seed=26))
    assert str(info.value).startswith("running ConvBnRelu on input shape(s) 1x4x8x8 failed: ")
    assert "expected input[1, 4, 8, 8] to have 3 channels" in str(info.value)
    check_close(fast(x), eager(model, x), "after the errors")


def test_bad_arguments_of_compile(cache: Path) -> None:
    model, x = ConvBnRelu().eval(), torch.zeros(1, 3, 4, 4)
    cases: list[tuple[dict, type[Exception], str]] = [
        ({"target": "tpu"}, ValueError, "target must be one of 'cpu', 'cuda', got 'tpu'"),
        ({"threads": 0}, ValueError, "threads must be a positive int or None (the runtime's default), got 0"),
        ({"pipeline": 3}, TypeError, "pipeline must be a pass pipeline string or None, got int"),
        ({"cache_dir": 3}, TypeError, "cache_dir must be a path or None, got int"),
    ]
    for kwargs, kind, message in cases:
        with pytest.raises(kind) as info:
            gpuopt.compile(model, x, cache_dir=kwargs.pop("cache_dir", cache), **kwargs)
        assert str(info.value) == message
    # The CUDA settings: checked, and refused for the CPU target (they would do nothing).
    cuda_cases: list[tuple[dict, str]] = [
        ({"device": 0}, "device apply to target='cuda', not target='cpu'"),
        (
            {"gpu_conv": "library", "gpu_precision": "tf32"},
            "gpu_conv, gpu_precision apply to target='cuda', not target='cpu'",
        ),
        (
            {"target": "cuda", "device": "gpu"},
            "device must be a GPU ordinal (>= 0), \"emulate\" or None, got 'gpu'",
        ),
        ({"target": "cuda", "device": -1}, 'device must be a GPU ordinal (>= 0), "emulate" or None, got -1'),
        (
            {"target": "cuda", "device": True},
            'device must be a GPU ordinal (>= 0), "emulate" or None, got True',
        ),
        (
            {"target": "cuda", "cuda_arch": "90"},
            "cuda_arch must be sm_NN[,sm_MM...] (e.g. 'sm_90') or None, got '90'",
        ),
        (
            {"target": "cuda", "gpu_conv": "cudnn"},
            "gpu_conv must be one of 'generated', 'library', 'auto', got 'cudnn'",
        ),
        (
            {"target": "cuda", "gpu_precision": "fp16"},
            "gpu_precision must be one of 'fp32', 'tf32', got 'fp16'",
        ),
        ({"gpu_conv_device": "h200"}, "gpu_conv_device apply to target='cuda', not target='cpu'"),
        (
            {"target": "cuda", "gpu_conv_device": "h200"},
            "gpu_conv_device applies to gpu_conv='auto', not gpu_conv='generated'",
        ),
        (
            {"target": "cuda", "gpu_conv": "library", "gpu_conv_device": "h200"},
            "gpu_conv_device applies to gpu_conv='auto', not gpu_conv='library'",
        ),
        (
            {"target": "cuda", "gpu_conv": "auto", "gpu_conv_device": "cpu"},
            (
                "gpu_conv_device must be a GPU model of devices.json ('a100', 'h200', 'rtx3080') "
                "or None, got 'cpu'"
            ),
        ),
    ]
    for kwargs, message in cuda_cases:
        with pytest.raises(ValueError) as info:
            gpuopt.compile(model, x, cache_dir=cache, **kwargs)
        assert str(info.value) == message
    with pytest.raises(TypeError, match="^module must be a torch.nn.Module, got function$"):
        gpuopt.compile(lambda t: t, x, cache_dir=cache)
    with pytest.raises(
        TypeError, match="^example_inputs must be a tensor or a non-empty tuple/list of tensors$"
    ):
        gpuopt.compile(model, (), cache_dir=cache)
    with pytest.raises(TypeError, match="^example input 0 has dtype torch.int64"):
        gpuopt.compile(model, torch.zeros(1, 3, 4, 4, dtype=torch.int64), cache_dir=cache)
    # The flag spelling of the pipeline is the pipeline.
    fast = gpuopt.compile(model, x, pipeline="--gpuopt-optimize", cache_dir=cache, threads=1)
    assert fast.pipeline == "gpuopt-optimize"


def test_uncapturable_module_is_a_located_error(cache: Path) -> None:
    with pytest.raises(CaptureError) as info:
        gpuopt.compile(Cumsum().eval(), torch.zeros(1, 3, 4, 4), cache_dir=cache)
    message = str(info.value)
    assert f"{__file__}:" in message and "unsupported operator torch.cumsum" in message


def has_driver() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


@pytest.mark.skipif(
    not (build_dir() / "bin" / "gpuopt-cuda-run").exists(), reason="the runtime was built without CUDA"
)
def test_cuda_target(cache: Path) -> None:
    model = randomize(ConvBnRelu().eval(), seed=27)
    x = randn(1, 3, 8, 8, seed=28)
    if has_driver():
        fast = gpuopt.compile(model, x, target="cuda", cache_dir=cache)
        check_close(fast(x), eager(model, x), "target cuda")
        (artifact,) = fast.artifacts.values()
        assert artifact.name == "model.gpuopt"
        return
    with pytest.raises(CompiledModelError) as info:
        gpuopt.compile(model, x, target="cuda", cache_dir=cache)
    message = str(info.value)
    assert (
        message.startswith(str(cache))
        and "/model.gpuopt: no NVIDIA driver: cannot load libcuda.so.1 (" in message
    )
    with pytest.raises(
        ValueError, match="^example input 0 is on device meta; a gpuopt cuda model takes CPU tensors"
    ):
        gpuopt.compile(model, x.to("meta"), target="cuda", cache_dir=cache)


class ConvLinear(nn.Module):
    """A convolution (BatchNorm, ReLU) and a linear over the channels: both
    kinds of library call."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.conv(x)))
        return self.fc(y.permute(0, 2, 3, 1))


@pytest.mark.skipif(
    not (build_dir() / "bin" / "gpuopt-cuda-run").exists(), reason="the runtime was built without CUDA"
)
def test_cuda_target_emulated(tmp_path: Path, compiler_calls: list[Path]) -> None:
    """target="cuda" with device="emulate": the whole gpuopt.compile path of a
    CUDA artifact, run by the host emulator, in each --gpu-conv mode and
    precision; each setting is its own artifact."""
    cache = tmp_path / "cache"
    model = randomize(ConvLinear().eval(), seed=31)
    x = randn(1, 3, 8, 8, seed=32)
    want = eager(model, x)
    artifacts = set()
    outputs: dict[tuple[str, str], torch.Tensor] = {}
    for gpu_conv, precision, tolerance in (
        ("generated", "fp32", 1e-5),
        ("library", "fp32", 1e-5),
        ("library", "tf32", 5e-3),
    ):
        fast = gpuopt.compile(
            model,
            x,
            target="cuda",
            cache_dir=cache,
            device="emulate",
            cuda_arch="sm_90",
            gpu_conv=gpu_conv,
            gpu_precision=precision,
        )
        what = f"emulated, {gpu_conv}, {precision}"
        assert fast.cuda == gpc.CudaOptions("emulate", "sm_90", gpu_conv, precision), what
        assert f"gpu_conv='{gpu_conv}'" in repr(fast)
        got = fast(x)
        err = rel_l2(got.numpy(), want.numpy())
        assert err <= tolerance, f"{what}: relative L2 error {err:.3e}"
        (artifact,) = fast.artifacts.values()
        artifacts.add(artifact)
        inspect = subprocess.run(
            [str(build_dir() / "bin" / "gpuopt-cuda-run"), str(artifact), "--inspect"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "host-x86_64" in inspect, inspect  # the emulator's image
        assert ("library steps:" in inspect) == (gpu_conv == "library"), (what, inspect)
        outputs[gpu_conv, precision] = got
    # TF32 rounds the library steps' operands: not the FP32 answer.
    assert not torch.equal(outputs["library", "tf32"], outputs["library", "fp32"])
    assert len(artifacts) == 3 and len(compiler_calls) == 3
    # The same settings again: the cached artifact.
    again = gpuopt.compile(model, x, target="cuda", cache_dir=cache, device="emulate", cuda_arch="sm_90")
    assert len(compiler_calls) == 3 and list(again.cached.values()) == [True]

    # --gpu-conv=auto on another device model: its flag, its own artifact.
    auto = gpuopt.compile(
        model,
        x,
        target="cuda",
        cache_dir=cache,
        device="emulate",
        gpu_conv="auto",
        gpu_conv_device="rtx3080",
    )
    assert "--gpu-conv-device=rtx3080" in auto.cuda.compile_flags()
    assert len(compiler_calls) == 4 and list(auto.cached.values()) == [False]
    check_close(auto(x), want, "emulated, auto on rtx3080")

    # torch.compile(backend="gpuopt") takes the same settings.
    torch._dynamo.reset()
    fast = torch.compile(
        model,
        backend="gpuopt",
        options={"cache_dir": str(cache), "target": "cuda", "device": "emulate", "gpu_conv": "library"},
    )
    with torch.no_grad():
        check_close(fast(x), want, "torch.compile, emulated, library")


def test_cuda_arch_of_the_local_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """cuda_arch=None compiles for the GPU the artifact will run on (its
    compute capability as the driver reports it), never asks the driver for
    the emulator or an explicit cuda_arch, and keeps gpuopt-compile's
    default where the driver reports none."""
    asked: list[int] = []

    def fake(ordinal: int) -> str | None:
        asked.append(ordinal)
        return "sm_86" if ordinal == 1 else None

    monkeypatch.setattr(gpc, "local_cuda_arch", fake)
    check = gpc._check_cuda_options
    assert check("cuda", 1, None, "generated", "fp32").cuda_arch == "sm_86"
    assert "--cuda-arch=sm_86" in check("cuda", 1, None, "generated", "fp32").compile_flags()
    assert check("cuda", None, None, "generated", "fp32").cuda_arch is None  # device 0: no GPU
    assert asked == [1, 1, 0]
    assert check("cuda", "emulate", None, "generated", "fp32").cuda_arch is None
    assert check("cuda", 1, "sm_90", "generated", "fp32").cuda_arch == "sm_90"
    assert asked == [1, 1, 0]
    monkeypatch.undo()
    # The real query: None without a driver or GPU (this machine, or CI),
    # else the GPU's own sm_NN, as torch sees it where torch has CUDA.
    real = gpc.local_cuda_arch(0)
    assert real is None or re.fullmatch(r"sm_[0-9]+", real), real
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:  # no driver: nothing to ask
        assert real is None, real
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability(0)
        assert real == f"sm_{major}{minor}"


# ---------------------------------------------------------------------------
# torch.compile(backend="gpuopt")
# ---------------------------------------------------------------------------


def backend_log(caplog: pytest.LogCaptureFixture) -> tuple[list[str], list[str]]:
    """The backend's (compiled graphs, warnings) in the "gpuopt" log."""
    records = [r for r in caplog.records if r.name == "gpuopt" and r.getMessage().startswith(BACKEND)]
    compiled = [r.getMessage() for r in records if " compiled graph " in r.getMessage()]
    warnings = [r.getMessage() for r in records if r.levelno >= logging.WARNING]
    return compiled, warnings


def compiled_with_backend(model: nn.Module, cache: Path, **kwargs: object) -> nn.Module:
    torch._dynamo.reset()
    return torch.compile(model, backend="gpuopt", options={"cache_dir": str(cache)}, **kwargs)


def test_backend_is_registered_by_name() -> None:
    from torch._dynamo.backends.registry import lookup_backend

    assert lookup_backend("gpuopt") is gpc.dynamo_backend
    assert "gpuopt" in torch._dynamo.list_backends()


def test_backend_conv_bn_relu_binds_weights_by_name(
    cache: Path, caplog: pytest.LogCaptureFixture, compiler_calls: list[Path]
) -> None:
    model = randomize(ConvBnRelu().eval(), seed=29)
    fast = compiled_with_backend(model, cache)
    x = randn(1, 3, 8, 8, seed=30)
    with caplog.at_level(logging.INFO, logger="gpuopt"), torch.no_grad():
        y = fast(x)
    check_close(y, eager(model, x), "torch.compile backend")
    compiled, warnings = backend_log(caplog)
    assert warnings == [] and compiled == [
        f"{BACKEND}: compiled graph {gpc._DynamoGraph._count} (1 inputs, 6 weights)"
    ]
    # The lifted parameters and buffers are seg.params of their state_dict names.
    mlir = compiler_calls[-1].read_text()
    for name, _ in list(model.named_parameters()) + list(model.named_buffers()):
        if not name.endswith("num_batches_tracked"):
            assert f'seg.param "{name}"' in mlir, name

    # Weights written in place (and replaced) between calls are rebound.
    with torch.no_grad():
        randomize(model, seed=31)
        check_close(fast(x), eager(model, x), "after the weights changed in place")
        model.conv.weight = nn.Parameter(torch.randn_like(model.conv.weight))
        check_close(fast(x), eager(model, x), "after a weight was replaced")


def test_backend_batch_sizes(cache: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A new batch size recompiles in Dynamo (a dynamic batch dimension from
    the second); the backend compiles an artifact per shape."""
    model = randomize(ConvBnRelu().eval(), seed=32)
    fast = compiled_with_backend(model, cache)
    with caplog.at_level(logging.INFO, logger="gpuopt"), torch.no_grad():
        for batch, seed in ((1, 33), (2, 34), (3, 35), (2, 36), (1, 37)):
            x = randn(batch, 3, 8, 8, seed=seed)
            check_close(fast(x), eager(model, x), f"batch {batch}")
    _, warnings = backend_log(caplog)
    assert warnings == []


def test_backend_falls_back_to_eager_with_the_reason(cache: Path, caplog: pytest.LogCaptureFixture) -> None:
    model = randomize(Cumsum().eval(), seed=38)
    fast = compiled_with_backend(model, cache)
    x = randn(1, 3, 8, 8, seed=39)
    with caplog.at_level(logging.INFO, logger="gpuopt"), torch.no_grad():
        y = fast(x)
    assert torch.equal(y, eager(model, x))
    compiled, warnings = backend_log(caplog)
    assert compiled == [] and len(warnings) == 1
    assert warnings[0].startswith(f"{BACKEND}: running the graph eagerly: ")
    assert "unsupported operator torch.cumsum" in warnings[0]


def test_backend_with_gradients_runs_eagerly(cache: Path, caplog: pytest.LogCaptureFixture) -> None:
    model = randomize(ConvBnRelu().eval(), seed=40)
    fast = compiled_with_backend(model, cache)
    x = randn(1, 3, 8, 8, seed=41)
    with caplog.at_level(logging.INFO, logger="gpuopt"):
        y = fast(x)
    assert y.requires_grad
    assert torch.equal(y, model(x))
    compiled, warnings = backend_log(caplog)
    assert compiled == [] and len(warnings) == 1 and "gradients are required" in warnings[0]


def test_backend_bad_options(cache: Path) -> None:
    fast = torch.compile(ConvBnRelu().eval(), backend="gpuopt", options={"colour": "red"})
    torch._dynamo.reset()
    with pytest.raises(Exception) as info, torch.no_grad():
        fast(torch.zeros(1, 3, 4, 4))
    known = (
        "cache_dir, cuda_arch, device, gpu_conv, gpu_conv_device, gpu_precision, pipeline, target, threads"
    )
    assert f"unknown gpuopt backend option(s) colour; known: {known}" in str(info.value)
    fast = torch.compile(
        ConvBnRelu().eval(), backend="gpuopt", options={"cache_dir": str(cache), "gpu_conv": "library"}
    )
    torch._dynamo.reset()
    with pytest.raises(Exception) as info, torch.no_grad():
        fast(torch.zeros(1, 3, 4, 4))
    assert "gpu_conv apply to target='cuda', not target='cpu'" in str(info.value)


ZOO = [name for name in models.names() if SLOW or name not in ("rolling_unet_m", "rolling_unet_l")]


@pytest.mark.parametrize("name", ZOO)
def test_zoo_model(name: str, cache: Path, caplog: pytest.LogCaptureFixture) -> None:
    model = randomize(models.build(name).eval(), seed=42)
    x = randn(1, 3, 32, 32, seed=43)
    want = eager(model, x)
    check_close(gpuopt.compile(model, x, cache_dir=cache)(x), want, f"{name}, gpuopt.compile")

    explained = torch._dynamo.explain(model)(x)
    assert explained.graph_break_count == 0 and explained.graph_count == 1, explained.break_reasons
    fast = compiled_with_backend(model, cache)
    with caplog.at_level(logging.INFO, logger="gpuopt"), torch.no_grad():
        got = fast(x)
    compiled, warnings = backend_log(caplog)
    assert warnings == [] and len(compiled) == 1, (compiled, warnings)
    check_close(got, want, f"{name}, torch.compile(backend='gpuopt')")


# ---------------------------------------------------------------------------
# pip install -e . and the torch_dynamo_backends entry point
# ---------------------------------------------------------------------------


def test_editable_install_registers_the_backend(tmp_path: Path) -> None:
    """In a fresh venv (offline: no build isolation, no dependencies) that
    sees .venv's packages, ``pip install -e .`` of the repository; then
    ``torch.compile(backend="gpuopt")`` resolves by name in a fresh process,
    with and without importing gpuopt first."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    py = venv / "bin" / "python"
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    import torch as torch_module

    (Path(site) / "outer_venv.pth").write_text(str(Path(torch_module.__file__).parents[1]) + "\n")
    # setuptools builds an editable wheel with bdist_wheel: its own from
    # 70.1, the wheel package's before. Offline, only pip's find-links can
    # provide the latter.
    has_bdist_wheel = (
        "import importlib.util, sys, setuptools; "
        "v = tuple(int(p) for p in setuptools.__version__.split('.')[:2]); "
        "sys.exit(0 if v >= (70, 1) or importlib.util.find_spec('wheel') else 1)"
    )
    if subprocess.run([str(py), "-c", has_bdist_wheel], check=False).returncode != 0:
        offline = [str(py), "-m", "pip", "install", "--no-index", "-q", "wheel"]
        if subprocess.run(offline, capture_output=True, check=False).returncode != 0:
            pytest.skip(
                "pip install -e . without network needs setuptools >= 70.1 or the wheel package; "
                ".venv has neither and pip's find-links has no wheel"
            )
    proc = subprocess.run(
        [
            str(py),
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-e",
            str(REPO_ROOT),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["GPUOPT_BUILD_DIR"] = str(build_dir())
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    for explicit in ("import gpuopt.compile", ""):
        script = textwrap.dedent(f"""
            import logging, sys, torch
            {explicit}
            logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
            m = torch.nn.Conv2d(3, 4, 3).eval()
            x = torch.randn(1, 3, 8, 8)
            with torch.no_grad():
                y = torch.compile(m, backend="gpuopt")(x)
                err = float((y - m(x)).norm() / m(x).norm())
            import gpuopt
            print("gpuopt from", gpuopt.__file__)
            print("error", err)
        """)
        proc = subprocess.run(
            [str(py), "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path, check=False
        )
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert f"gpuopt from {REPO_ROOT / 'python' / 'gpuopt' / '__init__.py'}" in lines, proc.stdout
        assert any(line.startswith(f"{BACKEND}: compiled graph 1 ") for line in lines), proc.stdout
        err = float(next(line for line in lines if line.startswith("error ")).split()[1])
        assert err <= REL_L2, proc.stdout


def test_module_is_no_command() -> None:
    """`python -m gpuopt.compile` names the command-line tools, exit 2 (it
    printed nothing and exited 0)."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "gpuopt.compile", "--help"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("python -m gpuopt.compile: error: gpuopt.compile is the Python API")
