"""`make demo`: Rolling-UNet-S before and after gpuopt, beside PyTorch eager.

    examples/demo.py [--build-dir build] [--model rolling_unet_s] [--size 224]
                     [--runs 20] [--threads N] [--budget-s 240] [--json FILE]

The demo
  1. picks the device: the CPU here; a GPU only when PyTorch sees one and
     gpuopt's CUDA backend is built (until the benchmark has CUDA rows, it
     says so and measures on the CPU);
  2. builds the model from the zoo with seeded random weights and BatchNorm
     statistics (gpuopt.randomize), exports it to a seg graph, optimizes it
     (`gpuopt-opt --gpuopt-optimize`), compiles both graphs with
     `gpuopt-compile --target=cpu` and checks each against PyTorch eager
     (relative L2 <= 1e-4);
  3. times PyTorch eager, the exported graph and the optimized graph in
     interleaved rounds on the same threads (gpuopt.bench's machinery);
  4. prints the op counts before and after, and the before/after table.
Progress goes to stderr. About two minutes on a 2-core machine at 224x224;
`python -m gpuopt.bench` is the full benchmark (torch.compile, ONNX Runtime,
each pass alone).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def op_counts(mlir_text: str) -> collections.Counter:
    """seg ops by kind, parameters not counted."""
    counts = collections.Counter(re.findall(r"=\s+seg\.(\w+)", mlir_text))
    del counts["param"]
    return counts


def counts_table(before: collections.Counter, after: collections.Counter) -> str:
    kinds = sorted(set(before) | set(after), key=lambda k: (-before[k], k))
    width = max(len(k) for k in kinds) + 4
    lines = [f"  {'seg op':<{width}}{'exported':>10}{'optimized':>11}"]
    lines += [f"  {'seg.' + k:<{width}}{before[k]:>10}{after[k]:>11}" for k in kinds]
    lines.append(f"  {'total':<{width}}{sum(before.values()):>10}{sum(after.values()):>11}")
    return "\n".join(lines)


def pick_device(build_dir: Path) -> tuple[str, str]:
    """The device to measure on, and why."""
    import torch

    if not torch.cuda.is_available():
        return "cpu", "no GPU visible to PyTorch"
    if not (build_dir / "bin" / "gpuopt-cuda-run").exists():
        return "cpu", "a GPU is present but gpuopt's CUDA backend is not built"
    return "cpu", "GPU and CUDA backend present, but the benchmark has no CUDA rows yet"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(HERE.parent / "build"))
    parser.add_argument("--model", default="rolling_unet_s", help="a zoo model")
    parser.add_argument("--size", type=int, default=224, help="input height and width")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per row, interleaved")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--budget-s", type=float, default=240.0, help="per row: compile, then runs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write every number here (gpuopt.bench's format)")
    args = parser.parse_args()
    os.environ["GPUOPT_BUILD_DIR"] = str(Path(args.build_dir).resolve())

    import json

    import torch

    from gpuopt import bench, models
    from gpuopt.randomize import randomize

    start = time.perf_counter()
    device, why = pick_device(Path(args.build_dir))
    shape = (1, 3, args.size, args.size)
    cpu = bench.machine()["cpu"]
    print(f"gpuopt demo: {args.model} at {args.size}x{args.size}, batch 1, {args.threads} thread(s)")
    print(f"[1/3] device: {device} ({cpu}; {why})", flush=True)
    print("[2/3] export, optimize, compile and check against PyTorch eager; then time (progress below)")
    torch.manual_seed(args.seed)
    # Random BatchNorm statistics, norm scales and biases too (gpuopt.randomize).
    module = randomize(models.build(args.model), seed=args.seed)
    with tempfile.TemporaryDirectory(prefix="gpuopt-demo-") as tmp:
        work = Path(tmp)
        report = bench.benchmark(
            module,
            shape,
            name=args.model,
            rows=["eager", "unoptimized", "full"],
            threads=args.threads,
            runs=args.runs,
            warmup=args.warmup,
            budget_s=args.budget_s,
            seed=args.seed,
            workdir=work,
        )
        before = op_counts((work / "exported.mlir").read_text())
        optimized = work / "full.mlir"
        after = op_counts(optimized.read_text()) if optimized.exists() else collections.Counter()

    print(f"[3/3] results ({time.perf_counter() - start:.0f} s so far)")
    print(bench.cpu_isa_line(report) or "gpuopt CPU kernels: unknown (no gpuopt row ran)")
    print()
    print("op counts: the exported graph (one seg.roll per torch.roll) and after --gpuopt-optimize")
    print(counts_table(before, after))
    print()
    print(bench.format_table(report))
    if args.json:
        args.json.write_text(json.dumps(bench.to_json([report], " ".join(sys.argv)), indent=1))
        print(f"wrote {args.json}")
    # An anchor (PyTorch, ORT) may be skipped for its budget; a gpuopt row
    # that was skipped means the demo did not show what it is for.
    anchors = ("eager", "torch.compile", "ort")
    bad = [r for r in report.rows if r.status != "ok" and not (r.status == "skipped" and r.key in anchors)]
    for r in bad:
        print(f"demo: {r.label}: {r.status}: {r.reason}", file=sys.stderr)
    print(f"demo: {'done' if not bad else 'FAILED'} in {time.perf_counter() - start:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
