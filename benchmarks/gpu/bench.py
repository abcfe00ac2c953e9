"""The GPU benchmark behind benchmarks/gpu/run.sh (read that first).

Needs torch and numpy (matplotlib for the roofline PNG) and, on a GPU
machine, a CUDA GPU; no LLVM: the gpuopt rows are artifacts compiled by
prepare.sh, run by gpuopt-cuda-run; of gpuopt's Python package it imports
only pure-torch modules (gpuopt.models, gpuopt.randomize).

Every row is appended to OUT/results.jsonl (one JSON object per line,
flushed) the moment it is measured, and OUT/results.md is rebuilt from that
file after each row (roofline.png after each stage), so a run killed at any
point leaves what it measured; ``bench.py --render OUT`` rebuilds both from
the JSONL alone. Stages run in order of importance, each under its own cap,
the whole under --budget: correctness of every artifact, Rolling-UNet-S,
UNet, the rest (docs/benchmarks/gpu.md). With --dry-run (no GPU) the gpuopt
rows run through the host emulation (gpuopt-cuda-run --emulate, the same
artifacts) and the PyTorch rows on the CPU, with tiny run counts.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import ctypes
import json
import os
import platform
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# The budget counts from here (the imports before it take under a second).
START = time.monotonic()

# Relative L2 error against PyTorch in strict FP32, by precision mode.
TOLERANCE = {"FP32": 1e-5, "TF32": 5e-3}
# Stage caps (seconds), each also bounded by what is left of the budget.
STAGE_CAPS = {"correctness": 75.0, "rolling_unet_s": 150.0, "unet": 60.0, "rest": 1e9}
STAGES = list(STAGE_CAPS)
# torch.compile caps (seconds, the child process's timeout).
AUTOTUNE_CAP, COMPILE_CAP = 110.0, 60.0
# Seconds of the budget kept for the last rendering (markdown and PNG).
RESERVE_S = 8.0


def log(msg: str) -> None:
    print(f"bench: {msg}", flush=True)


# --- the JSONL and what is rendered from it ---------------------------------


class Results:
    """OUT/results.jsonl, appended and flushed record by record."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.path = out / "results.jsonl"
        self.start = time.monotonic()
        self.seq = 0
        out.mkdir(parents=True, exist_ok=True)
        self.path.write_text("")

    def add(self, kind: str, record: dict[str, Any]) -> None:
        self.seq += 1
        record = {"kind": kind, "seq": self.seq, "t_s": round(time.monotonic() - self.start, 2)} | record
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")
            f.flush()
            os.fsync(f.fileno())
        if kind == "row":
            write_markdown(self.out)


