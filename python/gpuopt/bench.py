"""CPU benchmark: gpuopt against PyTorch eager, torch.compile and ONNX Runtime.

    python -m gpuopt.bench --model zoo:rolling_unet_s --device cpu --input-shape 1,3,224,224
        [--threads N] [--runs N] [--warmup N] [--rows eager,ort,...] [--budget-s S] [--json FILE]

``--model`` is ``zoo:NAME``, a bare zoo name, or ``all`` (every zoo model in turn),
built with seeded random weights, BatchNorm statistics, norm scales and biases
(``gpuopt.randomize``, ``--seed``).
From one run it prints a seed-style table per model, one row per variant:

- ``eager``: PyTorch eager on the original ``nn.Module`` (the reference output);
- ``torch.compile``: the module through ``torch.compile`` (default mode, Inductor);
- ``ort``: ONNX Runtime on the module exported with ``torch.onnx.export``;
- ``unoptimized``: the exported seg graph compiled as is by ``gpuopt-compile``;
- one row per pass alone (``fuse-roll``, ``collapse-rolls``, ``fuse-conv-bn-relu``,
  ``simplify-token-layout``, ``roll-to-deform-conv``);
- ``full``: the graph after ``--gpuopt-optimize``.

Params and FLOPs come from the C++ cost model (``gpuopt-opt --seg-cost-report``,
docs/CostModel.md) on the exported graph: GFLOPs as 2 × MACs and as the papers'
2 × thop MACs; "GFLOP/s" is 2 × MACs over the median latency. Every row uses the
same thread count (``torch.set_num_threads``, ONNX Runtime's intra-op threads,
``gpuopt.compiled.set_num_threads``). Timed calls are interleaved: each round
runs every row once, in a rotating order, on inputs rotated between rounds, so
that the noise of a shared machine hits all rows alike (/work/shared/BENCHMARKING.md).
Before it is timed, each row's output is compared with eager's (relative L2);
a row above ``--tol`` is FAILED and not timed. A row whose preparation (export,
compile, load) or whose untimed first call takes longer than ``--budget-s`` is
skipped with the reason; a row whose runs would not fit in the budget gets fewer.
Progress goes to stderr; the tables to stdout; ``--json`` writes every number with
the machine, date and versions.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from gpuopt._atomic import write_text
from gpuopt.timing import settle
from gpuopt.tools import REPO_ROOT, build_dir

#: A prepared row: one inference on a float32 array, returning the (first) output.
Runner = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class RowSpec:
    """A benchmark row: ``key`` on the command line, ``label`` in the table."""

    key: str
    label: str
    kind: str  # eager | torch.compile | ort | gpuopt
    passes: tuple[str, ...] = ()


PASS_ROWS = (
    "fuse-roll",
    "collapse-rolls",
    "fuse-conv-bn-relu",
    "simplify-token-layout",
    "roll-to-deform-conv",
)

ROWS: tuple[RowSpec, ...] = (
    RowSpec("eager", "PyTorch eager", "eager"),
    RowSpec("torch.compile", "torch.compile (inductor)", "torch.compile"),
    RowSpec("ort", "ONNX Runtime", "ort"),
    RowSpec("unoptimized", "gpuopt unoptimized", "gpuopt"),
    *(RowSpec(p, f"gpuopt --{p}", "gpuopt", (f"--{p}",)) for p in PASS_ROWS),
    RowSpec("full", "gpuopt --gpuopt-optimize", "gpuopt", ("--gpuopt-optimize",)),
    RowSpec("gpuopt.compile", "gpuopt.compile(model)", "gpuopt.compile"),
)
ROW_KEYS = tuple(r.key for r in ROWS)

#: Pairs (A, B) whose speedup median(B) / median(A) is always printed when both were timed.
KEY_PAIRS: tuple[tuple[str, str], ...] = (
    ("full", "eager"),
    ("full", "torch.compile"),
    ("full", "ort"),
    ("full", "unoptimized"),
    ("gpuopt.compile", "eager"),
    ("torch.compile", "eager"),
    ("ort", "eager"),
    ("unoptimized", "eager"),
    *((p, "unoptimized") for p in PASS_ROWS),
)


class BudgetExceeded(Exception):
    """Raised (by SIGALRM) when a row's preparation runs past the budget."""


