"""The CPU kernels' instruction-set paths: GPUOPT_CPU_ISA=avx512|avx2|generic.

A zoo model (Rolling-UNet-S after --gpuopt-optimize, 32x32 input: shifted,
grouped, 1x1 and transposed convolutions, linear layers, upsampling) is
compiled once and run on every path this CPU supports (read from
/proc/cpuinfo, independently of the runtime's own check) against PyTorch
eager (relative L2 <= 1e-4); a path the CPU lacks must be refused with the
missing feature named. A forced path the CPU cannot run
(GPUOPT_CPU_ISA_PRETEND_LACKS, test-only, simulates a CPU without it) or an
unknown value is a CompiledModelError in Python and exit status 1 with the
message in gpuopt-run, for compiled libraries and the JIT — never SIGILL.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import rel_l2

import gpuopt
from gpuopt import models
from gpuopt.compiled import CompiledModel, CompiledModelError, compile_model
from gpuopt.randomize import randomize
from gpuopt.tools import tool

REL_L2 = 1e-4
#: The CPU features each path's code is compiled for (CpuKernels.cpp, CpuKernelsDispatch.cpp).
NEEDS = {"avx512": ["avx512f", "avx512vl", "avx2", "fma"], "avx2": ["avx2", "fma"], "generic": []}


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def lacking(isa: str) -> str | None:
    """The first feature of NEEDS[isa] this CPU lacks."""
    flags = cpu_flags()
    return next((f for f in NEEDS[isa] if f not in flags), None)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("isa")
    model = randomize(models.build("rolling_unet_s").eval(), seed=21)
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(22))
    gpuopt.export(model, (x,), out / "m.mlir", out / "m.safetensors")
    np.save(out / "x.npy", x.numpy())
    with torch.no_grad():
        expected = model(x).numpy()
    so = compile_model(out / "m.mlir", out / "m.so", pipeline="gpuopt-optimize")
    return {"dir": out, "so": so, "weights": out / "m.safetensors", "x": x.numpy(), "expected": expected}


def gpuopt_run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(tool("gpuopt-run")), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **env},
    )


@pytest.mark.parametrize("isa", list(NEEDS))
def test_zoo_model_on_every_path(isa: str, compiled: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each CompiledModel loads a private copy of the library: its kernels
    # choose their path afresh, from the environment of this moment.
    monkeypatch.setenv("GPUOPT_CPU_ISA", isa)
    monkeypatch.delenv("GPUOPT_CPU_ISA_PRETEND_LACKS", raising=False)
    if missing := lacking(isa):
        with pytest.raises(CompiledModelError, match=f"GPUOPT_CPU_ISA={isa} but this CPU lacks {missing}"):
            CompiledModel(compiled["so"], compiled["weights"])
        pytest.skip(f"skipped {isa}: CPU lacks {missing} (refusal checked)")
    with CompiledModel(compiled["so"], compiled["weights"]) as m:
        assert m.cpu_isa == isa
        (y,) = m.run(compiled["x"])
    err = rel_l2(y, compiled["expected"])
    assert err <= REL_L2, f"rolling_unet_s on the {isa} kernels: relative L2 error {err:.3e}"
    d = compiled["dir"]
    proc = gpuopt_run(
        [
            str(compiled["so"]),
            f"--weights={compiled['weights']}",
            f"--input=@{d / 'x.npy'}",
            f"--output=@{d / 'y.npy'}",
        ],
        {"GPUOPT_CPU_ISA": isa},
    )
    assert proc.returncode == 0, proc.stderr
    assert f"({isa} kernels)" in proc.stdout, proc.stdout
    assert rel_l2(np.load(d / "y.npy"), compiled["expected"]) <= REL_L2


def test_default_is_the_best_path(compiled: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUOPT_CPU_ISA", raising=False)
    monkeypatch.delenv("GPUOPT_CPU_ISA_PRETEND_LACKS", raising=False)
    best = next(isa for isa in NEEDS if not lacking(isa))
    with CompiledModel(compiled["so"], compiled["weights"]) as m:
        assert m.cpu_isa == best


REFUSALS = [
    (
        {"GPUOPT_CPU_ISA": "avx512", "GPUOPT_CPU_ISA_PRETEND_LACKS": "avx512f"},
        "GPUOPT_CPU_ISA=avx512 but this CPU lacks avx512f; it supports: ",
    ),
    (
        {"GPUOPT_CPU_ISA": "avx2", "GPUOPT_CPU_ISA_PRETEND_LACKS": "avx512f,avx2"},
        "GPUOPT_CPU_ISA=avx2 but this CPU lacks avx2; it supports: generic",
    ),
    ({"GPUOPT_CPU_ISA": "AVX2"}, "GPUOPT_CPU_ISA='AVX2' is not a kernel path (avx512, avx2 or generic)"),
]


@pytest.mark.parametrize(("env", "message"), REFUSALS, ids=["lacks-avx512", "lacks-avx2", "unknown"])
def test_refused_path(
    env: dict[str, str], message: str, compiled: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("GPUOPT_CPU_ISA", "GPUOPT_CPU_ISA_PRETEND_LACKS"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(CompiledModelError) as info:
        CompiledModel(compiled["so"], compiled["weights"])
    assert message in str(info.value)
    d = compiled["dir"]
    # The compiled library through gpuopt-run, and the JIT.
    for args in (
        [str(compiled["so"]), f"--weights={compiled['weights']}", f"--input=@{d / 'x.npy'}"],
        [str(d / "m.mlir"), "--backend=cpu", f"--weights={compiled['weights']}", f"--input=@{d / 'x.npy'}"],
    ):
        proc = gpuopt_run(args, env)
        assert proc.returncode == 1, (args, proc.returncode, proc.stderr)
        assert message in proc.stderr, proc.stderr
        assert len(proc.stderr) < 1000, "a located one-line message, not a dump of the module"
