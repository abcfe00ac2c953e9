"""The library route of the CUDA backend (``gpuopt-compile --gpu-conv=library|auto``).

The eligible convolutions and linear layers (--convert-seg-to-cuda-library)
become Library steps of the launch plan: a CpuKernelAbi.def routine with its
operands as strided views of plan buffers. The GPU runtime runs them with
cuDNN/cuBLASLt; the emulator with the CPU kernel of the same routine, on the
host arena, rounding the input and weight to TF32 first when the program's
precision is TF32. Here: zoo models (random weights and BatchNorm
statistics, random inputs) after --gpuopt-optimize against PyTorch in both
precisions and three emulation orders, a mutation of a Library step the
plan checks refuse and the emulation shows, and the reader's refusals of
damaged Library steps (edits of a real artifact through flatc's JSON).
"""

from __future__ import annotations

import importlib.util
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import rel_l2
from cuda_artifact import describe_step, from_json, location_text, program, to_json
from torch import nn

import gpuopt
from gpuopt import models
from gpuopt.randomize import randomize
from gpuopt.tools import build_dir

COMPILE = build_dir() / "bin" / "gpuopt-compile"
CUDA_RUN = build_dir() / "bin" / "gpuopt-cuda-run"
ORDERS = ("forward", "reversed", "shuffled:7")
TOLERANCE = {"fp32": 1e-5, "tf32": 5e-3}
ZOO = ["unet", "unext", "rolling_unet_s"]

pytestmark = pytest.mark.skipif(
    not CUDA_RUN.exists(), reason="gpuopt-cuda-run not built (no CUDA toolkit at configure time)"
)


def compile_library(mlir: Path, out: Path, precision: str, *extra: str, mode: str = "library") -> Path:
    proc = subprocess.run(
        [
            COMPILE,
            mlir,
            "--target=cuda",
            "--cuda-arch=sm_90",
            "--cuda-format=ptx",
            "--pipeline=gpuopt-optimize",
        ]
        + [f"--gpu-conv={mode}", f"--gpu-precision={precision}", *extra, "-o", out],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def emulate(artifact: Path, d: Path, order: str, *extra: str) -> subprocess.CompletedProcess:
    y = d / f"y-{artifact.stem}-{order.replace(':', '-')}.npy"
    proc = subprocess.run(
        [CUDA_RUN, artifact, f"--emulate={order}", f"--weights={d / 'm.safetensors'}"]
        + [f"--input=@{d / 'x.npy'}", f"--output=@{y}", *extra],
        capture_output=True,
        text=True,
        check=False,
    )
    proc.output = y  # type: ignore[attr-defined]
    return proc


def emulated(artifact: Path, d: Path, order: str) -> np.ndarray:
    proc = emulate(artifact, d, order)
    assert proc.returncode == 0, proc.stderr
    return np.load(proc.output)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict]:
    """A zoo model at 1x3x32x32 (random weights and statistics), exported,
    with PyTorch's output and its library artifacts in both precisions."""
    out = tmp_path_factory.mktemp("library")
    cache: dict[str, dict] = {}

    def get(name: str) -> dict:
        if name not in cache:
            d = out / name
            d.mkdir()
            model = randomize(models.build(name).eval(), seed=21)
            x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(22))
            gpuopt.export(model, (x,), d / "m.mlir", d / "m.safetensors")
            np.save(d / "x.npy", x.numpy())
            with torch.no_grad():
                expected = model(x).numpy()
            artifacts = {p: compile_library(d / "m.mlir", d / f"{p}.gpuopt", p) for p in TOLERANCE}
            cache[name] = {"dir": d, "expected": expected, "artifacts": artifacts}
        return cache[name]

    return get