@dataclass
class RowResult:
    """What one row measured. ``status``: ok, FAILED (wrong output), skipped, error."""

    key: str
    label: str
    status: str = "ok"
    reason: str = ""
    compile_s: float | None = None
    rel_l2: float | None = None
    times_s: list[float] = field(default_factory=list)
    #: Seconds waited before each timed call for the machine to go idle (gpuopt.timing.settle).
    settle_s: list[float] = field(default_factory=list)
    ops: int | None = None
    rolls: int | None = None
    detail: dict[str, float | str | None] = field(default_factory=dict)

    def _pct(self, q: float) -> float | None:
        if not self.times_s:
            return None
        return float(np.percentile(self.times_s, q))

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.times_s) if self.times_s else None

    @property
    def p10_s(self) -> float | None:
        return self._pct(10)

    @property
    def p90_s(self) -> float | None:
        return self._pct(90)


@dataclass
class ModelInfo:
    """The model-level figures of the table header (cost model, exported graph)."""

    name: str
    input_shape: tuple[int, ...]
    params: int
    module_params: int
    bn_statistics: int
    macs: int
    thop_macs: int
    ops: int
    rolls: int


@dataclass
class ModelReport:
    info: ModelInfo
    rows: list[RowResult]
    threads: int
    runs: int
    warmup: int
    tol: float
    #: 1-minute load average of the machine before and after the timed rounds.
    load: tuple[float, float] = (0.0, 0.0)
    #: gpuopt-compile's --cpu= level of the gpuopt rows (None: native).
    cpu: str | None = None

    def row(self, key: str) -> RowResult | None:
        return next((r for r in self.rows if r.key == key), None)


