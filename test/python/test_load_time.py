"""One definition of load-time work, consumed everywhere (issue 14, item 1).

A graph with two BatchNorm folds: one of parameters only (load-time work) and
one whose weight is a runtime input (per-inference work). Every consumer of
LoadTime.h must agree: --seg-split-load-time hoists exactly the first into
@forward_init, the cost report counts the first as load-time and the second
per inference, the CUDA plan's init steps are exactly the first fold's
launches, and the reference interpreter, the CPU JIT (its initializer run
once, the forward --runs=3 times) and the compiled CPU library compute what
PyTorch computes (random weights and BatchNorm statistics; relative L2 error
<= 1e-6, elementwise |a - e| <= 1e-5 + 1e-5 |e|).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import rel_l2
from cuda_artifact import program, to_json

from gpuopt.tools import run_graph, save_weights, tool

PTXAS = Path("/usr/local/cuda/bin/ptxas")

C, K = 4, 3
W = f"tensor<{C}x3x{K}x{K}xf32>"
V = f"tensor<{C}xf32>"
X = "tensor<1x3x8x8xf32>"
Y = f"tensor<1x{C}x8x8xf32>"
FOLD_TYPE = f"({W}, {V}, {V}, {V}, {V}, {V}) -> ({W}, {V})"
CONV = "stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1"
GRAPH = f"""\
func.func @forward(%x: {X}, %w: {W}) -> {Y} {{
  %w1 = seg.param "conv1.weight" : {W}
  %b1 = seg.param "conv1.bias" : {V}
  %m1 = seg.param "bn1.running_mean" : {V}
  %v1 = seg.param "bn1.running_var" : {V}
  %g1 = seg.param "bn1.weight" : {V}
  %be1 = seg.param "bn1.bias" : {V}
  %b2 = seg.param "conv2.bias" : {V}
  %m2 = seg.param "bn2.running_mean" : {V}
  %v2 = seg.param "bn2.running_var" : {V}
  %g2 = seg.param "bn2.weight" : {V}
  %be2 = seg.param "bn2.bias" : {V}
  %fw1, %fb1 = seg.fold_batch_norm %w1 bias %b1, %m1, %v1, %g1, %be1 epsilon = 1.0e-03 : {FOLD_TYPE}
  %y1 = seg.conv2d %x, %fw1, %fb1 {CONV} : {X}, {W}, {V} -> {Y}
  %fw2, %fb2 = seg.fold_batch_norm %w bias %b2, %m2, %v2, %g2, %be2 epsilon = 1.0e-03 : {FOLD_TYPE}
  %y2 = seg.conv2d %x, %fw2, %fb2 {CONV} : {X}, {W}, {V} -> {Y}
  %r = seg.add %y1, %y2 : {Y}, {Y} -> {Y}
  return %r : {Y}
}}
"""
LINES = GRAPH.splitlines()
PARAM_FOLD_LINE = next(i for i, l in enumerate(LINES, 1) if "seg.fold_batch_norm %w1" in l)
INPUT_FOLD_LINE = next(i for i, l in enumerate(LINES, 1) if "seg.fold_batch_norm %w " in l)


@pytest.fixture
def model(tmp_path: Path, rng: np.random.Generator) -> dict:
    """The graph, random weights and statistics (variances > 0), inputs and
    PyTorch's output: batch_norm(conv(x, w, b)) for both branches."""
    weights = {"conv1.weight": rng.standard_normal((C, 3, K, K)).astype(np.float32)}
    for conv, bn in (("conv1", "bn1"), ("conv2", "bn2")):
        weights[f"{conv}.bias"] = rng.standard_normal(C).astype(np.float32)
        weights[f"{bn}.running_mean"] = rng.standard_normal(C).astype(np.float32)
        weights[f"{bn}.running_var"] = rng.uniform(0.2, 3.0, C).astype(np.float32)
        weights[f"{bn}.weight"] = rng.standard_normal(C).astype(np.float32)
        weights[f"{bn}.bias"] = rng.standard_normal(C).astype(np.float32)
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((C, 3, K, K)).astype(np.float32)
    t = {k: torch.from_numpy(v) for k, v in weights.items()}

    def branch(weight: torch.Tensor, conv: str, bn: str) -> torch.Tensor:
        y = F.conv2d(torch.from_numpy(x), weight, t[f"{conv}.bias"], 1, 1)
        return F.batch_norm(
            y,
            t[f"{bn}.running_mean"],
            t[f"{bn}.running_var"],
            t[f"{bn}.weight"],
            t[f"{bn}.bias"],
            False,
            0.0,
            1e-3,
        )

    expected = (
        branch(t["conv1.weight"], "conv1", "bn1") + branch(torch.from_numpy(w), "conv2", "bn2")
    ).numpy()
    mlir = tmp_path / "model.mlir"
    mlir.write_text(GRAPH)
    return {"mlir": mlir, "weights": weights, "inputs": [x, w], "expected": expected, "dir": tmp_path}


