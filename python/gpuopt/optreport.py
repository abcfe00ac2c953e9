"""Op counts of the zoo models before and after gpuopt's passes.

    python -m gpuopt.optreport [--models unet,rolling_unet_s,...] [--size 256]

Exports each model, runs `gpuopt-opt` with each pipeline (reporting the
passes' statistics as remarks), and prints one table per model: the count of
every seg op in the exported graph and after each pipeline.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from gpuopt import models
from gpuopt.capture import capture
from gpuopt.tools import tool

PIPELINES = {
    "--fuse-roll": ["--fuse-roll=report=true"],
    "--roll-to-deform-conv": ["--roll-to-deform-conv"],
    "--gpuopt-optimize": ["--gpuopt-optimize=report=true"],
}


def op_counts(mlir: str) -> collections.Counter:
    """Counts of seg ops (results of `%x = seg.op` lines)."""
    return collections.Counter(re.findall(r"=\s+seg\.(\w+)", mlir))


def report(name: str, size: int) -> str:
    model = models.build(name).eval()
    x = torch.randn(1, 3, size, size)
    graph = capture(model, (x,)).mlir
    columns = {"exported": op_counts(graph)}
    remarks = []
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "m.mlir"
        src.write_text(graph)
        for label, args in PIPELINES.items():
            proc = subprocess.run(
                [str(tool("gpuopt-opt")), str(src), *args], capture_output=True, text=True, check=False
            )
            if proc.returncode != 0:
                raise RuntimeError(f"{label} failed on {name}:\n{proc.stderr}")
            columns[label] = op_counts(proc.stdout)
            remarks += [f"  {label}: {m}" for m in re.findall(r"remark: (.*)", proc.stderr)]
    ops = sorted(set().union(*columns.values()) - {"param"})
    width = max(len(op) for op in ops)
    lines = [f"{name} at {size}x{size} (seg ops; parameters not counted)"]
    lines.append(f"  {'op':<{width}}" + "".join(f"{c:>24}" for c in columns))
    for op in ops:
        lines.append(f"  {op:<{width}}" + "".join(f"{col.get(op, 0):>24}" for col in columns.values()))
    total = {c: sum(v for k, v in col.items() if k != "param") for c, col in columns.items()}
    lines.append(f"  {'total':<{width}}" + "".join(f"{total[c]:>24}" for c in columns))
    return "\n".join(lines + remarks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(models.names()))
    parser.add_argument("--size", type=int, default=256)
    args = parser.parse_args()
    for name in args.models.split(","):
        print(report(name, args.size))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