def rel_l2(actual: np.ndarray, expected: np.ndarray) -> float:
    """Relative L2 error ||a - e|| / ||e|| (inf for a shape mismatch)."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if a.shape != e.shape:
        return float("inf")
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))


def speedup(a: RowResult, b: RowResult) -> float | None:
    """How many times faster ``a`` is than ``b``: median(b) / median(a); None unless both timed."""
    if a.median_s is None or b.median_s is None or a.median_s <= 0:
        return None
    return b.median_s / a.median_s


def ratios(report: ModelReport) -> list[dict[str, Any]]:
    """Speedups of KEY_PAIRS plus the full pipeline against every other timed row."""
    pairs = list(KEY_PAIRS) + [("full", r.key) for r in report.rows if r.key != "full"]
    out, seen = [], set()
    for a_key, b_key in pairs:
        a, b = report.row(a_key), report.row(b_key)
        if (a_key, b_key) in seen or a is None or b is None:
            continue
        seen.add((a_key, b_key))
        s = speedup(a, b)
        if s is not None:
            out.append({"a": a_key, "b": b_key, "speedup": s})
    return out


@contextlib.contextmanager
def deadline(seconds: float | None, what: str) -> Iterator[None]:
    """Raises BudgetExceeded in the main thread after ``seconds``.

    Python code (torch.compile, the ONNX export) is interrupted where it is; a
    subprocess (gpuopt-compile) is killed by subprocess.run; a call into C
    (a compiled model's run) is interrupted only when it returns.
    """
    if not seconds or seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise BudgetExceeded(f"{what} exceeded the budget of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _log(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"


# ---------------------------------------------------------------------------
# Row preparation: each returns a Runner (and fills compile details).
# ---------------------------------------------------------------------------


@dataclass
class Context:
    """What the preparers share: the module, its export and the scratch directory."""

    module: nn.Module
    example: np.ndarray
    tmpdir: Path
    threads: int
    mlir: Path | None = None
    weights: Path | None = None
    #: gpuopt-compile's --cpu= level for the gpuopt rows (None: its default, native).
    cpu: str | None = None


def prepare_eager(ctx: Context, row: RowResult) -> Runner:
    module = ctx.module

    def run(x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return module(torch.from_numpy(x)).numpy()

    return run


def prepare_torch_compile(ctx: Context, row: RowResult) -> Runner:
    import torch._dynamo

    torch._dynamo.reset()
    compiled = torch.compile(ctx.module)
    start = time.perf_counter()
    try:
        with torch.no_grad():
            compiled(torch.from_numpy(ctx.example))  # compiles
    except BaseException:
        torch._dynamo.reset()  # drop what an interrupted compile left behind
        raise
    row.detail["first_call_s"] = time.perf_counter() - start

    def run(x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return compiled(torch.from_numpy(x)).numpy()

    return run


def prepare_ort(ctx: Context, row: RowResult) -> Runner:
    import onnxruntime as ort

    path = ctx.tmpdir / "model.onnx"
    start = time.perf_counter()
    with warnings_silenced():
        # The TorchScript exporter: the dynamo one takes more than 10 minutes on
        # Rolling-UNet-S's 2048 rolls (measured on the 2-core build machine).
        torch.onnx.export(
            ctx.module, (torch.from_numpy(ctx.example),), str(path), dynamo=False, opset_version=17
        )
    row.detail["export_s"] = time.perf_counter() - start
    options = ort.SessionOptions()
    options.intra_op_num_threads = ctx.threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    start = time.perf_counter()
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    row.detail["session_s"] = time.perf_counter() - start
    name = session.get_inputs()[0].name

    def run(x: np.ndarray) -> np.ndarray:
        return session.run(None, {name: x})[0]

    return run


@contextlib.contextmanager
def warnings_silenced() -> Iterator[None]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def seg_op_counts(mlir_text: str) -> tuple[int, int]:
    """(seg ops excluding parameters, seg.roll ops) of a graph's text."""
    ops = re.findall(r"=\s+seg\.(\w+)", mlir_text)
    return sum(1 for op in ops if op != "param"), sum(1 for op in ops if op == "roll")


def prepare_gpuopt_compile(ctx: Context, row: RowResult) -> Runner:
    """gpuopt.compile(module, example) with its default pipeline (--gpuopt-optimize),
    called on torch tensors as a user would; a cache directory of its own, so the
    compile is measured, not a cache hit."""
    import gpuopt

    start = time.perf_counter()
    fast = gpuopt.compile(
        ctx.module,
        (torch.from_numpy(ctx.example),),
        cache_dir=ctx.tmpdir / "compile-cache",
        threads=ctx.threads,
    )
    row.detail["compile_call_s"] = time.perf_counter() - start

    def run(x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return fast(torch.from_numpy(x)).numpy()

    return run


def make_gpuopt_preparer(passes: Sequence[str]) -> Callable[[Context, RowResult], Runner]:
    """gpuopt-opt PASSES, gpuopt-compile --target=cpu, then load the library (gpuopt.compiled)."""

    def prepare(ctx: Context, row: RowResult) -> Runner:
        from gpuopt.compiled import CompiledModel, compile_model, set_num_threads

        assert ctx.mlir is not None and ctx.weights is not None
        tag = row.key.replace(".", "_")
        graph = ctx.mlir
        if passes:
            graph = ctx.tmpdir / f"{tag}.mlir"
            start = time.perf_counter()
            _run_checked([str(build_dir() / "bin" / "gpuopt-opt"), str(ctx.mlir), *passes, "-o", str(graph)])
            row.detail["opt_s"] = time.perf_counter() - start
        row.ops, row.rolls = seg_op_counts(graph.read_text())
        start = time.perf_counter()
        so = compile_model(graph, ctx.tmpdir / f"{tag}.so", target="cpu", cpu=ctx.cpu)
        row.detail["gpuopt_compile_s"] = time.perf_counter() - start
        set_num_threads(ctx.threads)
        start = time.perf_counter()
        model = CompiledModel(so, ctx.weights)
        row.detail["load_s"] = time.perf_counter() - start
        row.detail["cpu_isa"] = model.cpu_isa

        def run(x: np.ndarray) -> np.ndarray:
            return model.run(x)[0]

        return run

    return prepare


def _run_checked(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{Path(cmd[0]).name} exited with {proc.returncode}: {proc.stderr.strip()}")


def default_preparers() -> dict[str, Callable[[Context, RowResult], Runner]]:
    preparers: dict[str, Callable[[Context, RowResult], Runner]] = {
        "eager": prepare_eager,
        "torch.compile": prepare_torch_compile,
        "ort": prepare_ort,
        "gpuopt.compile": prepare_gpuopt_compile,
    }
    for spec in ROWS:
        if spec.kind == "gpuopt":
            preparers[spec.key] = make_gpuopt_preparer(spec.passes)
    return preparers


# ---------------------------------------------------------------------------
# The measurement.
# ---------------------------------------------------------------------------


def cost_figures(mlir: Path) -> dict[str, int]:
    """Params and MACs of the exported graph from gpuopt-opt --seg-cost-report."""
    from gpuopt.costreport import report

    fn = report(mlir, device="cpu")["functions"][0]
    return {k: int(fn[k]) for k in ("params", "buffers", "macs", "thop_macs")}


def benchmark(
    module: nn.Module,
    input_shape: Sequence[int],
    name: str = "model",
    rows: Sequence[str] = ROW_KEYS,
    threads: int | None = None,
    runs: int = 50,
    warmup: int = 3,
    budget_s: float | None = 300.0,
    tol: float = 1e-4,
    seed: int = 0,
    preparers: dict[str, Callable[[Context, RowResult], Runner]] | None = None,
    progress: bool = True,
    workdir: Path | None = None,
    cpu: str | None = None,
) -> ModelReport:
    """Measures ``module`` (put in eval mode) on random inputs of ``input_shape``.

    ``preparers`` overrides how rows are built (tests inject runners); rows are
    measured in the order of ROWS. The exported graph (``exported.mlir``,
    ``weights.safetensors``) and each gpuopt row's graph and library
    (``KEY.mlir``, ``KEY.so``) are written to ``workdir`` (kept) or to a
    temporary directory. ``cpu`` is gpuopt-compile's ``--cpu=`` level for the
    gpuopt rows (None: native). Returns every measurement; see :func:`format_table`.
    """
    log = _log if progress else (lambda msg: None)
    threads = threads or os.cpu_count() or 1
    torch.set_num_threads(threads)
    os.environ["GPUOPT_NUM_THREADS"] = str(threads)
    module = module.eval()
    preps = {**default_preparers(), **(preparers or {})}
    unknown = [k for k in rows if k not in preps]
    if unknown:
        raise ValueError(f"unknown row(s) {', '.join(unknown)}; rows are {', '.join(ROW_KEYS)}")
    order = [k for k in ROW_KEYS if k in rows] + [k for k in rows if k not in ROW_KEYS]
    labels = {s.key: s.label for s in ROWS}
    gen = torch.Generator().manual_seed(seed)
    inputs = [torch.randn(*input_shape, generator=gen).numpy() for _ in range(2)]

    results: dict[str, RowResult] = {}
    runners: dict[str, Runner] = {}
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gpuopt-bench-")))
        ctx = Context(module, inputs[0], Path(workdir), threads, cpu=cpu)
        log(f"{name}: input {'x'.join(map(str, input_shape))}, {threads} thread(s); exporting the seg graph")
        from gpuopt.export import export

        start = time.perf_counter()
        ctx.mlir, ctx.weights = ctx.tmpdir / "exported.mlir", ctx.tmpdir / "weights.safetensors"
        export(module, (torch.from_numpy(inputs[0]),), ctx.mlir, ctx.weights)
        ops, rolls = seg_op_counts(ctx.mlir.read_text())
        log(
            f"{name}: exported {ops} ops ({rolls} seg.roll) in {time.perf_counter() - start:.1f} s; cost model"
        )
        costs = cost_figures(ctx.mlir)
        info = ModelInfo(
            name=name,
            input_shape=tuple(input_shape),
            params=costs["params"],
            module_params=sum(p.numel() for p in module.parameters()),
            bn_statistics=costs["buffers"],
            macs=costs["macs"],
            thop_macs=costs["thop_macs"],
            ops=ops,
            rolls=rolls,
        )
        with torch.no_grad():
            expected = module(torch.from_numpy(inputs[0])).numpy()

        for key in order:
            row = results[key] = RowResult(key, labels.get(key, key))
            log(f"{row.label}: preparing")
            start = time.perf_counter()
            try:
                with deadline(budget_s, f"preparing {row.label}"):
                    runner = preps[key](ctx, row)
                row.compile_s = time.perf_counter() - start
                first = time.perf_counter()
                with deadline(budget_s, f"the first inference of {row.label}"):
                    out = runner(inputs[0])
                row.detail["first_run_s"] = time.perf_counter() - first
            except BudgetExceeded as e:
                row.status, row.reason = "skipped", str(e)
                log(f"{row.label}: skipped: {e}")
                continue
            except Exception as e:  # noqa: BLE001 - any failure of one row is reported, the others go on
                if "exceeded the budget" in str(e):  # re-raised by torch.compile's wrappers
                    row.status, row.reason = (
                        "skipped",
                        f"preparing {row.label} exceeded the budget of {budget_s:g} s",
                    )
                else:
                    row.status, row.reason = "error", _first_line(e)
                log(f"{row.label}: {row.status}: {row.reason}")
                continue
            row.rel_l2 = rel_l2(out, expected)
            if not row.rel_l2 <= tol:
                row.status = "FAILED"
                row.reason = f"output differs from PyTorch eager: rel. L2 {row.rel_l2:.2e} > {tol:g}"
                log(f"{row.label}: FAILED: {row.reason}")
                continue
            runners[key] = runner
            log(
                f"{row.label}: ready in {row.compile_s:.1f} s, first inference "
                f"{row.detail['first_run_s'] * 1e3:.1f} ms, rel. L2 vs eager {row.rel_l2:.1e}"
            )

        load_before = os.getloadavg()[0]
        _measure(results, runners, inputs, runs, warmup, budget_s, log)
        load = (load_before, os.getloadavg()[0])
        # Checked again after the timed runs, on the other input: a runtime
        # that corrupts its own state (weights, load-time results) passes
        # the first inference.
        with torch.no_grad():
            expected_last = module(torch.from_numpy(inputs[1])).numpy()
        for key, runner in runners.items():
            row = results[key]
            err = rel_l2(runner(inputs[1]), expected_last)
            if not err <= tol:
                row.status = "FAILED"
                row.reason = (
                    f"after the timed runs, output differs from PyTorch eager: rel. L2 {err:.2e} > {tol:g}"
                )
                log(f"{row.label}: FAILED: {row.reason}")
        runners.clear()  # compiled models close before their directory goes
    return ModelReport(info, [results[k] for k in order], threads, runs, warmup, tol, load, cpu)


def _measure(
    results: dict[str, RowResult],
    runners: dict[str, Runner],
    inputs: list[np.ndarray],
    runs: int,
    warmup: int,
    budget_s: float | None,
    log: Callable[[str], None],
) -> None:
    """Interleaved warm-up and timed runs; a row's runs are cut to fit its budget.

    Each timed call starts once the threads of the previous call's runtime (ONNX
    Runtime and OpenMP spin before sleeping) are idle (gpuopt.timing.settle): every call starts
    on a quiet machine, as an isolated inference does.
    """
    keys = list(runners)
    wanted = {}
    for key in keys:
        per_call = results[key].detail.get("first_run_s", 0.0)
        n = runs
        if budget_s and per_call * (runs + warmup) > budget_s:
            n = max(1, min(runs, int(budget_s / max(per_call, 1e-9)) - warmup))
            results[key].reason = f"{n} of {runs} runs: {per_call:.2f} s per inference, budget {budget_s:g} s"
        wanted[key] = n
    for w in range(warmup):
        for i in range(len(keys)):
            key = keys[(i + w) % len(keys)]
            runners[key](inputs[(w + 1) % len(inputs)])
    total = max(wanted.values(), default=0)
    next_report = time.perf_counter()
    for r in range(total):
        if time.perf_counter() >= next_report:
            log(f"timing: round {r + 1}/{total}, rows in turn: {', '.join(keys)}")
            next_report = time.perf_counter() + 10
        x = inputs[r % len(inputs)]
        for i in range(len(keys)):
            key = keys[(i + r) % len(keys)]
            if len(results[key].times_s) >= wanted[key]:
                continue
            settled = settle()
            results[key].settle_s.append(settled)
            start = time.perf_counter()
            runners[key](x)
            results[key].times_s.append(time.perf_counter() - start)
    log("timing: done")


# ---------------------------------------------------------------------------
# Output.
# ---------------------------------------------------------------------------


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v * 1e3:.2f}"


def cpu_isa_line(report: ModelReport) -> str | None:
    """Which CPU kernel path the gpuopt rows ran (docs/CPUBackend.md, GPUOPT_CPU_ISA)."""
    isas = sorted({r.detail["cpu_isa"] for r in report.rows if r.detail.get("cpu_isa")})
    if not isas:
        return None
    forced = os.environ.get("GPUOPT_CPU_ISA")
    how = f"forced by GPUOPT_CPU_ISA={forced}" if forced else "the best this CPU has; GPUOPT_CPU_ISA unset"
    level = report.cpu or "native"
    return f"gpuopt CPU kernels: {', '.join(isas)} ({how}); generated code: --cpu={level}"


def format_table(report: ModelReport) -> str:
    """The seed-style table and the ratios of one model."""
    info = report.info
    gflops = 2 * info.macs / 1e9
    lines = [
        (
            f"{info.name}, input {'x'.join(map(str, info.input_shape))}, {report.threads} thread(s), "
            f"median of up to {report.runs} interleaved runs after {report.warmup} warm-up; "
            f"load average {report.load[0]:.1f} -> {report.load[1]:.1f} on {os.cpu_count()} cores"
        ),
        (
            f"params {info.params:,} (graph; module {info.module_params:,}; BatchNorm statistics "
            f"{info.bn_statistics:,}) | GMACs {info.macs / 1e9:.3f} | GFLOPs {gflops:.3f} (2 x MACs), "
            f"{2 * info.thop_macs / 1e9:.3f} (2 x thop MACs) | exported graph {info.ops} ops, {info.rolls} rolls"
        ),
        *([line] if (line := cpu_isa_line(report)) else []),
        "",
        (
            f"{'row':<34}{'status':>8}{'ops':>6}{'rolls':>6}{'prep s':>8}{'median ms':>11}{'p10 ms':>9}"
            f"{'p90 ms':>9}{'runs':>5}{'FPS':>8}{'GFLOP/s':>9}{'rel. L2':>9}{'vs eager':>9}"
        ),
    ]
    eager = report.row("eager")
    batch = info.input_shape[0] if info.input_shape else 1
    notes = []
    for r in report.rows:
        med = r.median_s
        fps = f"{batch / med:.1f}" if med else "-"
        achieved = f"{2 * info.macs / med / 1e9:.2f}" if med else "-"
        vs = speedup(r, eager) if eager is not None else None
        lines.append(
            f"{r.label:<34}{r.status:>8}{'-' if r.ops is None else r.ops:>6}{'-' if r.rolls is None else r.rolls:>6}"
            f"{'-' if r.compile_s is None else f'{r.compile_s:.1f}':>8}{_ms(med):>11}{_ms(r.p10_s):>9}"
            f"{_ms(r.p90_s):>9}{len(r.times_s) or '-':>5}{fps:>8}{achieved:>9}"
            f"{'-' if r.rel_l2 is None else f'{r.rel_l2:.0e}':>9}{'-' if vs is None else f'{vs:.2f}x':>9}"
        )
        if r.reason:
            notes.append(f"  {r.label}: {r.reason}")
    if notes:
        lines += ["", "notes:", *notes]
    pairs = ratios(report)
    if pairs:
        labels = {r.key: r.label for r in report.rows}
        lines += ["", "speedups from this run (median of B / median of A):"]
        for p in pairs:
            lines.append(f"  {labels[p['a']]:<34} vs {labels[p['b']]:<34}{p['speedup']:>8.2f}x")
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    """CPU model, cores and the like, for the JSON record."""
    model = platform.processor() or "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"cpu": model, "cores": os.cpu_count(), "platform": platform.platform()}


def versions() -> dict[str, str | None]:
    """Versions of everything measured, and the gpuopt commit."""

    def version(module: str) -> str | None:
        try:
            return __import__(module).__version__
        except Exception:  # noqa: BLE001 - absent or broken: recorded as None
            return None

    git = ["git", "-C", str(REPO_ROOT), "describe", "--always", "--dirty"]
    commit = subprocess.run(git, capture_output=True, text=True, check=False).stdout.strip()
    llvm = subprocess.run(["llvm-config-22", "--version"], capture_output=True, text=True, check=False).stdout
    return {
        "gpuopt_commit": commit or None,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "onnx": version("onnx"),
        "onnxruntime": version("onnxruntime"),
        "llvm": llvm.strip() or None,
    }


def to_json(reports: list[ModelReport], command: str) -> dict[str, Any]:
    """Every number of ``reports`` with the machine, date, versions and the command."""
    models = []
    for rep in reports:
        rows = []
        for r in rep.rows:
            d = asdict(r)
            med = r.median_s
            d.update(
                median_ms=None if med is None else med * 1e3,
                p10_ms=None if r.p10_s is None else r.p10_s * 1e3,
                p90_ms=None if r.p90_s is None else r.p90_s * 1e3,
                fps=None if not med else rep.info.input_shape[0] / med,
                gflop_per_s=None if not med else 2 * rep.info.macs / med / 1e9,
                times_ms=[t * 1e3 for t in r.times_s],
                settle_ms=[t * 1e3 for t in r.settle_s],
            )
            del d["times_s"], d["settle_s"]
            rows.append(d)
        models.append(
            {
                **asdict(rep.info),
                "gflops_2x_macs": 2 * rep.info.macs / 1e9,
                "gflops_2x_thop_macs": 2 * rep.info.thop_macs / 1e9,
                "threads": rep.threads,
                "runs": rep.runs,
                "warmup": rep.warmup,
                "tol": rep.tol,
                "load_average": list(rep.load),
                "rows": rows,
                "ratios": ratios(rep),
            }
        )
    threads = reports[0].threads if reports else None
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "machine": {**machine(), "threads": threads},
        "versions": versions(),
        "models": models,
    }


def parse_shape(text: str) -> tuple[int, ...]:
    shape = tuple(int(d) for d in text.split(","))
    if len(shape) != 4 or any(d < 1 for d in shape):
        raise argparse.ArgumentTypeError(f"--input-shape '{text}': expected N,C,H,W with positive sizes")
    return shape


def model_names(spec: str) -> list[str]:
    from gpuopt import models

    if spec == "all":
        return models.names()
    name = spec.removeprefix("zoo:")
    if name not in models.names():
        raise SystemExit(f"bench: unknown model '{spec}'; zoo models: {', '.join(models.names())}, or all")
    return [name]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuopt.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="zoo:rolling_unet_s", help="zoo:NAME, NAME or all")
    parser.add_argument("--device", default="cpu", choices=["cpu"], help="only cpu for now")
    parser.add_argument("--input-shape", type=parse_shape, default=(1, 3, 224, 224))
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--runs", type=int, default=50, help="timed runs per row (interleaved)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument(
        "--rows", default=",".join(ROW_KEYS), help=f"comma-separated subset of {','.join(ROW_KEYS)}"
    )
    parser.add_argument("--budget-s", type=float, default=300.0, help="per row: preparation and runs")
    parser.add_argument("--tol", type=float, default=1e-4, help="largest relative L2 error vs eager")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write every number here")
    parser.add_argument(
        "--cpu",
        choices=["native", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"],
        help="gpuopt-compile --cpu= level of the gpuopt rows' generated code (default native); "
        "with GPUOPT_CPU_ISA=avx2 and x86-64-v3 an AVX-512 machine runs what an AVX2 machine would",
    )
    args = parser.parse_args(argv)
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = [r for r in rows if r not in ROW_KEYS]
    if unknown:
        parser.error(f"unknown row(s) {', '.join(unknown)}; rows are {', '.join(ROW_KEYS)}")
    if args.runs < 1 or args.warmup < 0 or args.threads < 1:
        parser.error("--runs and --threads must be at least 1, --warmup at least 0")

    from gpuopt import models
    from gpuopt.randomize import randomize

    reports = []
    for name in model_names(args.model):
        torch.manual_seed(args.seed)
        # Random BatchNorm statistics, norm scales and biases too: under the
        # default initialisation a wrong fold or bias computes the same numbers.
        module = randomize(models.build(name), seed=args.seed)
        rep = benchmark(
            module,
            args.input_shape,
            name=name,
            rows=rows,
            threads=args.threads,
            runs=args.runs,
            warmup=args.warmup,
            budget_s=args.budget_s,
            tol=args.tol,
            seed=args.seed,
            cpu=args.cpu,
        )
        reports.append(rep)
        print(format_table(rep), flush=True)
        print(flush=True)
    if args.json:
        command = "python -m gpuopt.bench " + " ".join(sys.argv[1:] if argv is None else argv)
        write_text(args.json, json.dumps(to_json(reports, command), indent=1))
        _log(f"wrote {args.json}")
    # A wrong or broken gpuopt row fails the command; an anchor's is only reported.
    gpuopt_keys = {s.key for s in ROWS if s.kind in ("gpuopt", "gpuopt.compile")}
    bad = [r for rep in reports for r in rep.rows if r.key in gpuopt_keys and r.status in ("FAILED", "error")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