def opt(mlir: Path, *args: str) -> str:
    proc = subprocess.run(
        [str(tool("gpuopt-opt")), str(mlir), *args], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def functions(text: str) -> dict[str, str]:
    """The body text of each func.func in printed MLIR."""
    parts = re.split(r"^  func\.func @(\w+)", text, flags=re.MULTILINE)
    return {name: body for name, body in zip(parts[1::2], parts[2::2])}


def test_split_hoists_only_the_fold_of_parameters(model: dict) -> None:
    funcs = functions(opt(model["mlir"], "--seg-split-load-time"))
    assert funcs["forward_init"].count("seg.fold_batch_norm") == 1
    assert 'seg.param "conv1.weight"' in funcs["forward_init"]
    assert funcs["forward"].count("seg.fold_batch_norm") == 1
    assert re.search(r"seg\.fold_batch_norm %arg1 bias", funcs["forward"]), funcs["forward"]
    assert "conv1." not in funcs["forward"] and "bn1." not in funcs["forward"]


def test_cost_report_agrees_with_the_split(model: dict) -> None:
    report = model["dir"] / "cost.json"
    opt(model["mlir"], f"--seg-cost-report=format=json output={report}", "-o", "/dev/null")
    data = json.loads(report.read_text())
    graphs = data if isinstance(data, list) else data.get("functions", [data])
    ops = next(g for g in graphs if g["name"] == "forward")["ops"]
    folds = [op for op in ops if op["name"] == "seg.fold_batch_norm"]
    assert [op["load_time"] for op in folds] == [True, False]
    per_inference = folds[1]
    assert per_inference["modeled"] and per_inference["compiled"]["kernels"] == 1
    assert per_inference["flops"] == C * 3 * K * K + 6 * C
    # Both splits agree on every op: load-time exactly where the split hoists.
    load_time = [op["name"] for op in ops if op["load_time"]]
    assert load_time == ["seg.param"] * 11 + ["seg.fold_batch_norm"], load_time


@pytest.mark.skipif(not PTXAS.exists(), reason="no CUDA toolkit (/usr/local/cuda/bin/ptxas)")
def test_cuda_init_steps_are_the_fold_of_parameters(model: dict) -> None:
    out = model["dir"] / "model.gpuopt"
    proc = subprocess.run(
        [
            str(tool("gpuopt-compile")),
            str(model["mlir"]),
            "--target=cuda",
            "--cuda-format=ptx",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    header = program(to_json(out))
    line = lambda step: int(step["loc"].rsplit(":", 2)[1])
    assert header["init"], "the fold of parameters has no load-time launch"
    assert {line(s) for s in header["init"]} == {PARAM_FOLD_LINE}
    assert INPUT_FOLD_LINE in {line(s) for s in header["run"]}
    assert PARAM_FOLD_LINE not in {line(s) for s in header["run"]}
    buffers = header["buffers"]
    # Load-time steps write only persistent buffers; the forward reads them.
    for step in header["init"]:
        assert all(buffers[a]["kind"] in ("Param", "Constant") for a in step["args"])
    params = [b for b in buffers if b["kind"] == "Param"]
    assert sorted(b["name"] for b in params) == sorted(model["weights"])


@pytest.mark.parametrize("backend", ["reference", "cpu"])
def test_backends_match_pytorch(model: dict, backend: str) -> None:
    result = run_graph(GRAPH, model["inputs"], model["weights"], backend=backend, extra_args=["--runs=3"])
    (y,) = result.outputs
    assert rel_l2(y, model["expected"]) <= 1e-6
    np.testing.assert_allclose(y, model["expected"], rtol=1e-5, atol=1e-5)


def test_compiled_library_matches_pytorch(model: dict) -> None:
    so = model["dir"] / "model.so"
    proc = subprocess.run(
        [str(tool("gpuopt-compile")), str(model["mlir"]), "--target=cpu", "-o", str(so)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    weights, y_path = model["dir"] / "w.safetensors", model["dir"] / "y.npy"
    save_weights(weights, model["weights"])
    args = [str(tool("gpuopt-run")), str(so), f"--weights={weights}", f"--output=@{y_path}", "--runs=3"]
    for i, x in enumerate(model["inputs"]):
        np.save(model["dir"] / f"x{i}.npy", x)
        args.append(f"--input=@{model['dir'] / f'x{i}.npy'}")
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    y = np.load(y_path)
    assert rel_l2(y, model["expected"]) <= 1e-6
    np.testing.assert_allclose(y, model["expected"], rtol=1e-5, atol=1e-5)
