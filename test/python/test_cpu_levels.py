"""Portable CPU libraries: gpuopt-compile --cpu=LEVEL and gpuopt-run --cpu=LEVEL.

A small conv/BatchNorm/GELU/residual model with random weights and BatchNorm
statistics is compiled for each level (x86-64-v2, x86-64-v3, x86-64-v4,
native) and run through gpuopt.compiled and the JIT of gpuopt-run; each equals
PyTorch eager (relative L2 error <= 1e-4) on two random inputs. A level this
machine cannot run is skipped with the reason. A library whose extensions the
CPU lacks is refused with a message naming the level it was built with and
the levels to rebuild with: the machine's missing extensions are simulated
with the test-only GPUOPT_TEST_HIDE_CPU_FEATURES, which the runtime honours
when it checks a library (it can only hide extensions, never add one).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import rel_l2
from test_artifacts import dump
from torch import nn

import gpuopt
from gpuopt.compiled import CompiledModel, CompiledModelError, compile_model
from gpuopt.randomize import randomize
from gpuopt.tools import ToolError, tool

REL_L2 = 1e-4
LEVELS = ["x86-64-v2", "x86-64-v3", "x86-64-v4", "native"]
HIDE = "GPUOPT_TEST_HIDE_CPU_FEATURES"


def cpu_flags() -> set[str]:
    """This CPU's flags as the kernel reports them (empty off Linux)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    match = re.search(r"^flags\s*:(.*)$", text, re.MULTILINE)
    return set(match.group(1).split()) if match else set()


# An independent oracle for which levels can run here: one flag that only CPUs
# of the level have (Linux's names, not the runtime's table).
LEVEL_FLAG = {"x86-64-v2": "sse4_2", "x86-64-v3": "avx2", "x86-64-v4": "avx512f", "native": None}


def skip_unless_runnable(level: str) -> None:
    flag = LEVEL_FLAG[level]
    if flag is not None and flag not in cpu_flags():
        pytest.skip(f"this CPU has no {flag}: it cannot run --cpu={level} code")


