"""Random shift graphs through the emulated CUDA path.

The first 200 cases of test_shift_fuzz (shift_graphs.py, the same seed and
inputs) and the first 100 of its TSM stream (shifts along the frames folded
into the convolutions' frame_shift), packed 100 to a module, compiled with ``gpuopt-compile
--target=cuda --cuda-host-image`` as generated, after ``--gpuopt-optimize``
and after ``--gpuopt-optimize`` with deform-conv=true, and run by
``gpuopt-cuda-run --emulate`` in forward, reversed and shuffled order. Every
case's result must equal the reference backend's on the generated graph
within test_shift_fuzz's bound (|a - e| <= 1e-5 + 1e-5 |e|: shifts move data
exactly, only a linear turned into a convolution may sum in another order),
and the three orders must agree bitwise: zero mismatches. A compile costs
3-7 s per module of 100 cases on 2 cores (the emulation itself ~0.01 s), so
batching the cases keeps the file at 1.5 to 3 min (30 to 60 s per batch, by load).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
import shift_graphs
from safetensors.numpy import save_file
from test_cuda_emulate import ORDERS, PIPELINES, compile_cuda, needs_cuda_run
from test_shift_fuzz import PER_BATCH, SEED, generate, run_module

from gpuopt.tools import build_dir

CUDA_RUN = build_dir() / "bin" / "gpuopt-cuda-run"
BATCHES = [("rolls", 0), ("rolls", 1), ("tsm", 0)]  # 300 cases


def emulate(artifact: Path, inputs: list[Path], n_out: int, order: str, out: Path) -> list[np.ndarray]:
    weights = out / "empty.safetensors"  # the cases' weights are arguments
    if not weights.exists():
        save_file({}, str(weights))
    tag = order.replace(":", "-")
    outs = [out / f"{artifact.stem}-{tag}-{i}.npy" for i in range(n_out)]
    proc = subprocess.run(
        [CUDA_RUN, artifact, f"--emulate={order}", f"--weights={weights}"]
        + [f"--input=@{p}" for p in inputs]
        + [f"--output=@{p}" for p in outs],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [np.load(p) for p in outs]


@needs_cuda_run
@pytest.mark.parametrize(("stream", "batch"), BATCHES, ids=[f"{s}{b}" for s, b in BATCHES])
def test_shift_graphs_emulated(stream: str, batch: int, tmp_path: Path) -> None:
    cases, first = [], 0
    for i in range(PER_BATCH):
        case = generate(stream, batch * PER_BATCH + i, first)
        first += len(case.args)
        cases.append(case)
    graph = tmp_path / "cases.mlir"
    graph.write_text(shift_graphs.module(cases))
    rng = np.random.default_rng(SEED + batch)
    inputs = []
    for i, shape in enumerate(s for c in cases for s in c.args):
        p = tmp_path / f"in{i}.npy"
        np.save(p, rng.standard_normal(shape).astype(np.float32))
        inputs.append(p)
    expected = run_module(graph, inputs, len(cases), tmp_path)

    mismatches = []
    for pipeline, passes in PIPELINES.items():
        artifact = compile_cuda(graph, tmp_path / f"{pipeline}.gpuopt", passes)
        results = {order: emulate(artifact, inputs, len(cases), order, tmp_path) for order in ORDERS}
        for index, (case, e) in enumerate(zip(cases, expected)):
            a = results[ORDERS[0]][index]
            if a.shape != e.shape or not np.allclose(a, e, rtol=1e-5, atol=1e-5):
                mismatches.append(f"{pipeline} {case.name}: differs from the reference backend")
            for order in ORDERS[1:]:
                b = results[order][index]
                if b.shape != a.shape or not np.array_equal(b.view(np.uint32), a.view(np.uint32)):
                    mismatches.append(
                        f"{pipeline} {case.name}: order {order} differs bitwise from {ORDERS[0]}"
                    )
    assert mismatches == [], f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches)