class Routines(nn.Module):
    """Every routine of the route: a Conv-BN-ReLU, a convolution plus
    residual, a transposed convolution (kernel == stride) and a linear along
    the width; a GELU convolution that stays generated."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.res = nn.Conv2d(8, 8, 3, padding=1)
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.fc = nn.Linear(20, 20)
        self.gelu = nn.Conv2d(4, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.conv(x)))
        y = self.res(y) + y
        y = self.up(y)
        y = self.fc(y)  # along W: a linear, not a token linear (1x1 conv)
        return nn.functional.gelu(self.gelu(y))


@pytest.fixture(scope="module")
def routines(tmp_path_factory: pytest.TempPathFactory) -> dict:
    d = tmp_path_factory.mktemp("routines")
    model = randomize(Routines().eval(), seed=31)
    x = torch.randn(1, 3, 12, 10, generator=torch.Generator().manual_seed(32))
    gpuopt.export(model, (x,), d / "m.mlir", d / "m.safetensors")
    np.save(d / "x.npy", x.numpy())
    with torch.no_grad():
        expected = model(x).numpy()
    return {"dir": d, "expected": expected}


def test_routines_emulated(routines: dict) -> None:
    """conv2d (with ReLU, with residual), conv_transpose2d and linear as
    Library steps, in both precisions, against PyTorch."""
    d = routines["dir"]
    results = {}
    for precision, tolerance in TOLERANCE.items():
        artifact = compile_library(d / "m.mlir", d / f"r-{precision}.gpuopt", precision)
        used = sorted({s["library"] for s in library_steps(to_json(artifact))})
        assert used == ["conv2d", "conv_transpose2d", "linear"], used
        outputs = [emulated(artifact, d, order) for order in ORDERS]
        for got in outputs[1:]:
            assert np.array_equal(got.view(np.uint32), outputs[0].view(np.uint32))
        err = rel_l2(outputs[0], routines["expected"])
        assert err <= tolerance, f"{precision}: relative L2 error {err:.3e}"
        results[precision] = outputs[0]
    assert not np.array_equal(results["fp32"], results["tf32"])


class Mixed(nn.Module):
    """At 224x224 on the H200 model: a 3x3 convolution of 64 into 64
    channels (3.7 GFLOP, compute-bound, the library's tiles fill the GPU)
    between two cheap ones (3 input channels; 2 output channels)."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 64, 3, padding=1)
        self.conv = nn.Conv2d(64, 64, 3, padding=1)
        self.bn = nn.BatchNorm2d(64)
        self.head = nn.Conv2d(64, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.stem(x))
        return self.head(torch.relu(self.bn(self.conv(y))))


def test_auto_mixes_routes_emulated(tmp_path: Path) -> None:
    """--gpu-conv=auto (the cost model's choice on the shipped H200 model):
    some eligible convolutions become Library steps, not all; the artifact
    computes the model (PyTorch within 1e-5, two orders bitwise equal)."""
    model = randomize(Mixed().eval(), seed=41)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(42))
    gpuopt.export(model, (x,), tmp_path / "m.mlir", tmp_path / "m.safetensors")
    np.save(tmp_path / "x.npy", x.numpy())
    with torch.no_grad():
        expected = model(x).numpy()
    auto = compile_library(tmp_path / "m.mlir", tmp_path / "auto.gpuopt", "fp32", mode="auto")
    every = compile_library(tmp_path / "m.mlir", tmp_path / "all.gpuopt", "fp32")
    chosen, eligible = len(library_steps(to_json(auto))), len(library_steps(to_json(every)))
    print(f"--gpu-conv=auto: {chosen} of {eligible} eligible convolutions as Library steps")
    assert eligible == 3 and 0 < chosen < eligible
    outputs = [emulated(auto, tmp_path, order) for order in ORDERS[:2]]
    assert np.array_equal(outputs[0].view(np.uint32), outputs[1].view(np.uint32))
    err = rel_l2(outputs[0], expected)
    print(f"--gpu-conv=auto: relative L2 error {err:.3e} vs PyTorch")
    assert err <= TOLERANCE["fp32"]


def library_steps(model: dict, plan: str = "run") -> list[dict]:
    return [s for s in program(model)[plan] if s["kind"] == "Library"]