class Small(nn.Module):
    """A conv (runtime GEMM kernel), folded BatchNorm, GELU and a residual
    add (LLVM-vectorised loops at the level's width)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.proj = nn.Conv2d(16, 16, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.gelu(self.bn(self.conv(x)))
        return self.proj(y) + y


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("levels")
    model = randomize(Small().eval(), seed=21)
    gen = torch.Generator().manual_seed(22)
    xs = [torch.randn(1, 3, 16, 16, generator=gen) for _ in range(2)]
    gpuopt.export(model, (xs[0],), out / "m.mlir", out / "m.safetensors")
    for i, x in enumerate(xs):
        np.save(out / f"x{i}.npy", x.numpy())
    with torch.no_grad():
        expected = [model(x).numpy() for x in xs]
    return {
        "dir": out,
        "mlir": out / "m.mlir",
        "weights": out / "m.safetensors",
        "xs": xs,
        "expected": expected,
    }


def recorded(so: Path) -> dict:
    """The library's CpuProgram ("cpu", "cpu_features", ...), from its
    metadata as `gpuopt-run --dump` prints it."""
    return dump(so)["program"]


def gpuopt_run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(tool("gpuopt-run")), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )


def build(small: dict, level: str) -> Path:
    return compile_model(
        small["mlir"],
        small["dir"] / f"{level}.so",
        pipeline="gpuopt-optimize",
        cpu=None if level == "native" else level,
    )


@pytest.mark.parametrize("level", LEVELS)
def test_level_library_and_jit_match_pytorch(small: dict, level: str) -> None:
    so = build(small, level)
    md = recorded(so)
    if level == "native":
        assert md["cpu"] not in LEVELS, md["cpu"]
    else:
        assert md["cpu"] == level
        # Each level records a superset of the one below and nothing above.
        below = {"x86-64-v2": [], "x86-64-v3": ["x86-64-v2"], "x86-64-v4": ["x86-64-v2", "x86-64-v3"]}[level]
        for lower in below:
            assert set(recorded(build(small, lower))["cpu_features"]) < set(md["cpu_features"])
        assert ("avx2" in md["cpu_features"]) == (level != "x86-64-v2")
        assert any(f.startswith("avx512") for f in md["cpu_features"]) == (level == "x86-64-v4")
    skip_unless_runnable(level)
    with CompiledModel(so, small["weights"]) as m:
        for x, want in zip(small["xs"], small["expected"], strict=True):
            (got,) = m.run(x.numpy())
            err = rel_l2(got, want)
            assert err <= REL_L2, f"--cpu={level} library: relative L2 error {err:.3e}"
    d = small["dir"]
    proc = gpuopt_run(
        str(small["mlir"]),
        f"--weights={small['weights']}",
        f"--input=@{d / 'x1.npy'}",
        f"--output=@{d / f'y-{level}.npy'}",
        "--backend=cpu",
        f"--cpu={level}",
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    err = rel_l2(np.load(d / f"y-{level}.npy"), small["expected"][1])
    assert err <= REL_L2, f"gpuopt-run --backend=cpu --cpu={level}: relative L2 error {err:.3e}"


# (level built, extensions hidden, what the message says: built with, lacks, remedy)
REFUSALS = [
    (
        "x86-64-v4",
        "avx512f",
        r"--cpu=x86-64-v4",
        r"avx512f(, avx512\w+)*",
        r"--cpu=x86-64-v3 or --cpu=native",
    ),
    ("x86-64-v3", "avx2,fma", r"--cpu=x86-64-v3", r"avx2, fma", r"--cpu=x86-64-v2 or --cpu=native"),
    ("native", "sse4.2", r"--cpu=native \(on a [\w-]+\)", r"sse4.2", r"--cpu=x86-64 or --cpu=native"),
]


@pytest.mark.parametrize(
    ("level", "hidden", "built", "lacks", "remedy"), REFUSALS, ids=[r[0] for r in REFUSALS]
)
def test_library_for_a_cpu_this_one_is_not_is_refused(
    small: dict, monkeypatch: pytest.MonkeyPatch, level: str, hidden: str, built: str, lacks: str, remedy: str
) -> None:
    skip_unless_runnable("x86-64-v3")  # the remedies assume an AVX2 machine under the hidden set
    so = build(small, level)
    needs = re.escape(", ".join(recorded(so)["cpu_features"]))
    message = f"this library was built with {built} and needs {needs}; this CPU lacks {lacks}: rebuild with {remedy}"
    monkeypatch.setenv(HIDE, hidden)
    with pytest.raises(CompiledModelError, match=f"^{message}$"):
        CompiledModel(so, small["weights"])
    d = small["dir"]
    proc = gpuopt_run(
        str(so), f"--weights={small['weights']}", f"--input=@{d / 'x0.npy'}", env={HIDE: hidden}
    )
    assert proc.returncode == 1, proc.stderr
    assert re.search(message, proc.stderr), proc.stderr
    # Unknown names hide nothing: the library loads.
    monkeypatch.setenv(HIDE, "no-such-feature,")
    if LEVEL_FLAG[level] is None or LEVEL_FLAG[level] in cpu_flags():
        with CompiledModel(so, small["weights"]) as m:
            assert m.output_shapes == [small["expected"][0].shape]


def test_jit_refuses_a_level_this_cpu_lacks(small: dict) -> None:
    skip_unless_runnable("x86-64-v3")
    d = small["dir"]
    proc = gpuopt_run(
        str(small["mlir"]),
        f"--weights={small['weights']}",
        f"--input=@{d / 'x0.npy'}",
        "--backend=cpu",
        "--cpu=x86-64-v3",
        env={HIDE: "avx2"},
    )
    assert proc.returncode == 1, proc.stderr
    assert re.search(
        r"m\.mlir:\d+:\d+: error: --cpu=x86-64-v3 needs cx16, .*, xsave; this CPU lacks avx2: "
        r"use --cpu=x86-64-v2 or --cpu=native",
        proc.stderr,
    ), proc.stderr


def test_unknown_level(small: dict, tmp_path: Path) -> None:
    levels = "levels: native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4"
    with pytest.raises(ToolError, match=f"unknown --cpu level 'haswell' \\({levels}\\)"):
        compile_model(small["mlir"], tmp_path / "m.so", cpu="haswell")
    assert not (tmp_path / "m.so").exists()
    d = small["dir"]
    common = (str(small["mlir"]), f"--weights={small['weights']}", f"--input=@{d / 'x0.npy'}")
    proc = gpuopt_run(*common, "--backend=cpu", "--cpu=x86-64-v9")
    assert proc.returncode == 1
    assert f"gpuopt-run: error: unknown --cpu level 'x86-64-v9' ({levels})" in proc.stderr
    proc = gpuopt_run(*common, "--cpu=x86-64-v3")
    assert proc.returncode == 1
    assert "gpuopt-run: error: --cpu applies to --backend=cpu" in proc.stderr
    proc = gpuopt_run(str(build(small, "x86-64-v2")), "--cpu=x86-64-v3", f"--weights={small['weights']}")
    assert proc.returncode == 1
    assert "is a compiled model library; --cpu applies to gpuopt-compile" in proc.stderr
