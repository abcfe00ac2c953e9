"""The CUDA artifact run on the host: its own kernels and launch plan.

``gpuopt-compile --target=cuda --cuda-host-image`` embeds the kernels of the
gpu.module the PTX is made of, built for the host (a HostSo image); the
emulator (``gpuopt-cuda-run --emulate``, ``CompiledModel(device="emulate")``)
runs the artifact's plan with them: the same arena, offsets, load-time steps
and launch order, every byte that does not persist filled with NaN before
each forward. Every model here has random weights *and* random BatchNorm
statistics (gpuopt.randomize) and is compared with PyTorch (relative L2
error <= 1e-5); blocks and threads run in forward, reversed and shuffled
order, whose outputs must be bitwise equal (the kernels have no mma, so any
difference is a race or a read of another thread's result). A kernel the
emulation cannot run fails its compile, and so the test. The PTX format is
used: it needs no ptxas, and the PTX itself is not what runs here.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import rel_l2
from cuda_artifact import program, rewrite, to_json
from torch import nn

import gpuopt
from gpuopt import models
from gpuopt.compiled import CompiledModel
from gpuopt.randomize import randomize
from gpuopt.tools import build_dir

COMPILE = build_dir() / "bin" / "gpuopt-compile"
CUDA_RUN = build_dir() / "bin" / "gpuopt-cuda-run"
REL_L2 = 1e-5
ORDERS = ("forward", "reversed", "shuffled:7")

needs_cuda_run = pytest.mark.skipif(
    not CUDA_RUN.exists(), reason="gpuopt-cuda-run not built (no CUDA toolkit at configure time)"
)


def compile_cuda(mlir: Path, out: Path, pipeline: str | None = None, *flags: str) -> Path:
    extra = [f"--pipeline={pipeline}"] if pipeline else []
    extra += flags
    proc = subprocess.run(
        [
            COMPILE,
            mlir,
            "--target=cuda",
            "--cuda-arch=sm_90",
            "--cuda-format=ptx",
            "--cuda-host-image",
            "-o",
            out,
        ]
        + extra,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def emulate(
    artifact: Path, weights: Path, inputs: list[Path], out: Path, order: str, *extra: str
) -> np.ndarray:
    """The output of `gpuopt-cuda-run --emulate=ORDER` (and `extra`)."""
    y = out / f"y-{order.replace(':', '-')}.npy"
    proc = subprocess.run(
        [CUDA_RUN, artifact, f"--emulate={order}", f"--weights={weights}", f"--output=@{y}", *extra]
        + [f"--input=@{x}" for x in inputs],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return np.load(y)


def check_orders(artifact: Path, weights: Path, inputs: list[Path], expected: np.ndarray, what: str) -> None:
    """Every order gives the same bits, and PyTorch's result within REL_L2."""
    outputs = {order: emulate(artifact, weights, inputs, artifact.parent, order) for order in ORDERS}
    first = outputs[ORDERS[0]]
    assert not np.isnan(first).any(), f"{what}: the emulated output holds NaN (a read of an unwritten byte)"
    err = rel_l2(first, expected)
    assert err <= REL_L2, f"{what}: relative L2 error {err:.3e} vs PyTorch"
    for order, got in outputs.items():
        assert got.shape == first.shape
        assert np.array_equal(got.view(np.uint32), first.view(np.uint32)), (
            f"{what}: order {order} differs bitwise from {ORDERS[0]} (a race between threads or blocks)"
        )


