"""NaN and Inf flow through every backend as they do through PyTorch.

Each one-op case of test_reference_ops.py gets inputs holding NaN, +Inf and
-Inf at random positions among random finite values (parameters stay finite)
and runs on the reference backend (LibTorch), the CPU JIT (`--backend=cpu`:
kernels and linalg loops), the linalg lowering alone (the seg IR lowered by
--convert-seg-to-linalg, the lowering the CUDA path compiles, then run by the
CPU JIT) and, for the ops the CPU kernels implement, a library from
gpuopt-compile. The output must equal PyTorch's on the same data with the
same NaN positions and the same signed infinities
(torch.testing.assert_close(equal_nan=True), rtol = atol = 1e-5 on the finite
elements).

NaN/Inf in the weights and biases of the GEMM ops (convolutions, transposed
convolutions, linear) are checked the same way with finite inputs, and
NaN/±Inf deformable offsets on their own (torchvision casts a NaN coordinate
to an integer, so it is no reference there).

The compiled paths are compared with PyTorch in float64, the reference
backend with PyTorch in float32 (it is LibTorch): they differ in one place,
exact GELU of +Inf, which is +Inf in float64 (and on CUDA) but NaN in
PyTorch's float32 CPU kernel; gpuopt's kernels give +Inf.

Two zoo models (Rolling-UNet-S and UNeXt at 32x32, after --gpuopt-optimize,
which fuses ReLU into the convolution kernels) fed an all-NaN image and an
image with one NaN pixel must give PyTorch's NaN pattern on the CPU JIT and
from a compiled library.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from test_reference_ops import CASES, Case

import gpuopt
from gpuopt import models
from gpuopt.compiled import CompiledModel, compile_model
from gpuopt.randomize import randomize
from gpuopt.tools import run_graph, run_tool, save_weights

RTOL = 1e-5
ATOL = 1e-5

# The ops the CPU kernels implement (--convert-seg-to-cpu-kernels), plus
# max-pool and ReLU: their compiled library is checked too.
SO_CASES = {
    "conv2d_3x3_bias",
    "conv2d_depthwise",
    "conv2d_1x1",
    "conv_transpose2d_2x2_s2",
    "linear_tokens_bias",
    "relu",
    "max_pool2d_3x3_pad_ceil",
    "upsample_bilinear_x2",
    "fused_conv2d_3x3_zero_stride_relu",
    "fused_conv2d_gelu_residual",
    "fused_conv2d_gelu_tanh_shift_residual",
    "deform_conv2d_3x3_groups",
}


def poison(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """`x` with NaN, +Inf and -Inf at distinct random positions (one of each
    per 64 elements, at least one): sparse enough that a convolution's
    output still has finite, NaN and infinite elements."""
    y = x.copy().reshape(-1)
    k = max(1, y.size // 64)
    where = rng.choice(y.size, size=3 * k, replace=False)
    y[where[:k]] = np.nan
    y[where[k : 2 * k]] = np.inf
    y[where[2 * k :]] = -np.inf
    return y.reshape(x.shape)


def case_data(case: Case, rng: np.random.Generator) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    inputs = [rng.standard_normal(s).astype(np.float32) for s in case.inputs]
    # Deformable convolution's second input is the offsets: torchvision casts a
    # NaN coordinate to an integer (undefined), so they stay finite here and
    # test_nan_offsets_sample_nan checks NaN offsets on their own.
    poisoned = 1 if case.name.startswith("deform_conv2d") else len(inputs)
    inputs = [poison(x, rng) if i < poisoned else x for i, x in enumerate(inputs)]
    weights = {}
    for name, shape in case.params.items():
        w = rng.standard_normal(shape).astype(np.float32)
        weights[name] = np.abs(w) + 0.1 if name in case.positive else w
    return inputs, weights


def shift_offsets_fn(case: Case) -> Callable[..., torch.Tensor]:
    """torchvision's deform_conv2d at the offsets of the case's
    seg.shift_offsets. (The case's own torch_fn is the channel shift plus
    convolution that those offsets stand for: equal on finite inputs, but a
    deformable sample at an integer offset still multiplies its neighbours
    by weight 0, so a NaN/Inf there makes it NaN, as in torchvision.)"""
    from torchvision.ops import deform_conv2d

    first, conv = case.body.split("\n")
    off_type = first.rsplit(": ", 1)[1]
    graph = f"func.func @forward() -> {off_type} {{\n  {first}\n  return %off : {off_type}\n}}"
    (offsets,) = run_graph(graph, []).outputs
    stride, padding = (
        tuple(int(v) for v in re.search(rf"{k} = \[(\d+), (\d+)\]", conv).groups())
        for k in ("stride", "padding")
    )

    def fn(a0: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        off = torch.from_numpy(offsets).to(a0.dtype).expand(a0.shape[0], -1, -1, -1)
        return deform_conv2d(a0, off, w, None, stride, padding)

    return fn


def torch_expected(case: Case, inputs: list[np.ndarray], weights: dict[str, np.ndarray], dtype) -> np.ndarray:
    fn = shift_offsets_fn(case) if case.name.startswith("shift_offsets") else case.torch_fn
    with torch.no_grad():
        return (
            fn(
                *[torch.from_numpy(x).to(dtype) for x in inputs],
                **{k: torch.from_numpy(v).to(dtype) for k, v in weights.items()},
            )
            .to(torch.float32)
            .numpy()
        )


def run_linalg(case: Case, inputs: list[np.ndarray], weights: dict[str, np.ndarray], tmp: Path) -> np.ndarray:
    """The seg → linalg lowering alone, executed by the CPU JIT. After the
    lowering the parameters are arguments named by a `seg.param` attribute;
    they are passed as plain inputs, in argument order."""
    (tmp / "seg.mlir").write_text(case.mlir())
    lowered = run_tool(["gpuopt-opt", str(tmp / "seg.mlir"), "--convert-seg-to-linalg"]).stdout
    assert "seg." not in lowered.replace("seg.param", ""), lowered
    names = re.findall(r'\{seg\.param = "(\w+)"\}', lowered)
    (tmp / "linalg.mlir").write_text(re.sub(r' \{seg\.param = "\w+"\}', "", lowered))
    (actual,) = run_graph(tmp / "linalg.mlir", inputs + [weights[n] for n in names], backend="cpu").outputs
    return actual


def run_library(
    case: Case, inputs: list[np.ndarray], weights: dict[str, np.ndarray], tmp: Path
) -> np.ndarray:
    (tmp / "seg.mlir").write_text(case.mlir())
    so = compile_model(tmp / "seg.mlir", tmp / "case.so")
    path = None
    if weights:
        path = tmp / "w.safetensors"
        save_weights(path, weights)
    with CompiledModel(so, path) as model:
        (actual,) = model.run(*inputs)
    return actual


def assert_same_values(actual: np.ndarray, expected: np.ndarray, what: str) -> None:
    """Equal NaN positions, equal signed infinities, close finite values."""
    assert np.isnan(expected).any() or np.isinf(expected).any(), f"{what}: the case has no NaN/Inf to check"
    torch.testing.assert_close(
        torch.from_numpy(actual),
        torch.from_numpy(expected),
        rtol=RTOL,
        atol=ATOL,
        equal_nan=True,
        msg=lambda m: f"{what}: {m}",
    )


BACKENDS = ["reference", "cpu", "linalg", "so"]
PARAMS = [
    pytest.param(case, backend, id=f"{case.name}-{backend}")
    for case in CASES
    for backend in BACKENDS
    if backend != "so" or case.name in SO_CASES
]


@pytest.mark.parametrize(("case", "backend"), PARAMS)
def test_op_nan_inf_match_pytorch(case: Case, backend: str, rng: np.random.Generator, tmp_path: Path) -> None:
    # Drawn again (rarely) until the output holds a NaN or an infinity: a
    # strided slice may miss every poisoned element.
    while True:
        inputs, weights = case_data(case, rng)
        expected64 = torch_expected(case, inputs, weights, torch.float64)
        if not np.isfinite(expected64).all():
            break
    if backend == "linalg":
        actual = run_linalg(case, inputs, weights, tmp_path)
    elif backend == "so":
        actual = run_library(case, inputs, weights, tmp_path)
    else:
        (actual,) = run_graph(case.mlir(), inputs, weights or None, backend=backend).outputs
    expected = torch_expected(case, inputs, weights, torch.float32) if backend == "reference" else expected64
    assert_same_values(actual, expected, f"{case.name} on {backend}")


WEIGHT_CASES = [
    c
    for c in CASES
    if c.name
    in {
        "conv2d_3x3_bias",
        "conv2d_depthwise",
        "conv2d_1x1",
        "conv_transpose2d_2x2_s2",
        "conv_transpose2d_3x3_op",
        "conv_transpose2d_groups",
        "linear_tokens_bias",
        "fused_conv2d_3x3_zero_stride_relu",
        "fused_conv2d_gelu_residual",
    }
]


@pytest.mark.parametrize("backend", ["reference", "cpu", "linalg"])
@pytest.mark.parametrize("case", WEIGHT_CASES, ids=[c.name for c in WEIGHT_CASES])
def test_nan_inf_weights_match_pytorch(
    case: Case, backend: str, rng: np.random.Generator, tmp_path: Path
) -> None:
    """NaN/Inf in the weight and bias of a convolution or linear layer (the
    GEMM's A operand and the epilogue's bias), finite inputs."""
    inputs = [rng.standard_normal(s).astype(np.float32) for s in case.inputs]
    weights = {
        name: poison(rng.standard_normal(shape).astype(np.float32), rng)
        for name, shape in case.params.items()
    }
    if backend == "linalg":
        actual = run_linalg(case, inputs, weights, tmp_path)
    else:
        (actual,) = run_graph(case.mlir(), inputs, weights, backend=backend).outputs
    dtype = torch.float32 if backend == "reference" else torch.float64
    assert_same_values(actual, torch_expected(case, inputs, weights, dtype), f"{case.name} on {backend}")


@pytest.mark.parametrize("backend", ["cpu", "linalg"])
def test_nan_offsets_sample_nan(backend: str, rng: np.random.Generator, tmp_path: Path) -> None:
    """A NaN offset samples NaN (it is neither inside nor outside the map),
    ±Inf offsets lie outside it and sample 0 as in torchvision: so a NaN
    offset makes its output pixel NaN in every output channel, an infinite
    one changes nothing but that tap's contribution."""
    case = next(c for c in CASES if c.name == "deform_conv2d_3x3_groups")
    inputs, weights = case_data(case, rng)
    inputs[0] = rng.standard_normal(case.inputs[0]).astype(np.float32)
    offsets = inputs[1]
    offsets[0, 0, 1, 2] = np.nan  # Tap 0 of offset group 0, pixel (1, 2).
    offsets[1, 3, 2, 4] = np.inf
    offsets[1, 2, 3, 1] = -np.inf
    if backend == "linalg":
        actual = run_linalg(case, inputs, weights, tmp_path)
    else:
        (actual,) = run_graph(case.mlir(), inputs, weights, backend="cpu").outputs
    # Reference: the NaN tap of torchvision is undefined; with the infinite
    # offsets replaced by a far-away coordinate it is defined (0).
    finite = [inputs[0], np.where(np.isinf(offsets), np.sign(offsets) * 1e6, offsets).astype(np.float32)]
    finite[1][0, 0, 1, 2] = 0.0
    expected = torch_expected(case, finite, weights, torch.float64)
    # Offset group 0 feeds input channels 0-1, i.e. group 0 of the
    # convolution (output channels 0-2) of image 0.
    expected[0, :3, 1, 2] = np.nan
    assert_same_values(actual, expected, f"NaN/Inf offsets on {backend}")


