"""python -m gpuopt.bench: table and JSON structure, ratios, failure marking, budget.

A tiny model at 8x8 with few runs; rows other than eager are injected runners
(and, when gpuopt-compile is built, the real gpuopt rows once). Nothing here
asserts a timing: the ratios are checked against the times the run measured.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from gpuopt import bench, timing
from gpuopt.randomize import randomize
from gpuopt.tools import build_dir

SHAPE = (1, 3, 8, 8)


class Tiny(nn.Module):
    """Conv-BN-ReLU, a Rolling-UNet-style roll group and a 1x1 conv."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Conv2d(4, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn(self.conv(x)))
        x = torch.cat([torch.roll(s, i, 2) for i, s in enumerate(torch.chunk(x, 4, 1))], 1)
        return self.head(x)


def tiny() -> nn.Module:
    """Tiny with seeded random weights and BatchNorm statistics."""
    torch.manual_seed(0)
    return randomize(Tiny().eval(), seed=0)


def eager_copy(ctx: bench.Context, row: bench.RowResult) -> bench.Runner:
    """A correct row: eager on its own deep copy of the module."""
    module = tiny()

    def run(x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return module(torch.from_numpy(x)).numpy()

    return run


def wrong(ctx: bench.Context, row: bench.RowResult) -> bench.Runner:
    """A fast wrong row: eager's output scaled by 1.01."""
    run = eager_copy(ctx, row)
    return lambda x: run(x) * 1.01


def slow_prepare(ctx: bench.Context, row: bench.RowResult) -> bench.Runner:
    time.sleep(30)
    return eager_copy(ctx, row)


def slow_first_call(ctx: bench.Context, row: bench.RowResult) -> bench.Runner:
    def run(x: np.ndarray) -> np.ndarray:
        time.sleep(30)
        return x

    return run


def erroring(ctx: bench.Context, row: bench.RowResult) -> bench.Runner:
    raise RuntimeError("no such backend\nsecond line")


def run_bench(rows: dict[str, object], budget_s: float | None = 60.0, runs: int = 4) -> bench.ModelReport:
    return bench.benchmark(
        tiny(),
        SHAPE,
        name="tiny",
        rows=["eager", *rows],
        threads=1,
        runs=runs,
        warmup=1,
        budget_s=budget_s,
        preparers=rows,  # type: ignore[arg-type]
        progress=False,
    )


def test_table_json_and_ratios(tmp_path: Path) -> None:
    rep = run_bench({"ort": eager_copy, "full": eager_copy, "unoptimized": eager_copy})
    assert [r.key for r in rep.rows] == ["eager", "ort", "unoptimized", "full"]
    for r in rep.rows:
        assert r.status == "ok", r.reason
        assert len(r.times_s) == 4 and all(t > 0 for t in r.times_s)
        assert r.rel_l2 == 0.0
        assert r.p10_s <= r.median_s <= r.p90_s
    # Header figures from the cost model: 3x4x3x3 conv + 4x2 1x1 conv at 8x8.
    assert rep.info.macs == 64 * (4 * 3 * 9 + 2 * 4)
    assert rep.info.params == 3 * 4 * 9 + 4 + 2 * 4 + 2 + 2 * 4
    assert rep.info.rolls == 4

    by_key = {r.key: r for r in rep.rows}
    pairs = {(p["a"], p["b"]): p["speedup"] for p in bench.ratios(rep)}
    for a, b in [("full", "eager"), ("full", "ort"), ("full", "unoptimized"), ("ort", "eager")]:
        expected = np.median(by_key[b].times_s) / np.median(by_key[a].times_s)
        assert pairs[(a, b)] == pytest.approx(expected)

    table = bench.format_table(rep)
    lines = table.splitlines()
    assert lines[0].startswith("tiny, input 1x3x8x8, 1 thread(s)")
    assert "GFLOPs" in lines[1] and "2 x thop MACs" in lines[1]
    header = next(line for line in lines if line.startswith("row"))
    for column in ("median ms", "p10 ms", "p90 ms", "FPS", "GFLOP/s", "rel. L2", "vs eager"):
        assert column in header
    full_line = next(line for line in lines if line.startswith("gpuopt --gpuopt-optimize"))
    assert full_line.split()[-1] == f"{pairs[('full', 'eager')]:.2f}x"
    assert "speedups from this run" in table

    doc = bench.to_json([rep], "python -m gpuopt.bench --test")
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(doc))
    doc = json.loads(path.read_text())
    assert set(doc) >= {"date", "command", "machine", "versions", "models"}
    assert doc["machine"]["threads"] == 1 and doc["machine"]["cores"] >= 1 and doc["machine"]["cpu"]
    assert doc["versions"]["torch"] == torch.__version__
    (model,) = doc["models"]
    assert model["name"] == "tiny" and model["input_shape"] == list(SHAPE)
    assert model["gflops_2x_macs"] == pytest.approx(2 * rep.info.macs / 1e9)
    row = next(r for r in model["rows"] if r["key"] == "full")
    assert row["median_ms"] == pytest.approx(1e3 * by_key["full"].median_s)
    assert row["fps"] == pytest.approx(1 / by_key["full"].median_s)
    assert row["gflop_per_s"] == pytest.approx(2 * rep.info.macs / by_key["full"].median_s / 1e9)
    assert len(row["times_ms"]) == 4
    assert {(p["a"], p["b"]) for p in model["ratios"]} == set(pairs)