def read_jsonl(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The records of `path` and how many lines were unreadable (a run
    killed mid-write leaves a truncated last line)."""
    records, bad = [], 0
    for line in path.read_text(errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            bad += 1
            continue
        if isinstance(rec, dict) and "kind" in rec:
            records.append(rec)
        else:
            bad += 1
    return records, bad


def fmt(v: Any, spec: str = ".3f") -> str:
    return "" if v is None else format(v, spec)


def render_markdown(records: list[dict[str, Any]], bad_lines: int) -> str:
    env = next((r for r in records if r["kind"] == "environment"), None)
    ceil = next((r for r in records if r["kind"] == "ceilings"), None)
    end = next((r for r in records if r["kind"] == "end"), None)
    rows = [r for r in records if r["kind"] == "row"]
    lines = ["# gpuopt GPU benchmark", ""]
    if env:
        lines.append(
            f"{'DRY RUN (no GPU: gpuopt through the host emulator, PyTorch on the CPU; no number here is a GPU time). ' if env.get('dry_run') else ''}"
            f"Device {env.get('device')}, driver {env.get('driver') or '-'}, torch {env.get('torch')} "
            f"(CUDA {env.get('cuda')}), Python {env.get('python')}, commit {env.get('commit') or '-'}, {env.get('date')}."
        )
        if src := env.get("artifacts_source"):
            lines.append(
                f"Artifacts compiled by prepare.sh at commit {src.get('commit')}"
                f"{' with uncommitted changes' if src.get('uncommitted_changes') else ''}, {src.get('prepared')} "
                f"(runtime sources {src.get('runtime_digest')})."
            )
        defaults = env.get("torch_tf32_defaults", {})
        lines.append(
            f"PyTorch's own defaults here: cudnn.allow_tf32={defaults.get('cudnn')}, "
            f"cuda.matmul.allow_tf32={defaults.get('matmul')} (TF32 for cuDNN convolutions only); "
            "every PyTorch row below sets both flags explicitly to its precision mode."
        )
    if ceil:
        lines.append(
            f"Ceilings ({ceil['source']}): copy {ceil['bytes_per_s'] / 1e9:.0f} GB/s, FP32 "
            f"{ceil['fp32_flops'] / 1e12:.1f} TFLOP/s, TF32 {ceil['tf32_flops'] / 1e12:.1f} TFLOP/s, "
            f"launch {ceil['launch_s'] * 1e6:.2f} us."
        )
    if end:
        lines.append(f"Run complete in {end['t_s']:.0f} s ({end['summary']}).")
    else:
        last = records[-1]["t_s"] if records else 0
        lines.append(
            f"**Run cut short** (no end record; last record at {last:.0f} s): the rows below are all it measured."
        )
    if bad_lines:
        lines.append(f"{bad_lines} unreadable line(s) of results.jsonl ignored (a write cut by the kill).")
    lines += ["", "## Correctness (each artifact once, against PyTorch in strict FP32)", ""]
    lines += [
        "| # | model | shape | graph | system | precision | status | rel. L2 (tolerance) | launches (plan) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r.get("measure") != "correctness":
            continue
        lines.append(
            f"| {r['seq']} | {r['model']} | {'x'.join(map(str, r['shape']))} | {r['graph']} | {r['system']} | "
            f"{r['precision']} | {status_text(r)} | {rel_text(r)} | {fmt(r.get('launches'), 'd')} |"
        )
    errors = [r for r in records if r["kind"] == "step_error"]
    if errors:
        lines += ["", "## Measurements that broke outside a row", ""]
        lines += [f"- #{r['seq']} ({r['stage']}): {r['error']}" for r in errors]
    lines += ["", "## Timings (in order of importance)", ""]
    lines += [
        (
            "| # | stage | model | shape | graph | system | precision | status | rel. L2 (tolerance) | "
            "median ms (p10-p90) | FPS | kernel-busy ms (%) | launches | H200 predicted ms | floor ms | measured/floor |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r.get("measure") != "timing":
            continue
        med = r.get("median_ms")
        lat = f"{med:.3f} ({r['p10_ms']:.3f}-{r['p90_ms']:.3f})" if med is not None else ""
        fps = f"{1000 * r['shape'][0] / med:.1f}" if med else ""
        busy = r.get("kernel_busy_ms")
        busy_text = f"{busy:.3f} ({100 * busy / med:.0f}%)" if busy is not None and med else fmt(busy)
        ratio = f"{med / r['floor_ms']:.1f}x" if med and r.get("floor_ms") else ""
        lines.append(
            f"| {r['seq']} | {r['stage']} | {r['model']} | {'x'.join(map(str, r['shape']))} | {r['graph']} | "
            f"{r['system']} | {r['precision']} | {status_text(r)} | {rel_text(r)} | {lat} | {fps} | {busy_text} | "
            f"{fmt(r.get('launches'), 'd')} | {fmt(r.get('predicted_h200_ms'))} | {fmt(r.get('floor_ms'))} | {ratio} |"
        )
    lines += slowest_steps(rows)
    lines += conv_rates(rows)
    lines += [
        "",
        (
            "Precision: FP32 = strict (torch.backends.cudnn.allow_tf32 and torch.backends.cuda.matmul.allow_tf32 "
            "both False); TF32 = both True. gpuopt computes in the row's precision "
            "(gpuopt-compile --gpu-precision): FP32 on the CUDA cores; TF32 rows run their workgroup-tiled "
            "convolutions and linears on TF32 tensor cores (mma.sync), the other generated kernels in FP32. The "
            "graph 'optimized, cuDNN/cuBLASLt' rows run their convolutions and linears through those libraries in the "
            "row's precision (gpuopt-compile --gpu-conv=library --gpu-precision). "
            f"Tolerance of the relative L2 error against strict-FP32 PyTorch: FP32 "
            f"{TOLERANCE['FP32']:g}, TF32 {TOLERANCE['TF32']:g}; a row over it is FAILED."
        ),
        (
            "Kernel-busy: the summed time of the GPU's kernels in one forward, from a profiling pass separate from "
            "the timed runs: PyTorch rows torch.profiler's CUDA kernel (and memcpy/memset) time; gpuopt rows "
            "gpuopt-cuda-run --profile, each launch alone between two events and waited for (median of the passes; "
            "the CUDA-graph row shows the same kernels' time). Launches: gpuopt the plan's launches per forward; "
            "PyTorch the GPU ops the profiler saw in one forward."
        ),
        (
            "H200 predicted: the cost model's (prepare.sh, seg-cost-report device=h200; FP32, gpuopt TF32 rows "
            "precision=tf32): gpuopt rows their graph compiled with the row's --gpu-conv route (generated kernels "
            "by their own workgroup tiling, split-K included; library calls), eager rows the exported graph eager, "
            "torch.compile rows the exported graph compiled (gpu-conv=model: library tiles). "
            "Floor: the roofline floor of the model at that shape, sum over the optimized graph's ops of "
            "max(FLOPs/peak, bytes/bandwidth) plus one launch per conv/linear (not the artifact's launch count), "
            "with the ceilings above (TF32 rows: the TF32 peak for the convs/linears); measured/floor = median/floor."
        ),
    ]
    return "\n".join(lines) + "\n"


SLOWEST_STEPS = 6
#: Threads of a workgroup-tiled block (kWorkgroupTileThreads).
TILE_THREADS = 256


def measure_convs(e: dict[str, Any], step_ms: list[float]) -> list[dict[str, Any]]:
    """The manifest's generated workgroup-tiled convolutions and linears of
    row ``e``, each with the --profile time of its plan step: the step made
    of the op's source with blocks of 256 threads to spare for the op's
    tiling (parts included), the first such in plan order. A step may hold
    several independent tiled products (--cuda-workgroup-tile-fuse-nests=
    false shares a launch among them): it counts when their blocks fill it
    exactly, each op taking the step's time in proportion to its FLOPs. A
    split's second kernel, which adds the parts, is not counted. The
    measured efficiency is the one the cost model's
    generated_compute_efficiency stands for: FLOPs / (time · peak · the
    tiling's utilization of the SMs); unmatched ops have none."""
    peak = e["cost_device"]["tf32_flops" if e.get("gpuopt_precision") == "TF32" else "fp32_flops"]
    sources = e.get("step_sources") or [[loc] for _, _, _, loc in e["steps"]]
    left = [blocks if threads == TILE_THREADS else 0 for _, blocks, threads, _ in e["steps"]]
    holders: dict[int, list[dict[str, Any]]] = {}
    out = []
    for c in e.get("convs", []):
        m = dict(c)
        out.append(m)
        step = next((i for i in range(len(left)) if c["loc"] in sources[i] and left[i] >= c["blocks"]), None)
        if step is not None:
            left[step] -= c["blocks"]
            holders.setdefault(step, []).append(m)
    for step, ops in holders.items():
        if left[step] != 0 or step_ms[step] <= 0:
            continue
        flops = sum(m["flops"] for m in ops)
        for m in ops:
            ms = step_ms[step] * m["flops"] / flops
            t = ms * 1e-3
            m |= {"step": step, "ms": ms, "flops_per_s": m["flops"] / t}
            m["efficiency"] = m["flops"] / (t * peak * m["utilization"])
    return out


def weighted_efficiency(ops: list[dict[str, Any]]) -> tuple[float, float]:
    """The measured ops' (measure_convs: those with "ms") sum of time x
    efficiency and sum of time: their ratio is the efficiency that makes the
    cost model's time of those ops their measured time."""
    matched = [c for c in ops if "ms" in c]
    return sum(c["ms"] * c["efficiency"] for c in matched), sum(c["ms"] for c in matched)


def conv_rates(rows: list[dict[str, Any]]) -> list[str]:
    """Per optimized gpuopt row, its generated convolutions' measured rates and
    the time-weighted efficiency against the cost model's assumption."""
    lines: list[str] = []
    for r in rows:
        convs = r.get("convs")
        if not convs or not r.get("graph", "").startswith("optimized"):
            continue
        if not lines:
            lines += [
                "",
                "## Generated convolutions and linears (workgroup tiles): measured rates",
                "",
                (
                    "Each op's tiled kernel (its plan step by source and blocks; --profile median). Efficiency: "
                    "FLOPs / (time x the cost model's peak of the row's precision x the tiling's utilization of "
                    "the SMs), what data/devices.json's generated_compute_efficiency stands for; 'fitted' is "
                    "its time-weighted mean over the row's matched ops."
                ),
                "",
                "| # | row | matched | fitted efficiency (model) | slowest: source, output, tile, parts, us, TFLOP/s, eff. |",
                "|---|---|---|---|---|",
            ]
        matched = [c for c in convs if "ms" in c]
        ideal, total = weighted_efficiency(matched)
        fitted = f"{ideal / total:.3f}" if total > 0 else ""
        model = r.get("generated_efficiency")
        slow = sorted(matched, key=lambda c: -c["ms"])[:3]
        slow_text = "; ".join(
            f"{c['loc']} {c['type']} {c['tile'][0]}x{c['tile'][1]} ({c['tile'][2]}x{c['tile'][3]}/thread), "
            f"{c['splits']}, {1e3 * c['ms']:.1f}, {c['flops_per_s'] / 1e12:.2f}, {c['efficiency']:.2f}"
            for c in slow
        )
        lines.append(
            f"| {r['seq']} | {r['row']} ({r['precision']}) | {len(matched)} of {len(convs)} | "
            f"{fitted} ({fmt(model, '.3f')}) | {slow_text} |"
        )
    return lines


def slowest_steps(rows: list[dict[str, Any]]) -> list[str]:
    """The SLOWEST_STEPS steps of each profiled gpuopt row of an optimized
    graph (not the exported graphs and ablations), by their --profile time."""
    lines: list[str] = []
    for r in rows:
        steps, ms = r.get("steps"), r.get("step_ms")
        if not steps or not ms or not r.get("graph", "").startswith("optimized"):
            continue
        if not lines:
            lines += [
                "",
                f"## Slowest steps of the optimized gpuopt rows ({SLOWEST_STEPS} per row; --profile, median per launch)",
                "",
                "| # | row | step | kernel | blocks x threads | source | us | % of kernel-busy |",
                "|---|---|---|---|---|---|---|---|",
            ]
        busy = sum(ms) or 1.0
        order = sorted(range(len(ms)), key=lambda i: -ms[i])[:SLOWEST_STEPS]
        for i in order:
            name, blocks, threads, loc = steps[i]
            lines.append(
                f"| {r['seq']} | {r['row']} ({r['precision']}) | {i} | {name} | {blocks} x {threads} | {loc} | "
                f"{1e3 * ms[i]:.1f} | {100 * ms[i] / busy:.0f}% |"
            )
    return lines


def status_text(r: dict[str, Any]) -> str:
    if r["status"] in ("skipped", "error"):
        return f"{r['status']}: {r.get('reason', '')}".replace("|", "/")
    return r["status"]


def rel_text(r: dict[str, Any]) -> str:
    if r.get("rel_l2") is None:
        return ""
    tol = r.get("tolerance")
    text = f"{r['rel_l2']:.1e}" + (f" ({tol:g})" if tol is not None else "")
    if r.get("rel_l2_fp64") is not None:
        text += f"; vs FP64 {r['rel_l2_fp64']:.1e}"
    return text


def write_markdown(out: Path) -> list[dict[str, Any]]:
    records, bad = read_jsonl(out / "results.jsonl")
    tmp = out / "results.md.tmp"
    tmp.write_text(render_markdown(records, bad))
    tmp.replace(out / "results.md")
    return records


def roofline(records: list[dict[str, Any]], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing: no roofline.png")
        return
    ceil = next((r for r in records if r["kind"] == "ceilings"), None)
    env = next((r for r in records if r["kind"] == "environment"), {})
    if ceil is None:
        return
    fig, ax = plt.subplots(figsize=(8, 5.5))
    xs = np.logspace(-2, 3, 200)
    bw = ceil["bytes_per_s"]
    ax.plot(xs, np.minimum(xs * bw, ceil["fp32_flops"]), "k-", label="FP32 roofline")
    ax.plot(xs, np.minimum(xs * bw, ceil["tf32_flops"]), "k:", label="TF32 roofline")
    for r in records:
        if r["kind"] != "row" or r.get("measure") != "timing" or not r.get("median_ms") or not r.get("flops"):
            continue
        ai = r["flops"] / max(r["bytes"], 1)
        ax.scatter(
            ai,
            r["flops"] / (r["median_ms"] * 1e-3),
            s=18,
            marker="x" if r["precision"] == "TF32" else "o",
            label=f"{r['row']} / {r['system']} / {r['precision']}",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte, cost model)")
    ax.set_ylabel("achieved FLOP/s")
    ax.set_title(
        ("DRY RUN: " if env.get("dry_run") else "") + f"{env.get('device', '')}\nceilings: {ceil['source']}",
        fontsize=8,
    )

    ax.legend(fontsize=5, ncol=2)
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=150)
    plt.close(fig)
    tmp.replace(path)


#: The graphs whose generated kernels stand for data/devices.json's
#: generated_compute_efficiency of a precision: the optimized rows with
#: gpuopt-compile's default tiling options (not the ablations, the library
#: or the auto rows).
FIT_GRAPHS = {"optimized": "fp32", "optimized, TF32 tensor cores": "tf32"}


def fit_efficiencies(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per precision ("fp32", "tf32"), the generated_compute_efficiency that
    makes the cost model's time of the matched workgroup-tiled convolutions
    and linears (measure_convs) of the FIT_GRAPHS rows equal to their
    measured time: the sum of FLOPs / (peak x utilization) over the sum of
    times (each op weighted by its time, as the per-row 'fitted' column);
    with the rows and the number of ops it comes from."""
    sums: dict[str, dict[str, Any]] = {}
    for r in records:
        key = FIT_GRAPHS.get(r.get("graph", ""))
        if (
            key is None
            or r["kind"] != "row"
            or r.get("measure") != "timing"
            or r.get("system") != "gpuopt"
            or r.get("status") != "ok"
        ):
            continue
        matched = [c for c in r.get("convs") or [] if "ms" in c]
        if not matched:
            continue
        acc = sums.setdefault(key, {"ideal_ms": 0.0, "ms": 0.0, "ops": 0, "rows": []})
        ideal, total = weighted_efficiency(matched)
        acc["ideal_ms"] += ideal
        acc["ms"] += total
        acc["ops"] += len(matched)
        acc["rows"].append(r["row"])
    return {
        k: {"efficiency": v["ideal_ms"] / v["ms"], "ops": v["ops"], "rows": v["rows"]}
        for k, v in sums.items()
        if v["ms"] > 0
    }


def fit(out: Path, apply: Path | None, device_id: str) -> int:
    """Prints the fitted efficiencies of OUT/results.jsonl as JSON; with
    `apply`, writes them into that device file's `device_id` entry (a GPU
    run's only: a dry run's times are the emulator's)."""
    path = out / "results.jsonl"
    if not path.is_file():
        print(f"bench: error: {path}: no such file (nothing was measured into {out})", file=sys.stderr)
        return 1
    records = read_jsonl(path)[0]
    env = next((r for r in records if r["kind"] == "environment"), {})
    fits = fit_efficiencies(records)
    print(
        json.dumps(
            {
                "device": env.get("device"),
                "date": env.get("date"),
                "dry_run": env.get("dry_run"),
                "generated_compute_efficiency": fits,
            },
            indent=2,
        )
    )
    if apply is None:
        return 0
    if not fits:
        print(
            f"bench: error: {path}: no timed optimized gpuopt row with measured convolutions to fit",
            file=sys.stderr,
        )
        return 1
    if env.get("dry_run") is not False:
        print(
            f"bench: error: {path}: a dry run (or a run without its environment record): its times are the emulator's, not a GPU's; nothing written",
            file=sys.stderr,
        )
        return 1
    # The cost model takes a fraction of the peak; more means ops matched to
    # the wrong steps (or times that are not the kernels').
    wrong = {k: v["efficiency"] for k, v in fits.items() if not 0 < v["efficiency"] <= 1}
    if wrong:
        print(
            f"bench: error: {path}: fitted efficiencies outside (0, 1]: "
            f"{', '.join(f'{k} {v:.3g}' for k, v in sorted(wrong.items()))}; nothing written",
            file=sys.stderr,
        )
        return 1
    try:
        document = json.loads(apply.read_text())
        entry = document["devices"][device_id]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as e:
        print(f"bench: error: {apply}: no device '{device_id}' to update ({e})", file=sys.stderr)
        return 1
    # The entry's model ("NVIDIA H200 SXM ...": H200) must be the measured GPU's.
    model = (
        (str(entry.get("name", "")).split() + [""])[1]
        if str(entry.get("name", "")).startswith("NVIDIA")
        else ""
    )
    if not model or model.lower() not in str(env.get("device", "")).lower():
        print(
            f"bench: error: {path}: measured on '{env.get('device')}', not on {device_id}'s "
            f"'{entry.get('name')}': name the device's entry with --device-id (add one if it has none); nothing written",
            file=sys.stderr,
        )
        return 1
    from gpuopt.calibrate import write_entry

    efficiency = dict(entry.get("generated_compute_efficiency", {}))
    efficiency |= {k: float(f"{v['efficiency']:.3g}") for k, v in fits.items()}
    counts = ", ".join(f"{k}: {v['ops']} ops of {len(v['rows'])} rows" for k, v in sorted(fits.items()))
    note = (
        f"generated_compute_efficiency {', '.join(sorted(fits))} fitted by benchmarks/gpu/bench.py --fit on "
        f"{env.get('device')}, {env.get('date')} ({counts})"
    )
    # A fit replaces the note of the one before.
    kept = [
        part
        for part in str(entry.get("source", "")).split("; ")
        if part and "fitted by benchmarks/gpu/bench.py --fit" not in part
    ]
    entry = entry | {"generated_compute_efficiency": efficiency, "source": "; ".join([*kept, note])}
    write_entry(apply, device_id, entry)
    log(f"wrote {device_id}'s generated_compute_efficiency {efficiency} to {apply}")
    return 0


def render(out: Path) -> int:
    path = out / "results.jsonl"
    if not path.is_file():
        print(f"bench: error: {path}: no such file (nothing was measured into {out})", file=sys.stderr)
        return 1
    records = write_markdown(out)
    roofline(records, out / "roofline.png")
    rows = [r for r in records if r["kind"] == "row"]
    log(f"rendered {len(rows)} rows of {path} into {out / 'results.md'}")
    return 0


# --- measuring ----------------------------------------------------------------


class Clock:
    """The whole run's deadline and the current stage's."""

    def __init__(self, budget: float) -> None:
        self.deadline = START + max(budget - RESERVE_S, 0.0)
        self.stage_deadline = self.deadline
        self.stage = ""

    def begin(self, stage: str, cap: float) -> None:
        self.stage = stage
        self.stage_deadline = min(self.deadline, time.monotonic() + cap)

    def left(self) -> float:
        return self.stage_deadline - time.monotonic()

    def why_not(self, need: float) -> str | None:
        """The reason to skip a measurement that needs `need` seconds, if any."""
        left = self.left()
        if left >= need:
            return None
        if self.stage_deadline < self.deadline:
            return f"the {self.stage} stage's cap: {max(left, 0):.0f} s left, needs {need:.0f} s"
        return f"the budget: {max(left, 0):.0f} s left, needs {need:.0f} s"


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """Dense F32 safetensors (the format gpuopt's runtime reads)."""
    header: dict[str, Any] = {}
    offset = 0
    blobs = []
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        blobs.append(a.tobytes())
        offset += a.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.writelines(blobs)


def rel_l2(a: np.ndarray, e: np.ndarray) -> float:
    a64, e64 = np.asarray(a, np.float64), np.asarray(e, np.float64)
    if a64.shape != e64.shape or not np.all(np.isfinite(a64)):
        return float("inf")
    return float(np.linalg.norm(a64 - e64) / max(np.linalg.norm(e64), 1e-30))


def verdict(err: float, precision: str) -> tuple[str, float]:
    tol = TOLERANCE[precision]
    return ("ok" if err <= tol else "FAILED"), tol


def set_precision(precision: str) -> None:
    import torch

    tf32 = precision == "TF32"
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32


def time_fn(fn: Callable[[], Any], device: str, runs: int, warmup: int) -> list[float]:
    """Milliseconds per call: CUDA events around each call on a GPU, the
    host clock on the CPU (dry run)."""
    import torch

    for _ in range(warmup):
        fn()
    out = []
    if device == "cuda":
        torch.cuda.synchronize()
        for _ in range(runs):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            out.append(start.elapsed_time(stop))
    else:
        for _ in range(runs):
            t = time.perf_counter()
            fn()
            out.append((time.perf_counter() - t) * 1e3)
    return out


def summary(ms: list[float]) -> dict[str, float]:
    q = np.percentile(ms, [10, 50, 90])
    return {"p10_ms": float(q[0]), "median_ms": float(q[1]), "p90_ms": float(q[2]), "runs": len(ms)}


def torch_busy(fn: Callable[[], Any], device: str) -> dict[str, Any]:
    """Kernel time and GPU op count of one call, from torch.profiler (a pass
    of its own, after the timed runs); on the CPU (dry run) the ops' self
    CPU time instead."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    try:
        if device == "cuda":
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                fn()
                torch.cuda.synchronize()
            ops = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
            return {
                "kernel_busy_ms": sum(e.device_time_total for e in ops) * 1e-3,
                "launches": len(ops),
                "busy_source": "torch.profiler CUDA kernels",
            }
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            fn()
        return {
            "kernel_busy_ms": sum(e.self_cpu_time_total for e in prof.key_averages()) * 1e-3,
            "launches": None,
            "busy_source": "torch.profiler CPU op self time (dry run)",
        }
    except Exception as e:  # noqa: BLE001 - a profiler failure costs the column, not the row
        return {"kernel_busy_ms": None, "launches": None, "busy_source": f"profiler failed: {e}"}


def build_model(name: str) -> Any:
    """Zoo model ``name`` with seeded random weights, BatchNorm statistics,
    norm scales and biases (gpuopt.randomize, pure torch): under the default
    initialisation a wrong BatchNorm fold or bias would go unseen. The
    artifacts take their weights at load, so prepare.sh's export need not
    use the same values."""
    import torch

    from gpuopt import models
    from gpuopt.randomize import randomize

    torch.manual_seed(0)
    return randomize(models.build(name).eval(), seed=0)


def measure_ceilings() -> dict[str, float]:
    """Device-to-device copy bandwidth, matmul rates and the empty-launch cost."""
    import torch

    def copy_rate() -> float:
        n = 1 << 28  # 1 GiB of float32
        a = torch.rand(n, device="cuda")
        b = torch.empty_like(a)
        ms = statistics.median(time_fn(lambda: b.copy_(a), "cuda", runs=20, warmup=3))
        return 2 * a.numel() * 4 / (ms * 1e-3)

    bandwidth = copy_rate()
    torch.cuda.empty_cache()
    m = torch.rand(8192, 8192, device="cuda")
    k = torch.rand(8192, 8192, device="cuda")
    rates = {}
    for name in ("FP32", "TF32"):
        set_precision(name)
        ms = statistics.median(time_fn(lambda: m @ k, "cuda", runs=10, warmup=3))
        rates[name] = 2 * 8192**3 / (ms * 1e-3)
    set_precision("FP32")
    launches = 2000

    def empty() -> None:
        for _ in range(launches):
            torch.cuda._sleep(0)

    launch_s = statistics.median(time_fn(empty, "cuda", runs=5, warmup=1)) * 1e-3 / launches
    torch.cuda.empty_cache()
    return {
        "source": "measured on this GPU",
        "bytes_per_s": bandwidth,
        "fp32_flops": rates["FP32"],
        "tf32_flops": rates["TF32"],
        "launch_s": launch_s,
    }


def floor_ms(entry: dict[str, Any], ceil: dict[str, Any], precision: str) -> float:
    """sum over ops of max(FLOPs/peak, bytes/bandwidth), plus one launch per
    op that multiplies-accumulates (conv/linear)."""
    t = 0.0
    for flops, nbytes, mac in entry["floor_ops"]:
        peak = ceil["tf32_flops"] if precision == "TF32" and mac else ceil["fp32_flops"]
        t += max(flops / peak, nbytes / ceil["bytes_per_s"]) + (ceil["launch_s"] if mac else 0.0)
    return t * 1e3


def stop(proc: subprocess.Popen, group: bool) -> None:
    """Kills `proc` (with `group`, its whole process group) and reaps it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    proc.wait()


def run_child(cmd: list[str], timeout: float, group: bool = False) -> tuple[int | None, str, str]:
    """Runs `cmd`, killed at `timeout`; (None, ...) if it timed out. With
    `group`, in a process group of its own, killed whole (torch.compile's
    worker processes included; the child dies with us by PR_SET_PDEATHSIG);
    without, in ours, so that a kill of the benchmark's group ends it too."""
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, process_group=0 if group else None
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(proc, group)
        return None, "", ""
    except BaseException:
        stop(proc, group)
        raise
    return proc.returncode, out, err


def last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "no message"


def compile_child(args: argparse.Namespace) -> int:
    """Times torch.compile(mode) in this (separate, killable) process."""
    import torch

    # Die with the parent: a killed benchmark leaves no compile running.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    device = "cpu" if args.dry_run else "cuda"
    shape = [int(s) for s in args.shape.split(",")]
    model = build_model(args.model).to(device)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1)).to(device)
    with torch.no_grad():
        set_precision("FP32")
        ref = model(x).cpu().numpy()
        ref64 = copy.deepcopy(model).double()(x.double()).cpu().numpy()
        set_precision(args.precision)
        start = time.perf_counter()
        fn = torch.compile(model, mode=args.mode)
        # Copied out at once: under max-autotune's CUDA graphs the next call
        # overwrites this call's output.
        y = fn(x).cpu().numpy()
        compile_s = time.perf_counter() - start
        ms = time_fn(lambda: fn(x), device, args.runs, args.warmup)
        busy = torch_busy(lambda: fn(x), device)
    result = {
        "compile_s": compile_s,
        **summary(ms),
        **busy,
        "rel_l2": rel_l2(y, ref),
        "rel_l2_fp64": rel_l2(y, ref64),
    }
    Path(args.result).write_text(json.dumps(result))
    return 0


class Bench:
    def __init__(self, args: argparse.Namespace, manifest: list[dict[str, Any]]) -> None:
        self.args = args
        self.dry = args.dry_run
        self.device = "cpu" if self.dry else "cuda"
        runs, warmup, passes = (3, 1, 1) if self.dry else (50, 10, 5)
        self.runs = runs if args.runs is None else args.runs
        self.warmup = warmup if args.warmup is None else args.warmup
        self.passes = passes if args.profile_passes is None else args.profile_passes
        self.manifest = manifest
        try:
            self.source = json.loads((args.artifacts / "source.json").read_text())
        except (OSError, json.JSONDecodeError):
            self.source = None  # run.sh refuses such a directory; bench.py alone records none
        self.clock = Clock(args.budget)
        self.results = Results(args.out)
        self.work = Path(tempfile.mkdtemp(prefix="gpuopt-bench-"))
        self.cache: dict[tuple[str, tuple[int, ...]], dict[str, Any]] = {}
        self.ceil: dict[str, Any] = {}
        # Kernel-busy ms of each gpuopt row's profile (its CUDA-graph row runs the same kernels).
        self.busy: dict[str, float | None] = {}

    # The manifest entry a PyTorch row of (model, shape) takes its counts from.
    def entry(self, model: str, shape: list[int], graph: str) -> dict[str, Any] | None:
        for e in self.manifest:
            if e["model"] == model and e["shape"] == shape and e["graph"] == graph:
                return e
        return None

    def floor_entry(self, model: str, shape: list[int]) -> dict[str, Any] | None:
        return self.entry(model, shape, "optimized") or self.entry(model, shape, "exported")

    def counts(
        self, e: dict[str, Any] | None, model: str, shape: list[int], precision: str
    ) -> dict[str, Any]:
        f = self.floor_entry(model, shape)
        out: dict[str, Any] = {"floor_ms": floor_ms(f, self.ceil, precision) if f and self.ceil else None}
        if e:
            out |= {"flops": e["flops"], "bytes": e["bytes"], "params": e["params"]}
        return out

    def prepare(self, model: str, shape: list[int]) -> dict[str, Any]:
        """Weights, input and the references of (model, shape): PyTorch in
        strict FP32 (what the tolerances apply to) and in float64 (shown
        beside it: whether an error over the tolerance is the reference's)."""
        import torch

        key = (model, tuple(shape))
        if key in self.cache:
            return self.cache[key]
        net = build_model(model)
        weights = self.work / f"{model}.safetensors"
        if not weights.exists():
            sd = {k: v.detach().numpy() for k, v in net.state_dict().items() if v.is_floating_point()}
            write_safetensors(weights, sd)
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
        xpath = self.work / f"{model}-{'x'.join(map(str, shape))}.npy"
        np.save(xpath, x.numpy())
        net = net.to(self.device)
        with torch.no_grad():
            set_precision("FP32")
            ref = net(x.to(self.device)).cpu().numpy()
            # A second forward's time (the first pays for lazy loading).
            start = time.monotonic()
            net(x.to(self.device)).cpu()
            forward_s = time.monotonic() - start
            ref64 = copy.deepcopy(net).double()(x.to(self.device).double()).cpu().numpy()
        self.cache[key] = {
            "net": net,
            "x": x.to(self.device),
            "weights": weights,
            "xpath": xpath,
            "ref": ref,
            "ref64": ref64,
            "forward_s": forward_s,
        }
        return self.cache[key]

    def row(self, record: dict[str, Any]) -> None:
        record = {"stage": self.clock.stage} | record
        self.results.add("row", record)
        med, floor = record.get("median_ms"), record.get("floor_ms")
        if med is not None:
            what = f" (median {med:.4g} ms" + (f", {med / floor:.1f}x the floor)" if floor else ")")
        elif record.get("rel_l2") is not None:
            what = f" (rel. L2 {record['rel_l2']:.2e})"
        else:
            what = ""
        log(
            f"[{record['stage']}] {record['row']} / {record['system']} / {record['precision']} / {record['measure']}: "
            f"{status_text(record)}{what}"
        )

    # -- gpuopt rows ------------------------------------------------------

    def gpuopt(self, name: str, measure: str, graph: bool = False) -> None:
        e = next((m for m in self.manifest if m["row"] == name), None)
        if e is None:
            return
        system = "gpuopt + CUDA graph" if graph else "gpuopt"
        base = {
            "row": name,
            "model": e["model"],
            "shape": e["shape"],
            "graph": e["graph"],
            "system": system,
            # The artifact's precision (prepare.sh: --gpu-precision): that of its
            # tensor-core tiles and cuDNN/cuBLASLt steps.
            "precision": e.get("gpuopt_precision", "FP32"),
            "measure": measure,
            "device": "emulator (dry run)" if self.dry else "cuda",
            "launches": e["launches_per_forward"],
            "predicted_h200_ms": e["predicted_h200_s"] * 1e3,
            # The cost model's generated_compute_efficiency of the row's precision.
            "generated_efficiency": e.get("generated_efficiency"),
        } | self.counts(e, e["model"], e["shape"], e.get("gpuopt_precision", "FP32"))
        if measure == "timing" and graph and self.dry:
            self.row(base | {"status": "skipped", "reason": "dry run: CUDA graphs need a GPU"})
            return
        need = 5.0
        if why := self.clock.why_not(need):
            self.row(base | {"status": "skipped", "reason": why})
            return
        p = self.prepare(e["model"], e["shape"])
        # Preparing (the model, its weights, the references) took some of it.
        if why := self.clock.why_not(2.0):
            self.row(base | {"status": "skipped", "reason": why})
            return
        with tempfile.TemporaryDirectory() as tmp:
            y, js = Path(tmp) / "y.npy", Path(tmp) / "r.json"
            cmd = [
                str(self.args.runtime),
                str(self.args.artifacts / e["artifact"]),
                f"--weights={p['weights']}",
            ]
            cmd += [f"--input=@{p['xpath']}", f"--output=@{y}"]
            cmd += ["--emulate"] if self.dry else []
            if measure == "timing":
                cmd += [f"--runs={self.runs}", f"--warmup={self.warmup}", f"--json={js}"]
                cmd += ["--graph"] if graph else [f"--profile={self.passes}"]
            timeout = self.clock.left()
            rc, _, err = run_child(cmd, timeout)
            if rc is None:
                self.row(base | {"status": "skipped", "reason": f"did not finish within {timeout:.0f} s"})
                return
            if rc != 0:
                self.row(base | {"status": "error", "reason": last_line(err)})
                return
            out = np.load(y)
            err_l2 = rel_l2(out, p["ref"])
            status, tol = verdict(err_l2, base["precision"])
            r = base | {
                "status": status,
                "rel_l2": err_l2,
                "tolerance": tol,
                "rel_l2_fp64": rel_l2(out, p["ref64"]),
            }
            if measure == "timing":
                j = json.loads(js.read_text())
                r |= {k: j[k] for k in ("median_ms", "p10_ms", "p90_ms", "runs")}
                r["launches"] = j["launches"]
                if graph:
                    # The same kernels: the profile of the plain row.
                    r["kernel_busy_ms"] = self.busy.get(name)
                    r["busy_source"] = "gpuopt-cuda-run --profile of the row without a graph"
                else:
                    r["kernel_busy_ms"] = j["kernel_ms_sum"]
                    # Per step of the plan (median over the passes), with the
                    # manifest's [kernel, blocks, threads, source] of each:
                    # which kernels the time goes to.
                    r["step_ms"] = j["step_ms"]
                    if "steps" in e and len(e["steps"]) == len(j["step_ms"]):
                        r["steps"] = e["steps"]
                        r["convs"] = measure_convs(e, j["step_ms"])
                    r["busy_source"] = (
                        "gpuopt-cuda-run --profile (host clock, dry run)"
                        if self.dry
                        else ("gpuopt-cuda-run --profile (events around each launch, waited for)")
                    )
                    self.busy[name] = j["kernel_ms_sum"]
            self.row(r)

    # -- PyTorch rows ------------------------------------------------------

    def torch_row(self, model: str, shape: list[int], system: str, precision: str, predicted: str) -> dict:
        """The fields every PyTorch row has: the cost model's H200 prediction
        (``predicted``, a key of the exported graph's manifest entry) and counts."""
        e = self.entry(model, shape, "exported") or self.floor_entry(model, shape)
        return {
            "row": f"{model} {'x'.join(map(str, shape))}",
            "model": model,
            "shape": shape,
            "graph": "PyTorch module",
            "system": system,
            "precision": precision,
            "measure": "timing",
            "device": self.device,
            "predicted_h200_ms": e[predicted] * 1e3
            if e and e["graph"] == "exported" and predicted in e
            else None,
        } | self.counts(e, model, shape, precision)

    def eager(self, model: str, shape: list[int], precision: str) -> None:
        import torch

        base = self.torch_row(model, shape, "PyTorch eager", precision, "predicted_eager_h200_s")
        if why := self.clock.why_not(5.0):
            self.row(base | {"status": "skipped", "reason": why})
            return
        p = self.prepare(model, shape)
        net, x = p["net"], p["x"]
        # The row runs in this process: skip it unless its forwards fit
        # (the reference's forward says how long one takes).
        forwards = self.runs + self.warmup + 2
        if why := self.clock.why_not(forwards * p["forward_s"] + 1.0):
            self.row(
                base
                | {"status": "skipped", "reason": f"{why} ({forwards} forwards of {p['forward_s']:.2f} s)"}
            )
            return
        with torch.no_grad():
            set_precision(precision)
            y = net(x).cpu().numpy()
            s = summary(time_fn(lambda: net(x), self.device, self.runs, self.warmup))
            busy = torch_busy(lambda: net(x), self.device)
            set_precision("FP32")
        err_l2 = rel_l2(y, p["ref"])
        status, tol = verdict(err_l2, precision)
        extra = {"status": status, "rel_l2": err_l2, "tolerance": tol, "rel_l2_fp64": rel_l2(y, p["ref64"])}
        self.row(base | s | busy | extra)
        if self.device == "cuda":
            torch.cuda.empty_cache()

    def compiled(self, model: str, shape: list[int], mode: str, precision: str, cap: float) -> None:
        base = self.torch_row(
            model, shape, f'torch.compile(mode="{mode}")', precision, "predicted_model_h200_s"
        )
        timeout = min(cap, self.clock.left())
        if why := self.clock.why_not(min(cap, 20.0)):
            self.row(base | {"status": "skipped", "reason": why})
            return
        with tempfile.TemporaryDirectory() as tmp:
            result = Path(tmp) / "r.json"
            cmd = [
                sys.executable,
                __file__,
                "--compile-child",
                "--model",
                model,
                "--shape",
                ",".join(map(str, shape)),
            ]
            cmd += ["--mode", mode, "--precision", precision, "--result", str(result)]
            cmd += ["--runs", str(self.runs), "--warmup", str(self.warmup)] + (
                ["--dry-run"] if self.dry else []
            )
            rc, _, err = run_child(cmd, timeout, group=True)
            if rc is None:
                cause = "the cap" if timeout >= cap - 0.5 else "what was left of the stage/budget"
                self.row(
                    base
                    | {
                        "status": "skipped",
                        "reason": f"torch.compile(mode={mode}) did not compile and run within {timeout:.0f} s ({cause})",
                    }
                )
                return
            if rc != 0 or not result.exists():
                self.row(base | {"status": "error", "reason": last_line(err)})
                return
            r = json.loads(result.read_text())
        status, tol = verdict(r["rel_l2"], precision)
        self.row(base | r | {"status": status, "tolerance": tol})

    # -- the schedule --------------------------------------------------------

    def stage(self, name: str, steps: list[Callable[[], None]]) -> None:
        if name not in self.args.stages:
            self.results.add("stage", {"stage": name, "skipped": "not in --stages"})
            log(f"stage {name}: not in --stages")
            return
        cap = STAGE_CAPS[name] * self.args.stage_scale
        self.clock.begin(name, cap)
        left = max(min(cap, self.clock.left()), 0.0)
        self.results.add("stage", {"stage": name, "cap_s": round(left, 1)})
        log(f"stage {name}: cap {left:.0f} s")
        for step in steps:
            try:
                step()
            except Exception as e:  # noqa: BLE001 - one broken measurement must not end the run
                detail = "".join(traceback.format_exception_only(e)).strip()
                self.results.add("step_error", {"stage": name, "error": detail[:500]})
                log(f"error in stage {name}: {detail}")
        roofline(read_jsonl(self.results.path)[0], self.args.out / "roofline.png")

    def run(self) -> int:
        import torch

        env = {
            "dry_run": self.dry,
            "device": "CPU (dry run: " + (platform.processor() or platform.machine()) + ")"
            if self.dry
            else torch.cuda.get_device_name(),
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "commit": os.environ.get("GPUOPT_COMMIT", ""),
            # prepare.sh's source.json: the commit the artifacts were compiled at.
            "artifacts_source": self.source,
            "driver": "",
            "torch_tf32_defaults": {
                "cudnn": torch.backends.cudnn.allow_tf32,
                "matmul": torch.backends.cuda.matmul.allow_tf32,
            },
            "budget_s": self.args.budget,
            "runs": self.runs,
            "warmup": self.warmup,
            "profile_passes": self.passes,
        }
        if not self.dry:
            with contextlib.suppress(OSError):
                env["driver"] = subprocess.run(
                    ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                    capture_output=True,
                    text=True,
                    check=False,
                ).stdout.strip()
        self.results.add("environment", env)
        log(f"{env['device']}, driver {env['driver'] or '-'}, torch {env['torch']}")
        if self.dry:
            dev = self.manifest[0]["cost_device"]
            self.ceil = {
                "source": f"cost model's {dev['id']} datasheet numbers (dry run: no GPU to measure)",
                "bytes_per_s": dev["bytes_per_s"],
                "fp32_flops": dev["fp32_flops"],
                "tf32_flops": dev["tf32_flops"],
                "launch_s": dev["launch_s"],
            }
        else:
            try:
                self.ceil = measure_ceilings()
            except Exception as e:  # noqa: BLE001 - the floors fall back to the datasheet
                dev = self.manifest[0]["cost_device"]
                self.ceil = {
                    "source": f"cost model's {dev['id']} datasheet numbers (measuring failed: {e})",
                    "bytes_per_s": dev["bytes_per_s"],
                    "fp32_flops": dev["fp32_flops"],
                    "tf32_flops": dev["tf32_flops"],
                    "launch_s": dev["launch_s"],
                }
        self.results.add("ceilings", self.ceil)

        rows = [m["row"] for m in self.manifest]  # prepare.sh writes them by importance
        base = [m for m in self.manifest if m["shape"][0] == 1 and m["graph"] == "optimized"]
        size = (
            next((m["shape"] for m in base if m["model"] == "rolling_unet_s"), None)
            or self.manifest[0]["shape"]
        )
        opt = {m["model"]: m["row"] for m in base if m["shape"] == size}
        timed: list[str] = []

        def gp(name: str, graphs: tuple[bool, ...] = (False, True)) -> list[Callable[[], None]]:
            if not any(m["row"] == name for m in self.manifest):
                return []
            timed.append(name)
            return [lambda g=g: self.gpuopt(name, "timing", g) for g in graphs]

        models = {m["model"] for m in self.manifest}

        def torch_rows(model: str, modes: tuple[tuple[str, float], ...]) -> list[Callable[[], None]]:
            # PyTorch rows of the models prepare.sh compiled (their counts and floor).
            if model not in models:
                return []
            steps: list[Callable[[], None]] = [
                lambda p=p: self.eager(model, size, p) for p in ("FP32", "TF32")
            ]
            steps += [lambda m=m, c=c: self.compiled(model, size, m, "FP32", c) for m, c in modes]
            return steps

        autotune = self.args.autotune_cap
        compile_cap = self.args.compile_cap
        self.stage("correctness", [lambda n=n: self.gpuopt(n, "correctness") for n in rows])
        # A model's variants of its optimized graph ("optimized, TF32 tensor
        # cores", "optimized, cuDNN/cuBLASLt", "optimized, --gpu-conv=auto"),
        # in prepare.sh's order.
        variants: dict[str, list[dict[str, Any]]] = {}
        for m in self.manifest:
            if m["shape"] == size and m["graph"].startswith("optimized, "):
                variants.setdefault(m["model"], []).append(m)

        def variant_rows(model: str, library: bool) -> list[Callable[[], None]]:
            return [
                s
                for m in variants.get(model, [])
                if library or m.get("gpu_conv", "generated") == "generated"
                for s in gp(m["row"])
            ]

        # Rolling-UNet-S: its generated kernels in both precisions before
        # PyTorch (its library and auto rows, which leave the shifted
        # convolutions generated, go with the rest).
        self.stage(
            "rolling_unet_s",
            gp(opt.get("rolling_unet_s", ""))
            + variant_rows("rolling_unet_s", library=False)
            + torch_rows("rolling_unet_s", (("max-autotune", autotune), ("default", compile_cap))),
        )
        self.stage(
            "unet",
            gp(opt.get("unet", ""))
            + variant_rows("unet", library=True)
            + torch_rows("unet", (("default", compile_cap),)),
        )
        rest: list[Callable[[], None]] = []
        for model in ("unext", "unext_stripe"):
            rest += gp(opt.get(model, "")) + torch_rows(model, ())
        for name in rows:
            if name not in timed:
                rest += gp(
                    name,
                    (False,)
                    if "-only-" in name
                    or name.endswith(
                        (
                            "-deform-conv",
                            "-single-buffer",
                            "-no-prefetch",
                            "-no-async-copy",
                            "-2-stages",
                            "-4x4-threads",
                            "-no-split-k",
                        )
                    )
                    else (False, True),
                )
        later = [("unext", "default", "FP32", compile_cap), ("unext_stripe", "default", "FP32", compile_cap)]
        later += [
            ("rolling_unet_s", "max-autotune", "TF32", autotune),
            ("unet", "max-autotune", "TF32", autotune),
        ]
        later += [("unet", "max-autotune", "FP32", autotune)]
        for model, mode, precision, cap in later:
            if model in models:
                rest.append(lambda a=(model, size, mode, precision, cap): self.compiled(*a))
        self.stage("rest", rest)

        records = read_jsonl(self.results.path)[0]
        rows_done = [r for r in records if r["kind"] == "row"]
        failed = [r for r in rows_done if r["status"] in ("FAILED", "error")]
        step_errors = [r for r in records if r["kind"] == "step_error"]
        counts = {s: sum(r["status"] == s for r in rows_done) for s in ("ok", "FAILED", "error", "skipped")}
        summary_text = ", ".join(f"{n} {s}" for s, n in counts.items())
        if step_errors:
            summary_text += f"; {len(step_errors)} measurement(s) broke outside a row"
        self.results.add("end", {"summary": summary_text})
        write_markdown(self.args.out)
        roofline(read_jsonl(self.results.path)[0], self.args.out / "roofline.png")
        for r in failed:
            log(
                f"{r['status']}: {r['row']} / {r['system']} / {r['precision']}: {r.get('reason') or rel_text(r)}"
            )
        log(f"done: {len(rows_done)} rows ({summary_text}); {self.args.out / 'results.md'}")
        return 1 if failed or step_errors else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--artifacts", type=Path, help="prepare.sh's directory (manifest.json and the artifacts)")
    p.add_argument("--runtime", type=Path, help="gpuopt-cuda-run")
    p.add_argument("--out", type=Path, help="where results.jsonl, results.md and roofline.png go")
    p.add_argument("--budget", type=float, default=290, help="seconds for everything (default 290)")
    p.add_argument("--dry-run", action="store_true", help="no GPU: the emulator and PyTorch on the CPU")
    p.add_argument("--render", type=Path, metavar="OUT", help="only rebuild OUT/results.md and roofline.png")
    p.add_argument(
        "--fit",
        type=Path,
        metavar="OUT",
        help="print the generated kernels' efficiencies fitted to OUT/results.jsonl (FIT_GRAPHS rows)",
    )
    p.add_argument(
        "--apply",
        type=Path,
        metavar="DEVICES",
        help="with --fit: write them into this device file (data/devices.json)",
    )
    p.add_argument(
        "--device-id", default="h200", help="with --fit --apply: the entry to update (default h200)"
    )
    p.add_argument("--autotune-cap", type=float, default=AUTOTUNE_CAP, help="seconds for a max-autotune row")
    p.add_argument("--compile-cap", type=float, default=COMPILE_CAP, help="seconds for a default-mode row")
    p.add_argument("--stage-scale", type=float, default=1.0, help="multiplies every stage's cap")
    p.add_argument(
        "--stages",
        default=",".join(STAGES),
        help=f"comma-separated stages to run, in this order whatever the list's (default {','.join(STAGES)})",
    )
    # The torch.compile child (internal).
    p.add_argument("--compile-child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    p.add_argument("--shape", help=argparse.SUPPRESS)
    p.add_argument("--mode", help=argparse.SUPPRESS)
    p.add_argument("--precision", choices=sorted(TOLERANCE), default="FP32", help=argparse.SUPPRESS)
    p.add_argument("--runs", type=int, help="timed runs per row (default 50; dry run 3)")
    p.add_argument("--warmup", type=int, help="untimed runs before them (default 10; dry run 1)")
    p.add_argument("--profile-passes", type=int, help="gpuopt profiling passes (default 5; dry run 1)")
    p.add_argument("--result", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.apply and not args.fit:
        p.error("--apply needs --fit OUT")
    if args.render:
        return render(args.render)
    if args.fit:
        return fit(args.fit, args.apply, args.device_id)
    if args.compile_child:
        return compile_child(args)
    for flag in ("artifacts", "runtime", "out"):
        if getattr(args, flag) is None:
            p.error(f"--{flag} is required (or --render OUT)")
    if args.budget <= 0:
        p.error(f"--budget must be positive, got {args.budget:g}")
    for flag, low in (("runs", 1), ("warmup", 0), ("profile_passes", 1)):
        v = getattr(args, flag)
        if v is not None and not low <= v <= 100000:
            p.error(f"--{flag.replace('_', '-')} must be in [{low}, 100000], got {v}")
    if args.stage_scale <= 0:
        p.error(f"--stage-scale must be positive, got {args.stage_scale:g}")
    stages = [t.strip() for t in args.stages.split(",") if t.strip()]
    if not stages or any(t not in STAGES for t in stages):
        p.error(f"--stages: expected a comma-separated subset of {','.join(STAGES)}, got '{args.stages}'")
    args.stages = set(stages)
    manifest_path = args.artifacts / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        print(f"bench: error: {manifest_path}: {e} (run benchmarks/gpu/prepare.sh)", file=sys.stderr)
        return 1
    if not isinstance(manifest, list) or not manifest or not all("floor_ops" in m for m in manifest):
        print(
            f"bench: error: {manifest_path}: not a manifest of this prepare.sh (no rows with floor_ops): "
            "run benchmarks/gpu/prepare.sh again",
            file=sys.stderr,
        )
        return 1
    dry_manifest = all(m.get("dry_run") for m in manifest)
    if dry_manifest and not args.dry_run:
        print(
            f"bench: error: {manifest_path}: dry-run artifacts (prepare.sh --dry-run) on a GPU run",
            file=sys.stderr,
        )
        return 1
    if not args.runtime.is_file() or not os.access(args.runtime, os.X_OK):
        print(f"bench: error: {args.runtime}: not an executable gpuopt-cuda-run", file=sys.stderr)
        return 1
    import torch

    if not args.dry_run and not torch.cuda.is_available():
        print(
            "bench: error: torch sees no CUDA GPU: nothing measured (--dry-run runs without one)",
            file=sys.stderr,
        )
        return 2

    # run.sh's timeout sends SIGTERM: end like an interrupt, so the child
    # process groups are killed and what was measured stays rendered.
    def on_term(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_term)
    bench = Bench(args, manifest)
    try:
        return bench.run()
    except KeyboardInterrupt as e:
        log(f"interrupted ({e}): results so far in {args.out}")
        bench.results.add("interrupted", {"reason": str(e) or "interrupt"})
        render(args.out)
        return 3
    finally:
        # The weights and inputs (UNet's weights alone are 124 MB).
        shutil.rmtree(bench.work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
