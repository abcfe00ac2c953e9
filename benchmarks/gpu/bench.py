"""The GPU benchmark behind benchmarks/gpu/run.sh (read that first).

Needs a CUDA GPU, torch and numpy; matplotlib for the roofline PNG. Runs
without LLVM: the gpuopt rows are artifacts compiled by prepare.sh, run by
gpuopt-cuda-run; of gpuopt's Python package it imports only pure-torch
modules (gpuopt.models, gpuopt.randomize). Every row is checked against PyTorch (strict FP32) on the
same GPU before its time counts. A hard budget bounds the whole run; rows
that no longer fit are skipped and reported as skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

CORE = ["unet", "rolling_unet_s", "unext", "unext_stripe"]
RUNS, WARMUP = 50, 10


class Budget:
    """Seconds left of the run's budget."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def left(self) -> float:
        return self.deadline - time.monotonic()


def log(msg: str) -> None:
    print(f"bench: {msg}", flush=True)


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


def time_cuda(fn: Any, runs: int = RUNS, warmup: int = WARMUP) -> list[float]:
    """Milliseconds per call, CUDA events around each call."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(runs):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        out.append(start.elapsed_time(stop))
    return out


def summary(ms: list[float]) -> dict[str, float]:
    q = np.percentile(ms, [10, 50, 90])
    return {"p10_ms": float(q[0]), "median_ms": float(q[1]), "p90_ms": float(q[2])}


def measure_ceilings() -> dict[str, float]:
    """Device-to-device copy bandwidth, matmul rates and the empty-launch cost."""
    n = 1 << 28  # 1 GiB of float32
    a = torch.rand(n, device="cuda")
    b = torch.empty_like(a)
    ms = statistics.median(time_cuda(lambda: b.copy_(a), runs=20, warmup=3))
    bandwidth = 2 * a.numel() * 4 / (ms * 1e-3)
    m = torch.rand(8192, 8192, device="cuda")
    k = torch.rand(8192, 8192, device="cuda")
    rates = {}
    for name, tf32 in (("fp32", False), ("tf32", True)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        ms = statistics.median(time_cuda(lambda: m @ k, runs=10, warmup=3))
        rates[name] = 2 * 8192**3 / (ms * 1e-3)
    torch.backends.cuda.matmul.allow_tf32 = False
    launches = 2000

    def empty() -> None:
        for _ in range(launches):
            torch.cuda._sleep(0)

    launch_s = statistics.median(time_cuda(empty, runs=5, warmup=1)) * 1e-3 / launches
    return {
        "copy_bytes_per_s": bandwidth,
        "matmul_fp32_flops": rates["fp32"],
        "matmul_tf32_flops": rates["tf32"],
        "launch_s": launch_s,
    }


def build_model(name: str) -> torch.nn.Module:
    """Zoo model ``name`` with seeded random weights, BatchNorm statistics,
    norm scales and biases (gpuopt.randomize, pure torch): under the default
    initialisation a wrong BatchNorm fold or bias would go unseen. The
    artifacts take their weights at load, so prepare.sh's export need not
    use the same values."""
    from gpuopt import models
    from gpuopt.randomize import randomize

    torch.manual_seed(0)
    return randomize(models.build(name).eval(), seed=0)


def torch_busy(fn: Any, latency_ms: float) -> tuple[float | None, int | None]:
    """Kernel-busy fraction and kernel count of one call, from the profiler."""
    try:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        busy_us = sum(e.device_time for e in kernels)
        return busy_us * 1e-3 / latency_ms, len(kernels)
    except Exception as e:  # noqa: BLE001 - the profiler is optional
        log(f"profiler unavailable: {e}")
        return None, None


def compile_child(args: argparse.Namespace) -> int:
    """Times torch.compile(mode) in this (separate, killable) process."""
    shape = [int(s) for s in args.shape.split(",")]
    model = build_model(args.model).cuda()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1)).cuda()
    start = time.perf_counter()
    with torch.no_grad():
        fn = torch.compile(model, mode=args.mode)
        y = fn(x)
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - start
        ms = time_cuda(lambda: fn(x))
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        ref = model(x)
    result = {"compile_s": compile_s, **summary(ms), "rel_l2": rel_l2(y.cpu().numpy(), ref.cpu().numpy())}
    Path(args.result).write_text(json.dumps(result))
    return 0


def run_compile_row(model: str, shape: list[int], mode: str, budget: Budget, cap: float) -> dict[str, Any]:
    timeout = min(cap, budget.left() - 5)
    if timeout < 30:
        return {"skipped": f"budget: {budget.left():.0f} s left"}
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
        cmd += ["--mode", mode, "--result", str(result)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return {"skipped": f"torch.compile({mode}) did not finish within {timeout:.0f} s"}
        if proc.returncode != 0 or not result.exists():
            return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
        return json.loads(result.read_text())


def run_gpuopt(
    runtime: Path,
    artifact: Path,
    weights: Path,
    x: Path,
    ref: np.ndarray,
    graph: bool,
    budget: Budget,
    cap: float,
) -> dict[str, Any]:
    timeout = min(cap, budget.left() - 5)
    if timeout < 5:
        return {"skipped": f"budget: {budget.left():.0f} s left"}
    with tempfile.TemporaryDirectory() as tmp:
        y, js = Path(tmp) / "y.npy", Path(tmp) / "r.json"
        cmd = [str(runtime), str(artifact), f"--weights={weights}", f"--input=@{x}", f"--output=@{y}"]
        cmd += [f"--runs={RUNS}", f"--warmup={WARMUP}", f"--json={js}"]
        cmd += ["--graph"] if graph else ["--profile"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return {"skipped": f"did not finish within {timeout:.0f} s"}
        if proc.returncode != 0:
            return {"error": proc.stderr.strip()}
        r = json.loads(js.read_text())
        r["rel_l2"] = rel_l2(np.load(y), ref)
        if not graph and r["median_ms"] > 0:
            r["busy"] = r["kernel_ms_sum"] / r["median_ms"]
        r.pop("step_ms", None)
        return r


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--artifacts", type=Path)
    p.add_argument("--runtime", type=Path)
    p.add_argument("--out", type=Path)
    p.add_argument("--budget", type=float, default=290)
    p.add_argument("--compile-child", action="store_true")
    p.add_argument("--model")
    p.add_argument("--shape")
    p.add_argument("--mode")
    p.add_argument("--result")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("bench: error: torch sees no CUDA GPU: nothing measured", file=sys.stderr)
        return 2
    if args.compile_child:
        return compile_child(args)
    budget = Budget(args.budget)
    manifest = json.loads((args.artifacts / "manifest.json").read_text())
    rows = {r["row"]: r for r in manifest}
    work = Path(tempfile.mkdtemp(prefix="gpuopt-bench-"))
    env = {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "commit": os.environ.get("GPUOPT_COMMIT", ""),
    }
    try:
        env["driver"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        env["driver"] = ""
    log(f"{env['gpu']}, driver {env['driver']}, torch {env['torch']}")
    ceilings = measure_ceilings()
    log(
        "ceilings: copy {:.0f} GB/s, fp32 matmul {:.1f} TFLOP/s, tf32 {:.1f} TFLOP/s, launch {:.2f} us".format(
            ceilings["copy_bytes_per_s"] / 1e9,
            ceilings["matmul_fp32_flops"] / 1e12,
            ceilings["matmul_tf32_flops"] / 1e12,
            ceilings["launch_s"] * 1e6,
        )
    )
    results: list[dict[str, Any]] = []
    cache: dict[tuple[str, tuple[int, ...]], tuple[Path, Path, np.ndarray, float]] = {}

    def prepare(model: str, shape: list[int]) -> tuple[Path, Path, np.ndarray, float]:
        """Weights, input and strict-FP32 reference; times eager once per model and shape."""
        key = (model, tuple(shape))
        if key in cache:
            return cache[key]
        net = build_model(model)
        weights = work / f"{model}.safetensors"
        if not weights.exists():
            sd = {k: v.detach().numpy() for k, v in net.state_dict().items() if v.is_floating_point()}
            write_safetensors(weights, sd)
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
        xpath = work / f"{model}-{'x'.join(map(str, shape))}.npy"
        np.save(xpath, x.numpy())
        net = net.cuda()
        xc = x.cuda()
        with torch.no_grad():
            torch.backends.cudnn.allow_tf32 = False
            torch.backends.cuda.matmul.allow_tf32 = False
            ref = net(xc).cpu().numpy()
            # Eager with PyTorch's defaults (cuDNN may use TF32 for convolutions).
            torch.backends.cudnn.allow_tf32 = True
            ms = time_cuda(lambda: net(xc))
            s = summary(ms)
            busy, kernels = torch_busy(lambda: net(xc), s["median_ms"])
        results.append(
            {
                "row": f"{model} {'x'.join(map(str, shape))}",
                "system": "PyTorch eager",
                "model": model,
                "shape": shape,
            }
            | s
            | {"busy": busy, "launches": kernels, "rel_l2": 0.0}
        )
        log(f"eager {model} {shape}: {s['median_ms']:.3f} ms")
        eager_ms = s["median_ms"]
        torch.cuda.empty_cache()
        cache[key] = (weights, xpath, ref, eager_ms)
        return cache[key]

    def gpuopt_rows(names: list[str], graphs: tuple[bool, ...] = (False, True)) -> None:
        for name in names:
            row = rows.get(name)
            if row is None:
                continue
            if budget.left() < 20:
                results.append({"row": name, "system": "gpuopt", "skipped": "budget"})
                continue
            weights, x, ref, _ = prepare(row["model"], row["shape"])
            for graph in graphs:
                r = run_gpuopt(
                    args.runtime, args.artifacts / row["artifact"], weights, x, ref, graph, budget, 60
                )
                system = "gpuopt" + (" + CUDA graph" if graph else "")
                results.append(
                    {"row": name, "system": system, "model": row["model"], "shape": row["shape"]} | r
                )
                log(f"{system} {name}: {r.get('median_ms', r.get('skipped', r.get('error')))}")

    def compile_rows(model: str, shape: list[int], mode: str, cap: float) -> None:
        r = run_compile_row(model, shape, mode, budget, cap)
        system = f"torch.compile({mode})"
        results.append(
            {"row": f"{model} {'x'.join(map(str, shape))}", "system": system, "model": model, "shape": shape}
            | r
        )
        log(f"{system} {model}: {r.get('median_ms', r.get('skipped', r.get('error')))}")

    size = [1, 3, 224, 224]
    # Priority order: the core table, then the Rolling-UNet-S extras.
    gpuopt_rows([n for m in CORE for n in (m, f"{m}-opt")])
    for m in CORE:
        compile_rows(m, size, "default", 150)
    gpuopt_rows([n for n in rows if n.startswith("rolling_unet_s-only-")], graphs=(True,))
    for name in ("rolling_unet_s-opt-256", "rolling_unet_s-opt-b8"):
        gpuopt_rows([name])
    compile_rows("rolling_unet_s", size, "max-autotune", 240)

    report = {"environment": env, "ceilings": ceilings, "manifest": manifest, "results": results}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(report, indent=1))
    (args.out / "results.md").write_text(render_table(report))
    roofline(report, args.out / "roofline.png")
    print(render_table(report))
    # gpuopt computes in FP32 like the reference; torch.compile may use TF32.
    bad = [r for r in results if r["system"].startswith("gpuopt") and r.get("rel_l2", 0) > 1e-4]
    for r in bad:
        log(f"WRONG RESULT: {r['system']} {r['row']}: rel L2 {r['rel_l2']:.2e}")
    return 1 if bad else 0


def floor_s(row: dict[str, Any], ceilings: dict[str, float], launches: int | None) -> float:
    """max(FLOPs/peak, bytes/bandwidth) + launches x launch cost."""
    t = max(row["flops"] / ceilings["matmul_fp32_flops"], row["bytes"] / ceilings["copy_bytes_per_s"])
    return t + (launches or 0) * ceilings["launch_s"]


def render_table(report: dict[str, Any]) -> str:
    env, ceil = report["environment"], report["ceilings"]
    man = {r["row"]: r for r in report["manifest"]}
    by_model = {(r["model"], tuple(r["shape"])): r for r in report["manifest"] if not r["pipeline"]}
    lines = [
        f"GPU {env['gpu']}, driver {env['driver']}, torch {env['torch']} (CUDA {env['cuda']}), {env['date']}",
        "",
        (
            f"Ceilings (measured): copy {ceil['copy_bytes_per_s'] / 1e9:.0f} GB/s; matmul FP32 "
            f"{ceil['matmul_fp32_flops'] / 1e12:.1f} TFLOP/s, TF32 {ceil['matmul_tf32_flops'] / 1e12:.1f} TFLOP/s; "
            f"empty launch {ceil['launch_s'] * 1e6:.2f} us"
        ),
        "",
        (
            "| row | system | Params (M) | GFLOPs (2xMACs) | FPS | latency ms (p10-p90) | launches | kernel-busy | "
            "% of floor | rel L2 vs PyTorch |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["results"]:
        m = man.get(r["row"]) or by_model.get((r.get("model"), tuple(r.get("shape", []))))
        if "median_ms" not in r:
            why = r.get("skipped") or r.get("error", "")
            lines.append(
                f"| {r['row']} | {r['system']} | | | | {'skipped' if 'skipped' in r else 'error'}: {why} | | | | |"
            )
            continue
        lat = r["median_ms"]
        batch = r["shape"][0] if r.get("shape") else 1
        params = f"{m['params'] / 1e6:.2f}" if m else ""
        gflops = f"{2 * m['macs'] / 1e9:.2f}" if m else ""
        launches = r.get("launches")
        pct = f"{100 * floor_s(m, ceil, launches) / (lat * 1e-3):.1f}%" if m else ""
        busy = f"{100 * r['busy']:.0f}%" if r.get("busy") is not None else ""
        lines.append(
            f"| {r['row']} | {r['system']} | {params} | {gflops} | {1000 * batch / lat:.1f} | "
            f"{lat:.3f} ({r['p10_ms']:.3f}-{r['p90_ms']:.3f}) | {launches if launches is not None else ''} | "
            f"{busy} | {pct} | {r.get('rel_l2', float('nan')):.1e} |"
        )
    lines += [
        "",
        (
            "% of floor: the roofline floor max(FLOPs/FP32 peak, bytes/copy bandwidth) + launches x launch cost, "
            "over the measured latency (100% = at the floor). Kernel-busy: summed kernel time over latency "
            "(gpuopt: events around each launch; PyTorch: the profiler)."
        ),
    ]
    return "\n".join(lines) + "\n"


def roofline(report: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing: no roofline.png")
        return
    ceil = report["ceilings"]
    man = {r["row"]: r for r in report["manifest"]}
    by_model = {(r["model"], tuple(r["shape"])): r for r in report["manifest"] if not r["pipeline"]}
    fig, ax = plt.subplots(figsize=(8, 5.5))
    xs = np.logspace(-2, 3, 200)
    ax.plot(
        xs, np.minimum(xs * ceil["copy_bytes_per_s"], ceil["matmul_fp32_flops"]), "k-", label="FP32 roofline"
    )
    ax.plot(
        xs, np.minimum(xs * ceil["copy_bytes_per_s"], ceil["matmul_tf32_flops"]), "k:", label="TF32 roofline"
    )
    for r in report["results"]:
        m = man.get(r["row"]) or by_model.get((r.get("model"), tuple(r.get("shape", []))))
        if "median_ms" not in r or not m:
            continue
        ai = m["flops"] / max(m["bytes"], 1)
        ax.scatter(ai, m["flops"] / (r["median_ms"] * 1e-3), label=f"{r['row']} / {r['system']}", s=18)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte, cost model)")
    ax.set_ylabel("achieved FLOP/s")
    ax.set_title(report["environment"]["gpu"])
    ax.legend(fontsize=5, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=150)


if __name__ == "__main__":
    sys.exit(main())