@pytest.mark.parametrize("name", ZOO)
def test_zoo_library_emulated(name: str, zoo: Callable[[str], dict]) -> None:
    """Each precision: PyTorch's output within its tolerance, the three
    orders bitwise equal; TF32 differs from FP32 (the rounding happens)."""
    e = zoo(name)
    d, expected = e["dir"], e["expected"]
    firsts = {}
    for precision, artifact in e["artifacts"].items():
        model = to_json(artifact)
        prog = program(model)
        assert prog["precision"] == precision.upper()
        library = library_steps(model)
        routines = sorted({s["library"] for s in library})
        print(
            f"{name} {precision}: {len(prog['run'])} steps per forward, {len(library)} library "
            f"({', '.join(routines)}), {len(prog['run']) - len(library)} launches"
        )
        assert library, f"{name}: --gpu-conv=library made no Library step"
        outputs = {order: emulated(artifact, d, order) for order in ORDERS}
        first = outputs[ORDERS[0]]
        assert not np.isnan(first).any(), f"{name} {precision}: NaN in the emulated output"
        err = rel_l2(first, expected)
        print(f"{name} {precision}: relative L2 error {err:.3e} vs PyTorch")
        assert err <= TOLERANCE[precision], f"{name} {precision}: relative L2 error {err:.3e} vs PyTorch"
        for order, got in outputs.items():
            assert np.array_equal(got.view(np.uint32), first.view(np.uint32)), (
                f"{name} {precision}: order {order} differs bitwise from {ORDERS[0]}"
            )
        firsts[precision] = first
    assert not np.array_equal(firsts["fp32"], firsts["tf32"]), (
        f"{name}: TF32 gave the FP32 result bit for bit"
    )


def first_library_step(prog: dict, fits: Callable[[dict, dict], bool] | None = None) -> int:
    for i, s in enumerate(prog["run"]):
        if s["kind"] == "Library" and (fits is None or fits(prog, s)):
            return i
    raise AssertionError("no suitable Library step")


def elements(prog: dict, buffer: int) -> int:
    return int(np.prod(prog["buffers"][buffer]["type"]["shape"]))


def extent(op: dict) -> int:
    return op["offset"] + sum((n - 1) * s for n, s in zip(op["sizes"], op["strides"])) + 1