class ConvBnRelu(nn.Module):
    """Conv-BN-ReLU plus a residual input: load-time BatchNorm folding after
    --gpuopt-optimize, two inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 4, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.conv(x)))
        return torch.relu(self.bn2(self.conv2(y))) + r


@pytest.fixture(scope="module")
def conv_bn_relu(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("cbr")
    model = randomize(ConvBnRelu().eval(), seed=3)
    gen = torch.Generator().manual_seed(4)
    x, r = torch.randn(1, 3, 16, 16, generator=gen), torch.randn(1, 4, 16, 16, generator=gen)
    gpuopt.export(model, (x, r), out / "m.mlir", out / "m.safetensors")
    np.save(out / "x.npy", x.numpy())
    np.save(out / "r.npy", r.numpy())
    with torch.no_grad():
        expected = model(x, r).numpy()
    return {"dir": out, "model": model, "x": x, "r": r, "expected": expected}


@needs_cuda_run
@pytest.mark.parametrize("pipeline", [None, "gpuopt-optimize"], ids=["exported", "optimized"])
def test_conv_bn_relu_orders(conv_bn_relu: dict, pipeline: str | None) -> None:
    d: Path = conv_bn_relu["dir"]
    artifact = compile_cuda(d / "m.mlir", d / f"{pipeline or 'exported'}.gpuopt", pipeline)
    model = to_json(artifact)
    host = [i for i in program(model)["images"] if i["format"] == "HostSo"]
    assert [i["chip"] for i in host] == ["host-x86_64"]
    assert bytes(host[0]["data"][:4]) == b"\x7fELF"
    check_orders(
        artifact,
        d / "m.safetensors",
        [d / "x.npy", d / "r.npy"],
        conv_bn_relu["expected"],
        f"Conv-BN-ReLU {pipeline or 'as exported'}",
    )


def test_python_api_emulate(conv_bn_relu: dict) -> None:
    """CompiledModel(device="emulate"): two forwards on different inputs and
    a third on the first again, each checked (a forward that overwrites a
    weight, a load-time result or its input fails the later ones)."""
    d: Path = conv_bn_relu["dir"]
    artifact = compile_cuda(d / "m.mlir", d / "api.gpuopt", "gpuopt-optimize")
    model = conv_bn_relu["model"]
    gen = torch.Generator().manual_seed(9)
    x2, r2 = torch.randn(1, 3, 16, 16, generator=gen), torch.randn(1, 4, 16, 16, generator=gen)
    with torch.no_grad():
        expected2 = model(x2, r2).numpy()
    x, r = conv_bn_relu["x"].numpy(), conv_bn_relu["r"].numpy()
    with CompiledModel(artifact, d / "m.safetensors", device="emulate") as compiled:
        assert compiled.target == "cuda"
        assert compiled.input_shapes == [(1, 3, 16, 16), (1, 4, 16, 16)]
        results = [compiled.run(x, r)[0], compiled.run(x2.numpy(), r2.numpy())[0], compiled.run(x, r)[0]]
    for run, (got, want) in enumerate(
        zip(results, [conv_bn_relu["expected"], expected2, conv_bn_relu["expected"]])
    ):
        err = rel_l2(got, want)
        assert err <= REL_L2, f"CompiledModel(device='emulate') run {run + 1}: relative L2 error {err:.3e}"
    with pytest.raises(ValueError, match="device must be a GPU ordinal"):
        CompiledModel(artifact, d / "m.safetensors", device="cpu")


def test_no_host_image_is_an_error(conv_bn_relu: dict) -> None:
    d: Path = conv_bn_relu["dir"]
    out = d / "nohost.gpuopt"
    proc = subprocess.run(
        [COMPILE, d / "m.mlir", "--target=cuda", "--cuda-format=ptx", "--cuda-host-image=false", "-o", out],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    with pytest.raises(gpuopt.compiled.CompiledModelError) as e:
        CompiledModel(out, d / "m.safetensors", device="emulate")
    assert str(e.value) == (
        f"{out}: no kernel image for the host (host-x86_64) to emulate; the artifact holds ptx sm_90: "
        "recompile it with --cuda-host-image on a x86_64 machine"
    )


@needs_cuda_run
def test_wrong_offset_is_caught(conv_bn_relu: dict, tmp_path: Path) -> None:
    """A mutation: the last launch reads a buffer an earlier launch wrote at
    a wrong arena offset (a fresh range no step writes). The NaN-filled arena
    shows it (with the load-time plan checks, which refuse it, skipped)."""
    d: Path = conv_bn_relu["dir"]
    artifact = compile_cuda(d / "m.mlir", tmp_path / "good.gpuopt")
    inputs = [d / "x.npy", d / "r.npy"]
    good = emulate(artifact, d / "m.safetensors", inputs, tmp_path, "forward")
    assert rel_l2(good, conv_bn_relu["expected"]) <= REL_L2

    def edit(model: dict) -> None:
        prog = program(model)
        buffers, step = prog["buffers"], prog["run"][-1]
        written = {a for s in prog["run"][:-1] for a in s["args"]}
        # The first temporary of the last launch that an earlier one uses.
        index = next(i for i, a in enumerate(step["args"]) if buffers[a]["kind"] == "Temp" and a in written)
        moved = dict(buffers[step["args"][index]])
        moved["kind"] = "Temp"
        moved["offset"] = prog["arena_bytes"]
        prog["arena_bytes"] += (moved["bytes"] + 255) // 256 * 256
        buffers.append(moved)
        step["args"][index] = len(buffers) - 1

    bad = rewrite(artifact, tmp_path / "bad.gpuopt", edit)
    got = emulate(bad, d / "m.safetensors", inputs, tmp_path, "forward", "--skip-plan-checks")
    assert np.isnan(got).any(), "a read of an unwritten arena range was not seen as NaN"


@needs_cuda_run
def test_race_is_caught(conv_bn_relu: dict, tmp_path: Path) -> None:
    """A mutation: a launch writes its result over a buffer it reads (the
    output placed at its input's offset), so what a thread reads depends on
    which threads ran before it. The orders must then disagree; if they did
    not, their agreement on the real plans would prove nothing. (The load-time
    plan checks refuse the plan: skipped.)"""
    d: Path = conv_bn_relu["dir"]
    artifact = compile_cuda(d / "m.mlir", tmp_path / "good.gpuopt")
    inputs = [d / "x.npy", d / "r.npy"]

    def edit(model: dict) -> None:
        # The first launch that writes a temporary or the output and reads
        # an input or a temporary (its kernel's signature says which).
        prog = program(model)
        buffers = prog["buffers"]
        for step in prog["run"]:
            sig = prog["kernels"][step["kernel"]]["args"]
            written = [a for a, p in zip(step["args"], sig) if p.get("writes") and not p.get("reads")]
            written = [a for a in written if buffers[a]["kind"] in ("Temp", "Output")]
            read = [a for a, p in zip(step["args"], sig) if p.get("reads") and not p.get("writes")]
            read = [a for a in read if buffers[a]["kind"] in ("Temp", "Input")]
            if written and read:
                out, source = buffers[written[0]], buffers[read[0]]
                assert source["offset"] + out["bytes"] <= prog["arena_bytes"]
                out["offset"] = source["offset"]
                return
        raise AssertionError("no launch reads an input or temporary and writes another buffer")

    bad = rewrite(artifact, tmp_path / "racy.gpuopt", edit)
    forward = emulate(bad, d / "m.safetensors", inputs, tmp_path, "forward", "--skip-plan-checks")
    reversed_ = emulate(bad, d / "m.safetensors", inputs, tmp_path, "reversed", "--skip-plan-checks")
    assert not np.array_equal(forward.view(np.uint32), reversed_.view(np.uint32))


@needs_cuda_run
def test_emulate_errors(conv_bn_relu: dict, tmp_path: Path) -> None:
    """Usage errors and a kernel the host image lacks: one line, exit 1."""
    d: Path = conv_bn_relu["dir"]
    artifact = compile_cuda(d / "m.mlir", tmp_path / "a.gpuopt")
    base = [
        CUDA_RUN,
        artifact,
        f"--weights={d / 'm.safetensors'}",
        f"--input=@{d / 'x.npy'}",
        f"--input=@{d / 'r.npy'}",
    ]

    def run(*args: object) -> subprocess.CompletedProcess:
        return subprocess.run([*base, *args], capture_output=True, text=True, check=False)

    proc = run("--emulate=sideways")
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "gpuopt-cuda-run: error: --emulate: unknown emulation order 'sideways' "
        "(expected forward, reversed, shuffled or shuffled:SEED)"
    )
    proc = run("--emulate", "--graph")
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "gpuopt-cuda-run: error: --graph and --device choose how a GPU runs; they do not apply to --emulate"
    )
    proc = run("--emulate", "--device=1")
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "gpuopt-cuda-run: error: --graph and --device choose how a GPU runs; they do not apply to --emulate"
    )
    for passes in ("0", "1001", "two"):
        proc = run("--emulate", f"--profile={passes}")
        assert proc.returncode == 1
        assert proc.stderr.splitlines()[-1] == (
            "gpuopt-cuda-run: error: --profile= must be a number of passes in [1, 1000]"
        )

    # Timing the emulation (the GPU benchmark's dry run): the GPU run's JSON.
    js = tmp_path / "t.json"
    y = tmp_path / "y.npy"
    proc = run("--emulate", "--runs=3", "--warmup=1", "--profile=2", f"--json={js}", f"--output=@{y}")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(js.read_text())
    launches = int(
        re.search(
            r"(\d+) per forward",
            subprocess.run(
                [CUDA_RUN, artifact, "--inspect"], capture_output=True, text=True, check=True
            ).stdout,
        ).group(1)
    )
    assert r["emulated"] is True and r["device"] == "emulator (host-x86_64)" and r["graph"] is False
    assert r["launches"] == launches and r["runs"] == 3 and r["profile_passes"] == 2
    assert 0 < r["p10_ms"] <= r["median_ms"] <= r["p90_ms"]
    assert len(r["step_ms"]) == launches and all(t >= 0 for t in r["step_ms"]) and r["kernel_ms_sum"] > 0
    assert r["kernel_ms_sum"] == pytest.approx(sum(r["step_ms"]), abs=1e-5 * launches)
    assert rel_l2(np.load(y), conv_bn_relu["expected"]) <= REL_L2
    proc = run("--emulate", "--runs=1", f"--json={js}")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(js.read_text())
    assert r["kernel_ms_sum"] is None and r["step_ms"] == [] and r["profile_passes"] == 0

    def rename(model: dict) -> None:
        program(model)["kernels"][0]["name"] = "no_such_kernel"

    bad = rewrite(artifact, tmp_path / "renamed.gpuopt", rename)
    proc = subprocess.run(
        [*base[:1], bad, *base[2:], "--emulate"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        f"gpuopt-cuda-run: error: {bad}: the host image has no kernel 'no_such_kernel' "
        "(no symbol gpuopt_host_no_such_kernel)"
    )


@needs_cuda_run
def test_host_image_chip_is_checked(conv_bn_relu: dict, tmp_path: Path) -> None:
    """A HostSo image names a host chip; the GPU runtime never picks it."""
    d: Path = conv_bn_relu["dir"]
    artifact = compile_cuda(d / "m.mlir", tmp_path / "a.gpuopt")

    def sm_chip(model: dict) -> None:
        host = next(i for i in program(model)["images"] if i["format"] == "HostSo")
        host["chip"] = "sm_90"

    bad = rewrite(artifact, tmp_path / "bad.gpuopt", sm_chip)
    proc = subprocess.run([CUDA_RUN, bad, "--inspect"], capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        f"gpuopt-cuda-run: error: {bad}: invalid CUDA artifact: images[1] must give chip sm_NN and format "
        "fatbin|cubin|ptx, or chip host-ARCH and format HostSo"
    )


def test_emulator_needs_no_cuda_toolkit(conv_bn_relu: dict, tmp_path: Path) -> None:
    """libgpuopt_runtime.so of the standalone runtime project built without
    the CUDA toolkit emulates (a GPU device is refused as unsupported)."""
    d: Path = conv_bn_relu["dir"]
    artifact = compile_cuda(d / "m.mlir", tmp_path / "a.gpuopt", "gpuopt-optimize")
    build = tmp_path / "rt"
    repo = Path(__file__).resolve().parents[2]
    for cmd in (
        ["cmake", "-G", "Ninja", "-S", repo / "runtime", "-B", build, "-DGPUOPT_WITH_CUDA=OFF"],
        ["ninja", "-C", build, "gpuopt_runtime"],
    ):
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    lib = build / "lib" / "libgpuopt_runtime.so"
    script = (
        "import sys, numpy as np\n"
        "from gpuopt.compiled import CompiledModel, CompiledModelError\n"
        "a, w, x, r, y = sys.argv[1:]\n"
        "with CompiledModel(a, w, device='emulate') as m:\n"
        "    np.save(y, m.run(np.load(x), np.load(r))[0])\n"
        "try:\n"
        "    CompiledModel(a, w, device=0)\n"
        "except CompiledModelError as e:\n"
        "    print(e)\n"
    )
    y = tmp_path / "y.npy"
    proc = subprocess.run(
        [sys.executable, "-c", script, artifact, d / "m.safetensors", d / "x.npy", d / "r.npy", y],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "GPUOPT_RUNTIME_LIBRARY": str(lib)},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (
        f"{artifact} is a CUDA artifact, but this runtime was built without CUDA support "
        "(no CUDA toolkit was found when it was built)"
    )
    err = rel_l2(np.load(y), conv_bn_relu["expected"])
    assert err <= REL_L2, f"relative L2 error {err:.3e}"


# Every zoo model, as exported, after --gpuopt-optimize and after
# --gpuopt-optimize with deform-conv=true (the rolls become seg.deform_conv2d,
# whose kernels only this pipeline makes). The fifteen cases of the five
# small models take 75-140 s on 2 cores; Rolling-UNet-M/-L (their exported
# graphs take minutes to compile) and Rolling-UNet-S at 224x224 are in the
# slow tier (make check-slow).
ZOO = ["unet", "rolling_unet_s", "unext", "unext_s", "unext_stripe"]
ZOO_SLOW = ["rolling_unet_m", "rolling_unet_l"]
PIPELINES = {
    "exported": None,
    "optimized": "gpuopt-optimize",
    "deform-conv": "gpuopt-optimize{deform-conv=true}",
}
# The zoo models with rolls (UNet and UNeXt-Stripe have none): deform-conv=true
# must give them deformable convolutions (else the third pipeline would test
# the second again).
ROLLING = {"rolling_unet_s", "rolling_unet_m", "rolling_unet_l", "unext", "unext_s"}


def export_zoo(name: str, side: int, d: Path) -> np.ndarray:
    """Exports zoo model `name` (random weights and statistics, the same in
    every run) at side x side into d (m.mlir, m.safetensors, x.npy); returns
    PyTorch's output."""
    with torch.random.fork_rng():
        torch.manual_seed(11)  # the layers' initial weights
        model = randomize(models.build(name).eval(), seed=11)
    x = torch.randn(1, 3, side, side, generator=torch.Generator().manual_seed(5))
    gpuopt.export(model, (x,), d / "m.mlir", d / "m.safetensors")
    np.save(d / "x.npy", x.numpy())
    with torch.no_grad():
        return model(x).numpy()


def check_pipeline(name: str, d: Path, pipeline: str, expected: np.ndarray) -> None:
    """Compiles d/m.mlir with `pipeline` (a key of PIPELINES), checks that
    deform-conv=true made deformable convolutions where the model rolls, and
    runs check_orders."""
    if pipeline == "deform-conv" and name in ROLLING:
        proc = subprocess.run(
            [build_dir() / "bin" / "gpuopt-opt", d / "m.mlir", "--gpuopt-optimize=deform-conv=true"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert "seg.deform_conv2d" in proc.stdout, f"{name}: deform-conv=true made no seg.deform_conv2d"
    artifact = compile_cuda(d / "m.mlir", d / f"{pipeline}.gpuopt", PIPELINES[pipeline])
    check_orders(artifact, d / "m.safetensors", [d / "x.npy"], expected, f"{name} {pipeline}")


@pytest.fixture(scope="module")
def zoo_exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    out = tmp_path_factory.mktemp("zoo")
    cache: dict[str, dict[str, object]] = {}

    def get(name: str) -> dict[str, object]:
        if name not in cache:
            d = out / name
            d.mkdir()
            cache[name] = {"dir": d, "expected": export_zoo(name, 32, d)}
        return cache[name]

    return get


@needs_cuda_run
@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("name", ZOO + [pytest.param(n, marks=pytest.mark.slow) for n in ZOO_SLOW])
def test_zoo_emulated(name: str, pipeline: str, zoo_exports) -> None:
    e = zoo_exports(name)
    check_pipeline(name, e["dir"], pipeline, e["expected"])


@needs_cuda_run
@pytest.mark.parametrize("name", ZOO)
def test_zoo_tf32_emulated(name: str, zoo_exports) -> None:
    """Every zoo model, optimized, with its workgroup-tiled convolutions and
    linears on TF32 tensor cores (--gpu-precision=tf32, generated kernels):
    PyTorch's FP32 output within the TF32 tolerance (issue 17: relative L2
    5e-3), TF32 in use (not FP32's result), two orders bitwise equal."""
    e = zoo_exports(name)
    d = e["dir"]
    artifact = compile_cuda(d / "m.mlir", d / "tf32.gpuopt", "gpuopt-optimize", "--gpu-precision=tf32")
    outputs = [emulate(artifact, d / "m.safetensors", [d / "x.npy"], d, order) for order in ORDERS[:2]]
    assert np.array_equal(outputs[0].view(np.uint32), outputs[1].view(np.uint32)), f"{name}: orders differ"
    err = rel_l2(outputs[0], e["expected"])
    print(f"{name} TF32 tiles: relative L2 error {err:.3e} vs PyTorch (FP32)")
    assert 1e-7 < err <= 5e-3, f"{name}: TF32 relative L2 error {err:.3e} vs PyTorch (FP32)"


@pytest.fixture(scope="module")
def rolling_unet_s_224(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    d = tmp_path_factory.mktemp("rolling_unet_s_224")
    return {"dir": d, "expected": export_zoo("rolling_unet_s", 224, d)}


@needs_cuda_run
@pytest.mark.slow
@pytest.mark.parametrize("pipeline", PIPELINES)
def test_rolling_unet_s_224_emulated(pipeline: str, rolling_unet_s_224: dict) -> None:
    """Rolling-UNet-S at its paper size (slow tier: make check-slow)."""
    check_pipeline("rolling_unet_s", rolling_unet_s_224["dir"], pipeline, rolling_unet_s_224["expected"])


class TileShapes(nn.Module):
    """Output channel counts that register tiles of 2, 3, 4 and 8 do not
    divide (7, 5, 3, 6), a grouped and a depthwise convolution, a linear of
    9 features and a single output channel."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(3, 7, 3, padding=1)
        self.b = nn.Conv2d(7, 5, 3, padding=1, bias=False)
        self.g = nn.Conv2d(5, 10, 3, padding=1, groups=5)
        self.d = nn.Conv2d(10, 10, 3, padding=1, groups=10)
        self.c = nn.Conv2d(10, 6, 1)
        self.lin = nn.Linear(6, 9)
        self.out = nn.Conv2d(9, 1, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.b(torch.relu(self.a(x))))
        y = self.c(self.d(self.g(y)))
        y = self.lin(y.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return self.out(y)


def export_random(
    model: nn.Module, seed: int, out: Path, shape: tuple[int, ...] = (1, 3, 11, 13)
) -> dict[str, object]:
    """`model` with random parameters (seed) exported on a random input of
    `shape` (seed + 1) into `out`, with PyTorch's output."""
    model = randomize(model.eval(), seed=seed)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed + 1))
    gpuopt.export(model, (x,), out / "m.mlir", out / "m.safetensors")
    np.save(out / "x.npy", x.numpy())
    with torch.no_grad():
        expected = model(x).numpy()
    return {"dir": out, "expected": expected}


@pytest.fixture(scope="module")
def tile_shapes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    return export_random(TileShapes(), 5, tmp_path_factory.mktemp("tiles"))


@needs_cuda_run
@pytest.mark.parametrize("tile", [1, 2, 3, 4, 8])
def test_register_tiles_emulated(tile_shapes: dict, tile: int) -> None:
    """Every register tile (--cuda-register-tile), remainders included, gives
    PyTorch's result in every block and thread order."""
    d = tile_shapes["dir"]
    artifact = compile_cuda(d / "m.mlir", d / f"m-{tile}.gpuopt", None, f"--cuda-register-tile={tile}")
    check_orders(
        artifact, d / "m.safetensors", [d / "x.npy"], tile_shapes["expected"], f"register tile {tile}"
    )


class WorkgroupTileShapes(nn.Module):
    """Convolutions and linears that workgroup tiles cover without filling
    one: 20, 70, 33, 40 and 17 output channels, 11 x 13 and 6 x 7 pixels,
    reductions of 27 (16 + 11), 180, 630, 33 and 40 steps; a strided and a
    dilated convolution, a BatchNorm, a linear over the pixels and a roll
    before a 1x1 convolution (folded into its input by --gpuopt-optimize)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(3, 20, 3, padding=1)
        self.bn = nn.BatchNorm2d(20)
        self.b = nn.Conv2d(20, 70, 3, stride=2, padding=1)
        self.c = nn.Conv2d(70, 33, 3, padding=2, dilation=2, bias=False)
        self.lin = nn.Linear(33, 40)
        self.out = nn.Conv2d(40, 17, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.a(x)))
        y = self.c(torch.relu(self.b(y)))
        y = self.lin(y.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        return self.out(torch.roll(nn.functional.gelu(y), 2, dims=3))


@pytest.fixture(scope="module")
def workgroup_tile_shapes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    return export_random(WorkgroupTileShapes(), 7, tmp_path_factory.mktemp("wgtiles"))


@needs_cuda_run
@pytest.mark.parametrize("pipeline", [None, "gpuopt-optimize"])
def test_workgroup_tiles_emulated(workgroup_tile_shapes: dict, pipeline: str | None) -> None:
    """Workgroup tiles (--cuda-workgroup-tile, the default) give PyTorch's
    result in every block and thread order, and the same bits as register
    tiles alone: each output adds its terms in the same order. Every
    convolution and the linear is tiled (workgroup attributions in 5
    kernels at least), so partial tiles and the short last reduction step
    all ran."""
    d = workgroup_tile_shapes["dir"]
    tag = pipeline or "plain"
    kernels = d / f"k-{tag}.mlir"
    tiled = compile_cuda(d / "m.mlir", d / f"m-{tag}.gpuopt", pipeline, f"--cuda-write-kernels={kernels}")
    assert kernels.read_text().count(") workgroup(") >= 5, "fewer workgroup-tiled kernels than convolutions"
    check_orders(
        tiled, d / "m.safetensors", [d / "x.npy"], workgroup_tile_shapes["expected"], f"workgroup tiles {tag}"
    )
    untiled = compile_cuda(d / "m.mlir", d / f"m-{tag}-off.gpuopt", pipeline, "--cuda-workgroup-tile=false")
    got = emulate(tiled, d / "m.safetensors", [d / "x.npy"], d, ORDERS[0])
    ref = emulate(untiled, d / "m.safetensors", [d / "x.npy"], d, ORDERS[0])
    assert np.array_equal(got.view(np.uint32), ref.view(np.uint32)), "workgroup tiles change the rounding"


def tile_widths(kernels: Path) -> set[tuple[str, str]]:
    """(BM + 4, BN) of every FP32 workgroup-tiled kernel in `kernels` (its
    two tiles' row widths; 2 or 3 buffers)."""
    return set(
        re.findall(
            r"memref<[23]x16x(\d+)xf32, #gpu.address_space<workgroup>> \{llvm.align = 16 : i64\}, "
            r"%\w+ : memref<[23]x16x(\d+)xf32",
            kernels.read_text(),
        )
    )


class WideTileShapes(nn.Module):
    """1x1 convolutions sized for the tile chooser's other shapes (at least
    132 blocks, the pipeline's): 32 -> 32 channels of a 64x132 map (8448
    pixels) in 32 x 64 tiles, 2 x 4 outputs per thread; 32 -> 64 channels of
    it in 64 x 64 tiles, 4 x 4; 64 -> 64 channels at stride (1, 2) (4224
    pixels) in 64 x 32 tiles, 4 x 2."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(32, 32, 1)
        self.c = nn.Conv2d(32, 64, 1)
        self.b = nn.Conv2d(64, 64, 1, stride=(1, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.relu(self.c(torch.relu(self.a(x)))))


@needs_cuda_run
def test_wide_tile_shapes_emulated(tmp_path: Path) -> None:
    """The 2 x 4, 4 x 4 and 4 x 2 thread tiles (rows read as one vector,
    columns as pairs, from double-buffered tiles) give PyTorch's result in
    every order and the bits of the untiled kernels."""
    data = export_random(WideTileShapes(), 17, tmp_path, (1, 32, 64, 132))
    kernels = tmp_path / "k.mlir"
    tiled = compile_cuda(
        tmp_path / "m.mlir", tmp_path / "m.gpuopt", "gpuopt-optimize", f"--cuda-write-kernels={kernels}"
    )
    shapes = tile_widths(kernels)
    # (BM + 4, BN): 32 x 64, 64 x 64, 64 x 32 (2 or 3 buffers).
    assert {("36", "64"), ("68", "64"), ("68", "32")} <= shapes, shapes
    check_orders(tiled, tmp_path / "m.safetensors", [tmp_path / "x.npy"], data["expected"], "wide tiles")
    untiled = compile_cuda(
        tmp_path / "m.mlir", tmp_path / "off.gpuopt", "gpuopt-optimize", "--cuda-workgroup-tile=false"
    )
    got = emulate(tiled, tmp_path / "m.safetensors", [tmp_path / "x.npy"], tmp_path, ORDERS[0])
    ref = emulate(untiled, tmp_path / "m.safetensors", [tmp_path / "x.npy"], tmp_path, ORDERS[0])
    assert np.array_equal(got.view(np.uint32), ref.view(np.uint32)), "workgroup tiles change the rounding"


class EightWideTileShapes(nn.Module):
    """Convolutions sized for the wide thread tiles at the pipeline's 132
    blocks (a 128x132 map, 16896 pixels): a padded 3x3 convolution 3 -> 64
    in 64 x 128 tiles (4 x 8 per thread, zero-filled copies), 32 -> 128 in
    128 x 128 (8 x 8, two steps), 64 -> 128 at stride (1, 2) (8448 pixels)
    in 128 x 64 (8 x 4, four steps, three buffers); 64 -> 32 between them in
    a narrow shape."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(3, 64, 3, padding=1)
        self.b = nn.Conv2d(64, 32, 1)
        self.c = nn.Conv2d(32, 128, 1)
        self.d = nn.Conv2d(64, 128, 1, stride=(1, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = torch.relu(self.a(x))
        return torch.cat([self.c(torch.relu(self.b(a))), self.d(a)], dim=3)


@needs_cuda_run
def test_wide_thread_tiles_emulated(tmp_path: Path) -> None:
    """The 8 x 8, 8 x 4 and 4 x 8 thread tiles (the pipeline's
    --cuda-workgroup-tile-max-thread-outputs=64; 8 rows read as one vector
    of 8) give PyTorch's result in every order and the bits of the untiled
    kernels and of the 4 x 4 tiles; their TF32 tensor-core tiles (warps of
    64 x 32 in 128 x 128) PyTorch's FP32 result within 5e-3, the same bits
    in every order."""
    data = export_random(EightWideTileShapes(), 23, tmp_path, (1, 3, 128, 132))
    weights, x = tmp_path / "m.safetensors", [tmp_path / "x.npy"]
    kernels = tmp_path / "k.mlir"
    tiled = compile_cuda(
        tmp_path / "m.mlir", tmp_path / "m.gpuopt", "gpuopt-optimize", f"--cuda-write-kernels={kernels}"
    )
    shapes = tile_widths(kernels)
    # (BM + 4, BN): 128 x 128, 128 x 64, 64 x 128.
    assert {("132", "128"), ("132", "64"), ("68", "128")} <= shapes, shapes
    check_orders(tiled, weights, x, data["expected"], "wide thread tiles")
    got = emulate(tiled, weights, x, tmp_path, ORDERS[0])
    for name, flag in (
        ("untiled", "--cuda-workgroup-tile=false"),
        ("4x4", "--cuda-workgroup-tile-max-thread-outputs=16"),
    ):
        other = compile_cuda(tmp_path / "m.mlir", tmp_path / f"{name}.gpuopt", "gpuopt-optimize", flag)
        ref = emulate(other, weights, x, tmp_path, ORDERS[0])
        assert np.array_equal(got.view(np.uint32), ref.view(np.uint32)), (
            f"wide thread tiles: other bits than {name}"
        )
    tf32_kernels = tmp_path / "k-tf32.mlir"
    tf32 = compile_cuda(
        tmp_path / "m.mlir",
        tmp_path / "tf32.gpuopt",
        "gpuopt-optimize",
        "--gpu-precision=tf32",
        f"--cuda-write-kernels={tf32_kernels}",
    )
    # The TF32 x tile of a 128-row block: rows of 128 + 8.
    assert "x16x136xf32, #gpu.address_space<workgroup>>" in tf32_kernels.read_text()
    outputs = [emulate(tf32, weights, x, tmp_path, o) for o in ORDERS]
    err = rel_l2(outputs[0], data["expected"])
    assert 1e-6 < err <= 5e-3, f"TF32 relative L2 error {err:.3e} vs PyTorch (FP32)"
    for order, y in zip(ORDERS, outputs):
        assert np.array_equal(y.view(np.uint32), outputs[0].view(np.uint32)), f"TF32, order {order} differs"
    # Each output's products are summed in k order whatever the warp tile.
    narrow = compile_cuda(
        tmp_path / "m.mlir",
        tmp_path / "tf32-4x4.gpuopt",
        "gpuopt-optimize",
        "--gpu-precision=tf32",
        "--cuda-workgroup-tile-max-thread-outputs=16",
    )
    ref = emulate(narrow, weights, x, tmp_path, ORDERS[0])
    assert np.array_equal(outputs[0].view(np.uint32), ref.view(np.uint32)), (
        "TF32 wide tiles: other bits than 4x4"
    )


class SplitKShapes(nn.Module):
    """Deep reductions on a small map, at the pipeline's 132 blocks: a 3x3
    convolution 256 -> 128 channels of 14x14 (K = 2304, 144 steps: 26
    blocks of 64 x 16, split into 8 parts of 18 steps) with a bias and a
    ReLU after it, a token linear 128 -> 1024 (8 steps: not split) and one
    1024 -> 256 (64 steps: 4 parts of 16)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(256, 128, 3, padding=1)
        self.up = nn.Linear(128, 1024)
        self.down = nn.Linear(1024, 256)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.a(x)).flatten(2).transpose(1, 2)
        return self.down(torch.relu(self.up(y)))


@needs_cuda_run
def test_split_k_emulated(tmp_path: Path) -> None:
    """Split-K (the pipeline's --cuda-workgroup-tile-split-k=8): the parts'
    partial sums through a workspace, added in order by a second kernel
    before the bias, residual and ReLU, give PyTorch's result in every order
    (FP32 within 1e-5; TF32 within 5e-3, the same bits in every order), one
    more launch per split product; with the option 1, none."""
    data = export_random(SplitKShapes(), 29, tmp_path, (1, 256, 14, 14))
    weights, x = tmp_path / "m.safetensors", [tmp_path / "x.npy"]
    kernels = tmp_path / "k.mlir"
    split = compile_cuda(
        tmp_path / "m.mlir", tmp_path / "m.gpuopt", "gpuopt-optimize", f"--cuda-write-kernels={kernels}"
    )
    tiled = re.findall(r"gpu\.func @\w+\(([^)]*)\) workgroup", kernels.read_text())
    workspaces = {w for args in tiled for w in re.findall(r"memref<(\d+)x(\d+)x(\d+)xf32>", args)}
    # [parts, M, N]: the convolution (128 channels x 196 pixels) in 8
    # parts, the 1024 -> 256 linear (256 outputs x 196 rows) in 4.
    assert {("8", "128", "196"), ("4", "256", "196")} <= workspaces, workspaces
    check_orders(split, weights, x, data["expected"], "split-K")
    # Every schedule of the parts' tiles gives the same sums: their steps
    # start at the part's k in each (one buffer, no prefetch, registers, 4
    # stages), in the orders that would expose a race.
    got = emulate(split, weights, x, tmp_path, ORDERS[0])
    for n, flags in enumerate(
        (
            ("--cuda-workgroup-tile-double-buffer=false", "--cuda-workgroup-tile-prefetch=false"),
            ("--cuda-workgroup-tile-async-copy=false",),
            ("--cuda-workgroup-tile-stages=4",),
        )
    ):
        variant = compile_cuda(tmp_path / "m.mlir", tmp_path / f"v{n}.gpuopt", "gpuopt-optimize", *flags)
        for order in ORDERS[1:]:
            y = emulate(variant, weights, x, tmp_path, order)
            assert np.array_equal(y.view(np.uint32), got.view(np.uint32)), f"split-K {flags}, order {order}"
    whole = compile_cuda(
        tmp_path / "m.mlir", tmp_path / "whole.gpuopt", "gpuopt-optimize", "--cuda-workgroup-tile-split-k=1"
    )
    launches = [
        int(
            re.search(
                r"(\d+) per forward",
                subprocess.run([CUDA_RUN, a, "--inspect"], capture_output=True, text=True, check=True).stdout,
            ).group(1)
        )
        for a in (split, whole)
    ]
    assert launches[0] == launches[1] + 2, launches
    check_orders(whole, weights, x, data["expected"], "no split-K")
    tf32 = compile_cuda(
        tmp_path / "m.mlir", tmp_path / "tf32.gpuopt", "gpuopt-optimize", "--gpu-precision=tf32"
    )
    outputs = [emulate(tf32, weights, x, tmp_path, o) for o in ORDERS]
    err = rel_l2(outputs[0], data["expected"])
    assert 1e-6 < err <= 5e-3, f"TF32 relative L2 error {err:.3e} vs PyTorch (FP32)"
    for order, y in zip(ORDERS, outputs):
        assert np.array_equal(y.view(np.uint32), outputs[0].view(np.uint32)), f"TF32, order {order} differs"


class SiblingConvs(nn.Module):
    """Rolling-UNet's OR-MLP branches in miniature: two 1x1 convolutions of
    one input (64 -> 64 channels, GELU), one of it rolled along H, each an
    output of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(64, 64, 1)
        self.b = nn.Conv2d(64, 64, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a = torch.nn.functional.gelu(self.a(torch.roll(x, 1, 2)))
        return a, torch.nn.functional.gelu(self.b(x))


@needs_cuda_run
def test_workgroup_tile_fuse_nests_emulated(tmp_path: Path) -> None:
    """--cuda-workgroup-tile-fuse-nests=false: the two sibling convolutions
    are tiled each (by default they share one untiled kernel) and, being
    independent, share one launch: the block index chooses the product, both
    products' workgroup tiles are the kernel's. PyTorch's results in every
    order (a block of one product racing the other's would show), the same
    bits as the fused kernel (each output sums its terms in the same order),
    as many launches."""
    model = randomize(SiblingConvs().eval(), seed=31)
    x = torch.randn(1, 64, 12, 10, generator=torch.Generator().manual_seed(32))
    gpuopt.export(model, (x,), tmp_path / "m.mlir", tmp_path / "m.safetensors")
    np.save(tmp_path / "x.npy", x.numpy())
    with torch.no_grad():
        expected = [y.numpy() for y in model(x)]
    results, tiles, launches = {}, {}, {}
    for fuse in ("true", "false"):
        kernels = tmp_path / f"k-{fuse}.mlir"
        artifact = compile_cuda(
            tmp_path / "m.mlir",
            tmp_path / f"m-{fuse}.gpuopt",
            "gpuopt-optimize",
            f"--cuda-workgroup-tile-fuse-nests={fuse}",
            f"--cuda-write-kernels={kernels}",
        )
        tiles[fuse] = kernels.read_text().count("#gpu.address_space<workgroup>> {llvm.align")
        launches[fuse] = re.search(
            r"(\d+) per forward",
            subprocess.run(
                [CUDA_RUN, artifact, "--inspect"], capture_output=True, text=True, check=True
            ).stdout,
        ).group(1)
        for order in ORDERS:
            ys = [tmp_path / f"y{i}-{fuse}.npy" for i in range(2)]
            y0 = emulate(
                artifact,
                tmp_path / "m.safetensors",
                [tmp_path / "x.npy"],
                tmp_path,
                order,
                f"--output=@{ys[1]}",
            )
            got = [y0, np.load(ys[1])]
            for y, ref in zip(got, expected):
                assert rel_l2(y, ref) <= REL_L2, (fuse, order)
            first = results.setdefault(fuse, got)
            assert all(np.array_equal(g.view(np.uint32), f.view(np.uint32)) for g, f in zip(got, first)), (
                fuse,
                order,
            )
    # Two tiles (x and y) per product, both in the one kernel.
    assert (tiles["true"], tiles["false"]) == (0, 4), tiles
    assert launches["true"] == launches["false"] == "1", launches
    for fused, apart in zip(results["true"], results["false"]):
        assert np.array_equal(fused.view(np.uint32), apart.view(np.uint32))


class RandomConvs(nn.Module):
    """Four convolutions (each with a ReLU) whose channels (16 to 64), kernel
    (1, 3, 5), stride, dilation, padding and bias are drawn from `seed`:
    reductions from 3 to 1600 steps, so tiles of 1 to 100 steps, short last
    steps, every buffer count the pipeline picks and padded, strided and
    dilated inputs copied with zero fill."""

    def __init__(self, seed: int, size: int) -> None:
        super().__init__()
        rng = random.Random(seed)
        layers: list[nn.Module] = []
        c, h = 3, size
        for _ in range(4):
            while True:
                k = rng.choice([1, 3, 5])
                stride = rng.choice([1, 1, 2])
                dilation = rng.choice([1, 2]) if k > 1 else 1
                pad = rng.choice([0, k // 2 * dilation])
                out = (h + 2 * pad - dilation * (k - 1) - 1) // stride + 1
                if out >= 4:
                    break
            channels = rng.choice([16, 20, 33, 48, 64])
            layers += [nn.Conv2d(c, channels, k, stride, pad, dilation, bias=rng.random() < 0.7), nn.ReLU()]
            c, h = channels, out
        self.body = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


@needs_cuda_run
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_random_convs_emulated(tmp_path: Path, seed: int) -> None:
    """Convolutions of random shapes through the default pipeline (tiles
    with cp.async copies and up to 3 buffers) give PyTorch's result in every
    order and the bits of the untiled kernels; their TF32 tensor-core tiles
    PyTorch's FP32 result within 5e-3, the same bits in every order."""
    size = random.Random(seed).choice([12, 17, 24])
    data = export_random(RandomConvs(seed, size), seed, tmp_path, (1, 3, size, size))
    kernels = tmp_path / "k.mlir"
    tiled = compile_cuda(tmp_path / "m.mlir", tmp_path / "m.gpuopt", None, f"--cuda-write-kernels={kernels}")
    assert kernels.read_text().count("nvgpu.device_async_copy") > 0, "no tile copied its operands"
    check_orders(
        tiled, tmp_path / "m.safetensors", [tmp_path / "x.npy"], data["expected"], f"random convs {seed}"
    )
    untiled = compile_cuda(tmp_path / "m.mlir", tmp_path / "off.gpuopt", None, "--cuda-workgroup-tile=false")
    got = emulate(tiled, tmp_path / "m.safetensors", [tmp_path / "x.npy"], tmp_path, ORDERS[0])
    ref = emulate(untiled, tmp_path / "m.safetensors", [tmp_path / "x.npy"], tmp_path, ORDERS[0])
    assert np.array_equal(got.view(np.uint32), ref.view(np.uint32)), "workgroup tiles change the rounding"
    # The written kernels parse back: the host image built from them runs
    # the same bits (the hand-editing route, --cuda-host-kernels).
    reread = compile_cuda(
        tmp_path / "m.mlir", tmp_path / "reread.gpuopt", None, f"--cuda-host-kernels={kernels}"
    )
    again = emulate(reread, tmp_path / "m.safetensors", [tmp_path / "x.npy"], tmp_path, ORDERS[0])
    assert np.array_equal(again.view(np.uint32), got.view(np.uint32)), "the re-read kernels differ"
    # TF32 tensor-core tiles (fragment-ordered layouts, copied and rounded
    # in place): PyTorch's FP32 result within the TF32 tolerance, the same
    # bits in every order and as operands rounded in registers.
    tf32 = compile_cuda(tmp_path / "m.mlir", tmp_path / "tf32.gpuopt", None, "--gpu-precision=tf32")
    outputs = [emulate(tf32, tmp_path / "m.safetensors", [tmp_path / "x.npy"], tmp_path, o) for o in ORDERS]
    err = rel_l2(outputs[0], data["expected"])
    assert err <= 5e-3, f"TF32 relative L2 error {err:.3e} vs PyTorch (FP32)"
    for order, y in zip(ORDERS, outputs):
        assert np.array_equal(y.view(np.uint32), outputs[0].view(np.uint32)), f"TF32, order {order} differs"
    staged = compile_cuda(
        tmp_path / "m.mlir",
        tmp_path / "tf32-regs.gpuopt",
        None,
        "--gpu-precision=tf32",
        "--cuda-workgroup-tile-async-copy=false",
    )
    ref = emulate(staged, tmp_path / "m.safetensors", [tmp_path / "x.npy"], tmp_path, ORDERS[0])
    assert np.array_equal(outputs[0].view(np.uint32), ref.view(np.uint32)), "TF32 copies round otherwise"


@needs_cuda_run
@pytest.mark.parametrize(
    "flags",
    [
        ("--cuda-workgroup-tile-double-buffer=false",),
        ("--cuda-workgroup-tile-prefetch=false",),
        ("--cuda-workgroup-tile-prefetch=false", "--cuda-workgroup-tile-double-buffer=false"),
        ("--gpu-precision=tf32", "--cuda-workgroup-tile-double-buffer=false"),
        ("--gpu-precision=tf32", "--cuda-workgroup-tile-prefetch=false"),
        ("--cuda-workgroup-tile-async-copy=false",),
        ("--cuda-workgroup-tile-async-copy=false", "--cuda-workgroup-tile-prefetch=false"),
        ("--cuda-workgroup-tile-stages=2",),
        ("--cuda-workgroup-tile-stages=4",),
        ("--gpu-precision=tf32", "--cuda-workgroup-tile-async-copy=false"),
        ("--gpu-precision=tf32", "--cuda-workgroup-tile-stages=4"),
        (
            "--gpu-precision=tf32",
            "--cuda-workgroup-tile-double-buffer=false",
            "--cuda-workgroup-tile-prefetch=false",
        ),
    ],
    ids=[
        "one-buffer",
        "no-prefetch",
        "neither",
        "tf32-one-buffer",
        "tf32-no-prefetch",
        "no-async",
        "no-async-no-prefetch",
        "2-stages",
        "4-stages",
        "tf32-no-async",
        "tf32-4-stages",
        "tf32-neither",
    ],
)
def test_workgroup_tile_schedules_emulated(workgroup_tile_shapes: dict, flags: tuple[str, ...]) -> None:
    """The schedules of the workgroup tiles (two buffers or one, operands
    loaded a step ahead or at the step, plain reads copied asynchronously
    (cp.async) or through registers, 2, 3 or 4 buffers where every operand
    is copied) change when the operands are loaded
    and which buffer holds them, never a sum: in every block and thread
    order each gives the default schedule's bits (two buffers, prefetch,
    async copies; FP32 or TF32). A step stored into the buffer another
    thread still multiplies from, or read before its barrier or its copies'
    wait, differs in some order."""
    d = workgroup_tile_shapes["dir"]
    tf32 = tuple(f for f in flags if f.startswith("--gpu-precision"))
    tag = "-".join(f.split("-")[-1].replace("=", "") for f in flags)
    default = compile_cuda(
        d / "m.mlir", d / f"m-sched-default{'-tf32' if tf32 else ''}.gpuopt", "gpuopt-optimize", *tf32
    )
    variant = compile_cuda(d / "m.mlir", d / f"m-sched-{tag}.gpuopt", "gpuopt-optimize", *flags)
    ref = emulate(default, d / "m.safetensors", [d / "x.npy"], d, ORDERS[0])
    for order in ORDERS:
        for name, artifact in (("default", default), (" ".join(flags), variant)):
            got = emulate(artifact, d / "m.safetensors", [d / "x.npy"], d, order)
            assert np.array_equal(got.view(np.uint32), ref.view(np.uint32)), (
                f"{name}, order {order}: other bits"
            )


@needs_cuda_run
def test_workgroup_tiles_tf32_emulated(workgroup_tile_shapes: dict) -> None:
    """--gpu-precision=tf32: the workgroup tiles are computed with TF32
    tensor cores (nvgpu.mma.sync m16n8k8, exact in the emulator), partial
    tiles and the short last reduction step included: PyTorch's FP32 result
    within the TF32 tolerance (relative L2 5e-3), the same bits in every
    block and thread order, and a result that is not FP32's."""
    d = workgroup_tile_shapes["dir"]
    kernels = d / "k-tf32.mlir"
    tf32 = compile_cuda(
        d / "m.mlir",
        d / "m-tf32.gpuopt",
        "gpuopt-optimize",
        "--gpu-precision=tf32",
        f"--cuda-write-kernels={kernels}",
    )
    assert kernels.read_text().count("nvgpu.mma.sync") >= 5, "fewer tensor-core kernels than convolutions"
    outputs = {order: emulate(tf32, d / "m.safetensors", [d / "x.npy"], d, order) for order in ORDERS}
    first = outputs[ORDERS[0]]
    err = rel_l2(first, workgroup_tile_shapes["expected"])
    assert 1e-6 < err <= 5e-3, f"TF32 relative L2 error {err:.3e} vs PyTorch (FP32)"
    for order, got in outputs.items():
        assert np.array_equal(got.view(np.uint32), first.view(np.uint32)), f"order {order} differs bitwise"


class Relu(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


@needs_cuda_run
def test_out_of_bounds_is_reported(tmp_path: Path) -> None:
    """The bound-guard off-by-one (utils/mutations/bound-guard-off-by-one.patch)
    at the IR level: a ReLU of 300 elements is one launch of 2 blocks of 256
    threads whose kernel guards `gid < 300`; in a copy of the kernels
    (--cuda-write-kernels) the guard becomes `gid <= 300` and the host image
    is built from it (--cuda-host-kernels), so thread 44 of block 1 loads
    element 300 of the input and stores element 300 of the output. The
    emulator skips both, and fails the launch naming the step, the thread,
    the argument and the element (exit 1; through the API, the same error)."""
    x = torch.randn(300, generator=torch.Generator().manual_seed(2))
    gpuopt.export(Relu().eval(), (x,), tmp_path / "m.mlir", tmp_path / "m.safetensors")
    np.save(tmp_path / "x.npy", x.numpy())
    kernels = tmp_path / "kernels.mlir"
    base = [COMPILE, tmp_path / "m.mlir", "--target=cuda", "--cuda-format=ptx", "--cuda-host-image"]

    def compile_with(out: Path, *extra: object) -> Path:
        proc = subprocess.run([*base, *extra, "-o", out], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        return out

    good = compile_with(tmp_path / "good.gpuopt", f"--cuda-write-kernels={kernels}")
    text = kernels.read_text()
    edited, n = re.subn(r"arith\.cmpi ult, (%\w+), (%c300) : index", r"arith.cmpi ule, \1, \2 : index", text)
    assert n == 1, f"expected one `gid < 300` guard in the kernels, found {n}:\n{text}"
    (tmp_path / "edited.mlir").write_text(edited)
    # The unedited kernels through --cuda-host-kernels emulate correctly.
    same = compile_with(tmp_path / "same.gpuopt", f"--cuda-host-kernels={kernels}")
    for artifact in (good, same):
        y = emulate(artifact, tmp_path / "m.safetensors", [tmp_path / "x.npy"], tmp_path, "forward")
        assert np.array_equal(y, torch.relu(x).numpy())
    bad = compile_with(tmp_path / "bad.gpuopt", f"--cuda-host-kernels={tmp_path / 'edited.mlir'}")

    prog = program(to_json(bad))
    assert len(prog["run"]) == 1, prog["run"]
    step = prog["run"][0]
    assert (step["grid"]["x"], step["block"]["x"]) == (2, 256)
    kernel = prog["kernels"][step["kernel"]]["name"]
    kinds = [prog["buffers"][a]["kind"] for a in step["args"]]
    arg = kinds.index("Input")
    buffer = step["args"][arg]
    tail = (
        f": thread (44,0,0) of block (1,0,0) loads out of bounds of argument {arg}, buffers[{buffer}] (input 0): "
        "element 300 of 300 (index [300] of shape [300]); 2 out-of-bounds accesses in the launch"
    )
    for order in ("forward", "reversed"):
        proc = subprocess.run(
            [
                CUDA_RUN,
                bad,
                f"--emulate={order}",
                f"--weights={tmp_path / 'm.safetensors'}",
                f"--input=@{tmp_path / 'x.npy'}",
                f"--output=@{tmp_path / 'y.npy'}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 1, proc.stderr
        line = proc.stderr.splitlines()[-1]
        assert line.startswith(f"gpuopt-cuda-run: error: run[0] (kernel '{kernel}'"), line
        assert line.endswith(tail), line
    with (
        CompiledModel(bad, tmp_path / "m.safetensors", device="emulate") as compiled,
        pytest.raises(gpuopt.compiled.CompiledModelError) as e,
    ):
        compiled.run(x.numpy())
    assert str(e.value).startswith(f"run[0] (kernel '{kernel}'"), str(e.value)
    assert str(e.value).endswith(tail), str(e.value)


def test_host_kernels_errors(tmp_path: Path) -> None:
    """--cuda-host-kernels takes a gpu.module @kernels with the compiled
    kernels' names and signatures (the plan launches them with those
    arguments); anything else is a located compile error, exit 1."""
    x = torch.randn(300, generator=torch.Generator().manual_seed(2))
    gpuopt.export(Relu().eval(), (x,), tmp_path / "m.mlir", tmp_path / "m.safetensors")
    kernels = tmp_path / "kernels.mlir"
    base = [COMPILE, tmp_path / "m.mlir", "--target=cuda", "--cuda-format=ptx", "-o", tmp_path / "a.gpuopt"]

    def compile_with(*extra: object) -> subprocess.CompletedProcess:
        return subprocess.run([*base, *extra], capture_output=True, text=True, check=False)

    proc = compile_with(f"--cuda-write-kernels={kernels}")
    assert proc.returncode == 0, proc.stderr
    name = re.search(
        r"gpu\.func @(\w+)\(%arg0: memref<300xf32>, %arg1: memref<300xf32>\) kernel", kernels.read_text()
    )
    assert name, kernels.read_text()
    proc = compile_with("--cuda-host-image=false", f"--cuda-host-kernels={kernels}")
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "gpuopt-compile: error: --cuda-write-kernels and --cuda-host-kernels need --cuda-host-image"
    )
    empty = tmp_path / "empty.mlir"
    empty.write_text("module {}\n")
    proc = compile_with(f"--cuda-host-kernels={empty}")
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1].endswith(f": error: {empty} holds no gpu.module @kernels"), (
        proc.stderr
    )
    other = tmp_path / "other.mlir"
    other.write_text("gpu.module @kernels {\n  gpu.func @other() kernel {\n    gpu.return\n  }\n}\n")
    proc = compile_with(f"--cuda-host-kernels={other}")
    assert proc.returncode == 1
    assert (
        f"{other}:1:1: error: 'gpu.module' op has no kernel @{name[1]}, which the plan launches"
        in proc.stderr
    ), proc.stderr
    wrong = tmp_path / "wrong.mlir"
    wrong.write_text(
        f"gpu.module @kernels {{\n  gpu.func @{name[1]}(%a: memref<300xf32>) kernel {{\n    gpu.return\n  }}\n}}\n"
    )
    proc = compile_with(f"--cuda-host-kernels={wrong}")
    assert proc.returncode == 1
    assert (
        f"{wrong}:2:3: error: 'gpu.func' op has type '(memref<300xf32>) -> ()', but the plan launches "
        f"@{name[1]} as '(memref<300xf32>, memref<300xf32>) -> ()'" in proc.stderr
    ), proc.stderr


def emulate_conv_bn_relu(artifact: Path, d: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """gpuopt-cuda-run --emulate of a conv_bn_relu artifact on its inputs."""
    return subprocess.run(
        [
            CUDA_RUN,
            artifact,
            "--emulate",
            f"--weights={d / 'm.safetensors'}",
            f"--input=@{d / 'x.npy'}",
            f"--input=@{d / 'r.npy'}",
        ],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


def _damage_elf(data: bytearray, how: str) -> None:
    """Damages the ELF64 shared object `data` in place: its second loadable
    segment's file offset past the end, its program headers zeroed, its
    machine (to one no host has), or its second loadable segment's offset
    off its alignment."""
    phoff, phentsize, phnum = (
        int.from_bytes(data[32:40], "little"),
        int.from_bytes(data[54:56], "little"),
        int.from_bytes(data[56:58], "little"),
    )
    headers = [phoff + i * phentsize for i in range(phnum)]
    loads = [h for h in headers if int.from_bytes(data[h : h + 4], "little") == 1]
    if how == "segment-past-end":
        data[loads[1] + 8 : loads[1] + 16] = (1 << 20).to_bytes(8, "little")
    elif how == "zeroed-program-headers":
        data[phoff : phoff + phnum * phentsize] = bytes(phnum * phentsize)
    elif how == "machine":
        data[18:20] = (0xBEEF).to_bytes(2, "little")
    else:
        offset = int.from_bytes(data[loads[1] + 8 : loads[1] + 16], "little")
        data[loads[1] + 8 : loads[1] + 16] = (offset + 8).to_bytes(8, "little")


@needs_cuda_run
@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("segment-past-end", "truncated or corrupt: loadable segment"),
        ("zeroed-program-headers", "corrupt program headers: no loadable or no dynamic segment"),
        ("machine", "built for ELF machine 48879"),
        ("misaligned", "do not fit alignment"),
    ],
)
def test_damaged_host_image_is_refused(conv_bn_relu: dict, tmp_path: Path, how: str, message: str) -> None:
    """A host image whose ELF headers dlopen would trip over (SIGBUS on a
    segment mapped past the end of the file, SIGSEGV on zeroed program
    headers) is refused with a message before it is loaded, and its
    temporary file goes."""
    d: Path = conv_bn_relu["dir"]
    artifact = compile_cuda(d / "m.mlir", tmp_path / "a.gpuopt")

    def damage(model: dict) -> None:
        host = next(i for i in program(model)["images"] if i["format"] == "HostSo")
        data = bytearray(host["data"])
        _damage_elf(data, how)
        host["data"] = list(data)

    bad = rewrite(artifact, tmp_path / f"{how}.gpuopt", damage)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = emulate_conv_bn_relu(bad, d, {**os.environ, "TMPDIR": str(tmp)})
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.startswith(f"gpuopt-cuda-run: error: {bad}: its host image is damaged: "), last
    assert message in last, last
    assert list(tmp.iterdir()) == []


@needs_cuda_run
@pytest.mark.parametrize("version", [None, 2, 3, 4], ids=["unchecked", "v2", "v3", "v4"])
def test_old_host_image_is_refused(conv_bn_relu: dict, tmp_path: Path, version: int | None) -> None:
    """A host image without gpuopt_host_abi_version (not built with the
    bounds checks, whose kernels take the violation record), of version 2
    (before barriers, shuffles and workgroup memory: no workgroup pointer
    after the record, no hooks), 3 (before the mma hook) or 4 (before the
    asynchronous copy hooks), each with a shorter gpuopt_host_hooks, is
    refused before anything runs."""
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    d: Path = conv_bn_relu["dir"]
    artifact = compile_cuda(d / "m.mlir", tmp_path / "a.gpuopt")
    src = tmp_path / "old.c"
    text = "void gpuopt_host_unused(void) {}\n"
    if version is not None:
        text += f"const int gpuopt_host_abi_version = {version};\n"
    src.write_text(text)
    so = tmp_path / "old.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", so, src], check=True)

    def old_image(model: dict) -> None:
        host = next(i for i in program(model)["images"] if i["format"] == "HostSo")
        host["data"] = list(so.read_bytes())

    bad = rewrite(artifact, tmp_path / "old.gpuopt", old_image)
    proc = emulate_conv_bn_relu(bad, d)
    assert proc.returncode == 1
    has = "no gpuopt_host_abi_version" if version is None else f"ABI version {version}"
    assert proc.stderr.splitlines()[-1] == (
        f"gpuopt-cuda-run: error: {bad}: its host image has {has}; this emulator runs "
        "version 5 (bounds-checked kernels with barriers, shuffles, TF32 mma, asynchronous copies and workgroup "
        "memory): recompile "
        "it with "
        "this gpuopt"
    )
