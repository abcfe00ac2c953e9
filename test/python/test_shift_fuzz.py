"""Differential testing of the roll passes on random shift graphs.

1000 generated cases (see shift_graphs.py), packed 100 to a function, run on
the reference backend before and after each pipeline. Shifts move data
exactly, so every result must agree to fp32 rounding: |a - e| <= 1e-5 +
1e-5 |e| (a linear turned into a 1x1 convolution may sum in another order).
The pipelines must also leave no seg.roll behind, and must fold a good share
of the shifts (a pass that never fires would pass the numeric check).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import shift_graphs

from gpuopt.tools import tool

SEED = 20261130
BATCHES = 10
PER_BATCH = 100
PIPELINES = ["--fuse-roll", "--collapse-rolls", "--gpuopt-optimize", "--roll-to-deform-conv"]


def run_module(mlir: Path, inputs: list[Path], n_out: int, out_dir: Path) -> list[np.ndarray]:
    outs = [out_dir / f"{mlir.stem}_out{i}.npy" for i in range(n_out)]
    proc = subprocess.run(
        [
            str(tool("gpuopt-run")),
            str(mlir),
            "--quiet",
            *[f"--input=@{p}" for p in inputs],
            *[f"--output=@{p}" for p in outs],
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [np.load(p) for p in outs]


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_shift_graphs(batch: int, tmp_path: Path) -> None:
    cases, first = [], 0
    for i in range(PER_BATCH):
        case = shift_graphs.generate(SEED, batch * PER_BATCH + i, first)
        first += len(case.args)
        cases.append(case)
    original = tmp_path / "original.mlir"
    original.write_text(shift_graphs.module(cases))

    rng = np.random.default_rng(SEED + batch)
    shapes = [s for c in cases for s in c.args]
    inputs = []
    for i, s in enumerate(shapes):
        p = tmp_path / f"in{i}.npy"
        np.save(p, rng.standard_normal(s).astype(np.float32))
        inputs.append(p)
    expected = run_module(original, inputs, len(cases), tmp_path)

    for pipeline in PIPELINES:
        optimized = tmp_path / f"opt{PIPELINES.index(pipeline)}.mlir"
        proc = subprocess.run(
            [str(tool("gpuopt-opt")), str(original), pipeline, "-o", str(optimized)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        text = optimized.read_text()
        assert "seg.roll" not in text, f"{pipeline} left a seg.roll"
        if pipeline == "--fuse-roll":
            fused = len(re.findall(r"seg\.fused_conv2d .* offsets_h = \[\d", text)) + len(
                re.findall(r"seg\.fused_conv2d .* offsets_w = \[-?\d", text)
            )
            assert fused >= PER_BATCH // 5, f"only {fused} shifts fused in {PER_BATCH} cases"
        actual = run_module(optimized, inputs, len(cases), tmp_path)
        for case, a, e in zip(cases, actual, expected):
            assert a.shape == e.shape, case.name
            np.testing.assert_allclose(
                a, e, rtol=1e-5, atol=1e-5, err_msg=f"{pipeline}: case {case.name} differs"
            )