def nan_pattern_models() -> list[str]:
    return ["rolling_unet_s", "unext"]


@pytest.fixture(scope="module", params=nan_pattern_models())
def zoo_model(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    name = request.param
    tmp = tmp_path_factory.mktemp(name)
    model = randomize(models.build(name).eval(), seed=3)
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(4))
    gpuopt.export(model, (x,), tmp / "m.mlir", tmp / "m.safetensors")
    run_tool(["gpuopt-opt", str(tmp / "m.mlir"), "--gpuopt-optimize", "-o", str(tmp / "opt.mlir")])
    so = compile_model(tmp / "opt.mlir", tmp / "m.so")
    return {"name": name, "model": model, "tmp": tmp, "so": so}


def nan_images() -> dict[str, np.ndarray]:
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(8)).numpy()
    one = x.copy()
    one[0, 1, 13, 20] = np.nan
    return {"all_nan": np.full_like(x, np.nan), "one_nan_pixel": one}


@pytest.mark.parametrize("image", list(nan_images()))
def test_zoo_nan_pattern(zoo_model: dict, image: str) -> None:
    x = nan_images()[image]
    with torch.no_grad():
        expected = zoo_model["model"](torch.from_numpy(x)).numpy()
    tmp = zoo_model["tmp"]
    weights = [f"--weights={tmp / 'm.safetensors'}"]
    (jit,) = run_graph(tmp / "opt.mlir", [x], backend="cpu", extra_args=weights).outputs
    with CompiledModel(zoo_model["so"], tmp / "m.safetensors") as compiled:
        (library,) = compiled.run(x)
    for actual, where in ((jit, "CPU JIT"), (library, "compiled library")):
        what = f"{zoo_model['name']}, {image}, {where}"
        assert np.isnan(expected).any(), f"{what}: PyTorch's output has no NaN"
        np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg=what)
