"""The compile-time benchmark's op mix (benchmarks/compile_time/opmix.py).

Its 1,000-op graph must stay 1,000 ops through the canonicalization and CSE
of the lowering pipeline (else the benchmark measures a smaller graph), and
compile for the CPU into a library that equals PyTorch. It is the small end
of the graphs whose compile time docs/benchmarks/compile-time.md reports;
no test here times anything.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import torch
from conftest import rel_l2

import gpuopt
from gpuopt.compiled import CompiledModel, compile_model
from gpuopt.export import load_spec
from gpuopt.randomize import randomize
from gpuopt.tools import REPO_ROOT, tool

OPMIX = REPO_ROOT / "benchmarks" / "compile_time" / "opmix.py"
REL_L2 = 1e-5


def seg_ops(text: str) -> int:
    return len(re.findall(r"= seg\.", text))


def test_opmix_1000_ops_survive_cse_and_equal_pytorch(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = randomize(load_spec(f"{OPMIX}:OpMix", {"ops": 1000}).eval(), seed=2)
    x = torch.randn(1, 8, 8, 8, generator=torch.Generator().manual_seed(1))
    graph = tmp_path / "m.mlir"
    gpuopt.export(model, (x,), graph, tmp_path / "m.safetensors")
    exported = seg_ops(graph.read_text())
    assert 950 <= exported <= 1000, exported

    folded = subprocess.run(
        [str(tool("gpuopt-opt")), str(graph), "--canonicalize", "--cse"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert seg_ops(folded) == exported

    with torch.no_grad():
        expected = model(x).numpy()
    so = compile_model(graph, tmp_path / "m.so")
    with CompiledModel(so, tmp_path / "m.safetensors") as compiled:
        (actual,) = compiled.run(x.numpy())
    assert np.isfinite(actual).all()
    err = rel_l2(actual, expected)
    assert err <= REL_L2, f"relative L2 error {err:.3e}"