def test_wrong_output_is_failed_and_not_timed() -> None:
    rep = run_bench({"ort": wrong, "full": eager_copy})
    ort = rep.row("ort")
    assert ort.status == "FAILED" and ort.times_s == [] and ort.median_s is None
    assert ort.rel_l2 == pytest.approx(0.01, rel=1e-3)
    assert "rel. L2" in ort.reason
    assert rep.row("full").status == "ok"
    assert all("ort" not in (p["a"], p["b"]) for p in bench.ratios(rep))
    line = next(line for line in bench.format_table(rep).splitlines() if line.startswith("ONNX Runtime"))
    assert "FAILED" in line


def test_budget_skips_and_errors_are_reported() -> None:
    rep = run_bench(
        {"torch.compile": slow_prepare, "ort": slow_first_call, "unoptimized": erroring, "full": eager_copy},
        budget_s=0.5,
        runs=2,
    )
    compiled, ort, unopt = rep.row("torch.compile"), rep.row("ort"), rep.row("unoptimized")
    assert compiled.status == "skipped" and "preparing" in compiled.reason and "budget" in compiled.reason
    assert ort.status == "skipped" and "first inference" in ort.reason
    assert unopt.status == "error" and unopt.reason == "RuntimeError: no such backend"
    assert all(not r.times_s for r in (compiled, ort, unopt))
    assert rep.row("full").status == "ok" and len(rep.row("full").times_s) >= 1
    notes = bench.format_table(rep).split("notes:")[1]
    assert "exceeded the budget of 0.5 s" in notes and "no such backend" in notes


def test_unknown_row() -> None:
    with pytest.raises(ValueError, match="unknown row"):
        bench.benchmark(tiny(), SHAPE, rows=["eager", "nope"], progress=False)


@pytest.mark.skipif(
    not (build_dir() / "bin" / "gpuopt-compile").exists(), reason="gpuopt-compile is not built"
)
def test_real_gpuopt_and_ort_rows(tmp_path: Path) -> None:
    out = tmp_path / "b.json"
    rep = bench.benchmark(
        tiny(),
        SHAPE,
        rows=["eager", "ort", "full", "gpuopt.compile"],
        threads=1,
        runs=2,
        warmup=0,
        progress=False,
    )
    assert [r.key for r in rep.rows] == ["eager", "ort", "full", "gpuopt.compile"]
    for r in rep.rows:
        assert r.status == "ok", f"{r.key}: {r.reason}"
        assert r.rel_l2 <= 1e-4
        assert len(r.times_s) == 2
    assert rep.row("gpuopt.compile").detail["compile_call_s"] > 0
    full = rep.row("full")
    assert full.rolls == 0 and full.ops < rep.info.ops
    out.write_text(json.dumps(bench.to_json([rep], "test")))
    assert json.loads(out.read_text())["models"][0]["rows"][2]["key"] == "full"


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "b.json"
    argv = ["--model", "zoo:unext_s", "--input-shape", "1,3,32,32", "--rows", "eager"]
    assert bench.main([*argv, "--runs", "2", "--warmup", "0", "--threads", "1", "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("unext_s, input 1x3x32x32, 1 thread(s)")
    assert "bench: unext_s: exported" in captured.err
    doc = json.loads(out.read_text())
    assert doc["command"].endswith(f"--json {out}") and doc["models"][0]["rows"][0]["key"] == "eager"
    with pytest.raises(SystemExit):
        bench.main(["--rows", "eager,nope"])


def test_timed_calls_wait_for_spinning_threads() -> None:
    """A thread of the process still spinning (as ONNX Runtime's workers do for
    ~40 ms after a run) delays the next timed call until it stops; an idle process
    does not wait for the cap."""
    import threading

    stopped = threading.Event()

    def spin() -> None:
        end = time.perf_counter() + 0.08
        while time.perf_counter() < end:
            pass
        stopped.set()

    worker = threading.Thread(target=spin)
    worker.start()
    timing.settle()
    assert stopped.is_set(), "_settle returned while a thread of the process was still running"
    worker.join()
    waited = timing.settle()
    assert waited < timing.SETTLE_MAX_S, "an idle process waited for the whole cap"


def test_cpu_level_reaches_the_gpuopt_rows(tmp_path: Path) -> None:
    """--cpu=LEVEL builds the gpuopt rows' libraries for that level (recorded in
    the library's metadata) and names it in the table."""
    from test_artifacts import dump

    rep = bench.benchmark(
        tiny(),
        SHAPE,
        rows=["eager", "full"],
        threads=1,
        runs=1,
        warmup=0,
        progress=False,
        workdir=tmp_path,
        cpu="x86-64-v2",
    )
    assert rep.row("full").status == "ok", rep.row("full").reason
    assert dump(tmp_path / "full.so")["program"]["cpu"] == "x86-64-v2"
    assert "generated code: --cpu=x86-64-v2" in bench.format_table(rep)
