"""`make demo`: run gpuopt on its embedded default block and show what it did.

The block (examples/demo_block.mlir) is a UNet DoubleConv followed by one
Rolling-UNet roll group, written the way PyTorch code writes it: one
`seg.roll` per channel slice. The demo
  1. counts the ops of the graph as written,
  2. runs `gpuopt-opt --gpuopt-optimize` (the 8 rolls become one shifted
     convolution, BatchNorm folds, ReLUs fuse) and counts again,
  3. builds the same block as a PyTorch module with random weights, saves its
     state_dict as safetensors, runs both graphs with
     `gpuopt-run --backend=reference` (op by op, LibTorch) and
     `--backend=cpu` (compiled through linalg and LLVM), and compares each
     with PyTorch eager.
Later milestones turn this into the full before/after benchmark.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from torch import nn

HERE = Path(__file__).resolve().parent


class DemoBlock(nn.Module):
    """DoubleConv (Conv3x3-BN-ReLU x 2) + a Rolling-UNet H-roll group + Linear + GELU."""

    def __init__(self, in_channels: int = 3, channels: int = 8) -> None:
        super().__init__()
        self.double_conv = nn.Sequential(
            nn.Conv2d(in_channels, channels, 3, padding=1),
            nn.BatchNorm2d(channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.BatchNorm2d(channels),
            nn.ReLU(inplace=True),
        )
        self.fc1 = nn.Linear(channels, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.double_conv(x)
        b, c, h, w = x.shape
        slices = torch.chunk(x, c, 1)
        x = torch.cat([torch.roll(s, shift, 2) for s, shift in zip(slices, range(c))], 1)
        tokens = x.flatten(2).transpose(1, 2)
        tokens = F.gelu(self.fc1(tokens))
        return tokens.transpose(1, 2).reshape(b, c, h, w)


def op_counts(mlir_text: str) -> collections.Counter:
    return collections.Counter(re.findall(r"=\s+(seg\.\w+)", mlir_text))


def fmt_counts(counts: collections.Counter) -> str:
    return ", ".join(f"{n} {op}" for op, n in sorted(counts.items()))


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"demo: {' '.join(cmd)} failed:\n{proc.stderr}")
    return proc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(HERE.parent / "build"))
    parser.add_argument("--model", default=str(HERE / "demo_block.mlir"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    bindir = Path(args.build_dir) / "bin"
    opt, runner = str(bindir / "gpuopt-opt"), str(bindir / "gpuopt-run")

    model = Path(args.model)
    original = model.read_text()
    print(f"[1/3] graph as written: {model}")
    print(f"      {fmt_counts(op_counts(original))}")

    with tempfile.TemporaryDirectory(prefix="gpuopt-demo-") as tmp:
        tmpdir = Path(tmp)
        optimized = tmpdir / "optimized.mlir"
        t0 = time.perf_counter()
        optimized.write_text(run([opt, str(model), "--gpuopt-optimize"]).stdout)
        ms = (time.perf_counter() - t0) * 1e3
        before, after = op_counts(original), op_counts(optimized.read_text())
        print(f"[2/3] gpuopt-opt --gpuopt-optimize ({ms:.0f} ms)")
        print(f"      {fmt_counts(after)}")
        print(
            f"      seg.roll {before['seg.roll']} -> {after['seg.roll']}, "
            f"ops {sum(before.values()) - before['seg.param']} -> "
            f"{sum(after.values()) - after['seg.param']} (parameters not counted)"
        )

        torch.manual_seed(args.seed)
        block = DemoBlock().eval()
        with torch.no_grad():  # non-trivial BN statistics, as after training
            for m in block.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.uniform_(-0.5, 0.5)
                    m.running_var.uniform_(0.5, 2.0)
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.2, 0.2)
        weights = tmpdir / "weights.safetensors"
        save_file(
            {k: v.contiguous() for k, v in block.state_dict().items() if v.is_floating_point()}, str(weights)
        )
        x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(args.seed + 1))
        np.save(tmpdir / "x.npy", x.numpy())

        t0 = time.perf_counter()
        with torch.no_grad():
            expected = block(x).numpy()
        torch_ms = (time.perf_counter() - t0) * 1e3
        print(f"[3/3] gpuopt-run vs PyTorch eager (random input {tuple(x.shape)})")
        runs = [
            (f"{name}, {backend}", graph, backend)
            for name, graph in (("as written", model), ("optimized", optimized))
            for backend in ("reference", "cpu")
        ]
        for label, graph, backend in runs:
            out = tmpdir / "y.npy"
            proc = run(
                [
                    runner,
                    str(graph),
                    f"--weights={weights}",
                    f"--input=@{tmpdir / 'x.npy'}",
                    f"--output=@{out}",
                    f"--backend={backend}",
                ]
            )
            actual = np.load(out)
            err = np.linalg.norm(actual - expected) / np.linalg.norm(expected)
            status = "OK" if err <= 1e-5 else "MISMATCH"
            took = re.search(r"inference ([\d.]+) ms", proc.stdout)
            print(
                f"      {label:22s} output {actual.shape}  rel. L2 error vs PyTorch {err:.2e}  "
                f"[{status}]  ({took.group(1) if took else '?'} ms in gpuopt-run)"
            )
            if status != "OK":
                return 1
        print(f"      PyTorch eager took {torch_ms:.1f} ms (first call, one thread pool; not a benchmark)")
    print("demo: done")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))
    sys.exit(main())