def test_output_moved_onto_input(zoo: Callable[[str], dict], tmp_path: Path) -> None:
    """A mutation: a Library step's output view moved onto its input's
    buffer and offset. The plan checks refuse it; emulated without them, the
    step's real output is never written and the result is wrong."""
    e = zoo("unet")
    d = e["dir"]
    model = to_json(e["artifacts"]["fp32"])
    prog = program(model)

    def fits(prog: dict, s: dict) -> bool:
        out, inp = s["operands"][0], s["operands"][1]
        return extent({**out, "offset": inp["offset"]}) <= elements(prog, inp["buffer"])

    index = first_library_step(prog, fits)
    step = prog["run"][index]
    out, inp = step["operands"][0], step["operands"][1]
    out["buffer"], out["offset"] = inp["buffer"], inp["offset"]
    step["args"] = list(dict.fromkeys(o["buffer"] for o in step["operands"] if 0 not in o["sizes"]))
    bad = from_json(model, tmp_path / "moved.gpuopt")
    proc = subprocess.run([CUDA_RUN, bad, "--inspect"], capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert (
        f"invalid CUDA artifact: {describe_step(model, 'run', index)}: operand 0 (the output" in proc.stderr
    )
    assert "overlaps operand 1" in proc.stderr
    proc = emulate(bad, d, "forward", "--skip-plan-checks")
    if proc.returncode == 0:
        got = np.load(proc.output)  # type: ignore[attr-defined]
        assert np.isnan(got).any() or rel_l2(got, e["expected"]) > 1e-2, "the moved output went unnoticed"


# The reader's refusals: (edit of the first Library step of each routine
# kind, the message after "<step>: "). Each edit is of a real artifact.
def _conv(prog: dict, s: dict) -> bool:
    return s["library"] == "conv2d"


def _set(path: list, value: object) -> Callable[[dict, dict], None]:
    def edit(prog: dict, step: dict) -> None:
        target = step
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


def _shifted(prog: dict, step: dict) -> None:
    """offH names a new i64 buffer of one entry per input channel."""
    channels = step["operands"][1]["sizes"][1]
    prog["buffers"].append(
        {
            "kind": "Temp",
            "name": "",
            "type": {"dtype": "I64", "shape": [channels]},
            "bytes": 8 * channels,
            "offset": prog["arena_bytes"],
        }
    )
    prog["arena_bytes"] += (8 * channels + 255) // 256 * 256
    buffer = len(prog["buffers"]) - 1
    step["operands"][5] = {"buffer": buffer, "offset": 0, "sizes": [channels], "strides": [1]}
    step["args"].append(buffer)


def _drop_operand(prog: dict, step: dict) -> None:
    step["operands"].pop()


def _unknown(prog: dict, step: dict) -> None:
    step["library"] = "deform_conv2d"


def _strided_weight(prog: dict, step: dict) -> None:
    """The kernel's rows and columns swapped: inside the buffer, not packed."""
    strides = step["operands"][2]["strides"]
    strides[-1], strides[-2] = strides[-2], strides[-1]


def _args_reversed(prog: dict, step: dict) -> None:
    step["args"] = list(reversed(step["args"]))


SHIFTED = "a shifted conv2d (non-empty shift operands or frames) is not supported by the CUDA library route"
GELU = "activation 2 (only none and relu) is not supported by the CUDA library route"
RELU_RESIDUAL = "relu with a residual is not supported by the CUDA library route"


def _relu_residual(prog: dict, step: dict) -> None:
    step["scalars"][8] = 3
    step["scalars"][9] = 1


REFUSALS = {
    "unknown routine": (_conv, _unknown, None),
    "shifted": (_conv, _shifted, SHIFTED),
    "frames": (_conv, _set(["scalars", 7], 2), SHIFTED),
    "gelu": (_conv, _set(["scalars", 9], 2), GELU),
    "relu with residual": (_conv, _relu_residual, RELU_RESIDUAL),
    "operand count": (_conv, _drop_operand, "7 operands and 10 scalars, 'conv2d' takes 8 and 10"),
    "scalar count": (
        _conv,
        lambda p, s: s["scalars"].pop(),
        "8 operands and 9 scalars, 'conv2d' takes 8 and 10",
    ),
    "rank": (_conv, lambda p, s: s["operands"][1]["sizes"].pop(), "operand 1 must have 4 sizes and strides"),
    "negative stride": (
        _conv,
        _set(["operands", 1, "strides", 0], -1),
        "operand 1 has a negative offset or stride",
    ),
    "outside": (_conv, _set(["operands", 1, "offset"], 1 << 40), None),
    "args": (_conv, _args_reversed, "'args' must be the distinct buffers of its operands, operand 0's first"),
    "weight strides": (_conv, _strided_weight, None),
    "bad groups": (_conv, _set(["scalars", 6], 3), None),
    "stride zero": (_conv, _set(["scalars", 0], 0), "strides, dilations and groups must be in [1, 2^31)"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_reader_refuses(case: str, zoo: Callable[[str], dict], tmp_path: Path) -> None:
    e = zoo("unet")
    model = to_json(e["artifacts"]["fp32"])
    prog = program(model)
    select, edit, message = REFUSALS[case]
    index = first_library_step(prog, select)
    step = prog["run"][index]
    if case == "args" and len(step["args"]) < 2:
        pytest.skip("the step has one buffer")
    edit(prog, step)
    bad = from_json(model, tmp_path / "bad.gpuopt")
    proc = subprocess.run([CUDA_RUN, bad, "--inspect"], capture_output=True, text=True, check=False)
    assert proc.returncode == 1, proc.stdout
    line = proc.stderr.splitlines()[-1]
    where = describe_step(model, "run", index)
    if case == "unknown routine":
        at = location_text(step.get("sources") or [], step.get("loc") or "")
        assert line.endswith(
            f"invalid CUDA artifact: run[{index}]{f' ({at})' if at else ''}: unknown library routine "
            "'deform_conv2d' (expected conv2d, conv_transpose2d or linear)"
        ), line
        return
    assert f"invalid CUDA artifact: {where}: " in line, line
    if message is not None:
        assert line.endswith(message), line
    elif case == "outside":
        assert "lies outside buffers[" in line, line
    elif case == "weight strides":
        assert "(not contiguous) is not supported by the CUDA library route" in line, line
    else:
        assert "do not match groups 3" in line, line


def test_precision_is_read(zoo: Callable[[str], dict], tmp_path: Path) -> None:
    """The precision of the Library steps is read from the artifact: the
    TF32 artifact edited to FP32 emulates the FP32 artifact's bits. Both
    without workgroup tiles, whose TF32 tensor cores are compiled into the
    kernels (their precision is not read at run time)."""
    e = zoo("unext")
    untiled = {
        p: compile_library(e["dir"] / "m.mlir", tmp_path / f"{p}.gpuopt", p, "--cuda-workgroup-tile=false")
        for p in ("fp32", "tf32")
    }
    model = to_json(untiled["tf32"])
    program(model)["precision"] = "FP32"
    edited = from_json(model, tmp_path / "edited.gpuopt")
    got = emulated(edited, e["dir"], "forward")
    want = emulated(untiled["fp32"], e["dir"], "forward")
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_plan_summary_counts_library_steps(zoo: Callable[[str], dict], tmp_path: Path) -> None:
    """utils/cuda_plan_summary.py gives each routine's Library steps a row."""
    spec = importlib.util.spec_from_file_location(
        "cuda_plan_summary", Path(__file__).resolve().parents[2] / "utils" / "cuda_plan_summary.py"
    )
    summary = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(summary)
    d = zoo("unet")["dir"]
    kernels, artifact = tmp_path / "k.mlir", tmp_path / "k.gpuopt"
    proc = subprocess.run(
        [COMPILE, d / "m.mlir", "--target=cuda", "--cuda-format=ptx", "--pipeline=gpuopt-optimize"]
        + ["--gpu-conv=library", f"--cuda-write-kernels={kernels}", "-o", artifact],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    plan = summary.read_plan(artifact)
    rows = {kind: n for kind, n, _ in summary.summarize(plan, summary.kernel_bodies(kernels), "run", None)}
    for routine in ("conv2d", "conv_transpose2d"):
        want = sum(1 for s in plan["run"] if s["kind"] == "Library" and s["library"] == routine)
        assert want and rows.get(f"library {routine}") == want, rows
    assert sum(rows.values()) == len(plan["run"])


def tf32(a: np.ndarray) -> np.ndarray:
    """`a` (float32) rounded to TF32: 10 mantissa bits, nearest, ties to even."""
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x0FFF + ((u >> 13) & 1)) & 0xFFFFE000
    return u.astype(np.uint32).view(np.float32)


def test_tf32_rounds_input_and_weight(tmp_path: Path) -> None:
    """The emulated TF32 convolution is the FP64 convolution of the input and
    weight rounded to nearest-even TF32, bias unrounded (to FP32 accuracy),
    and measurably not the unrounded one."""
    conv = randomize(nn.Conv2d(3, 4, 3, padding=1).eval(), seed=41)
    x = torch.randn(1, 3, 9, 7, generator=torch.Generator().manual_seed(42))
    gpuopt.export(conv, (x,), tmp_path / "m.mlir", tmp_path / "m.safetensors")
    np.save(tmp_path / "x.npy", x.numpy())
    artifact = compile_library(tmp_path / "m.mlir", tmp_path / "tf32.gpuopt", "tf32")
    assert [s["library"] for s in library_steps(to_json(artifact))] == ["conv2d"]
    got = emulated(artifact, tmp_path, "forward")

    def reference(xs: np.ndarray, ws: np.ndarray) -> np.ndarray:
        return torch.nn.functional.conv2d(
            torch.from_numpy(xs).double(),
            torch.from_numpy(ws).double(),
            conv.bias.detach().double(),
            padding=1,
        ).numpy()

    w = conv.weight.detach().numpy()
    rounded = reference(tf32(x.numpy()), tf32(w))
    exact = reference(x.numpy(), w)
    assert rel_l2(got, rounded) <= 1e-6, rel_l2(got, rounded)
    assert rel_l2(got, exact) > 1e-5, rel_l2(got, exact)
