"""LayerNorm kernels with warp lanes per row (warp-rows), emulated.

--convert-parallel-loops-to-kernels gives each row of a LayerNorm several
lanes of a warp whose partial sums meet in gpu.shuffle butterflies
(docs/CUDABackend.md). Here the emulated artifact is compared with PyTorch
on rows that are not a multiple of 32 long, on a row count that leaves the
last warp partly past the end, and on inputs with a large mean
(100 + randn, where a one-pass E[x^2] - E[x]^2 variance in float32
cancels catastrophically; the kernels keep the two-pass one), in the three thread orders, for the
token layout as exported (the row contiguous: a warp per row) and after
--gpuopt-optimize (channels strided: 8 rows of 4 lanes per warp). Relative
L2 error <= 1e-5 against PyTorch's float32 LayerNorm, the three orders
bitwise equal.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from test_cuda_emulate import check_orders, needs_cuda_run
from torch import nn

import gpuopt
from gpuopt.randomize import randomize
from gpuopt.tools import build_dir

COMPILE = build_dir() / "bin" / "gpuopt-compile"


class TokenLayerNorm(nn.Module):
    """Rolling-UNet's token LayerNorm: (N, C, H, W) as H*W tokens of C."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        t = self.norm(x.flatten(2).transpose(1, 2))
        return t.transpose(1, 2).reshape(n, c, h, w) + x


@needs_cuda_run
@pytest.mark.parametrize("pipeline", [None, "gpuopt-optimize"], ids=["exported", "optimized"])
@pytest.mark.parametrize(("channels", "side"), [(40, 7), (72, 3)], ids=["c40-49rows", "c72-9rows"])
def test_layer_norm_emulated(tmp_path: Path, pipeline: str | None, channels: int, side: int) -> None:
    model = randomize(TokenLayerNorm(channels).eval(), seed=5)
    gen = torch.Generator().manual_seed(6)
    x = 100.0 + torch.randn(1, channels, side, side, generator=gen)
    gpuopt.export(model, (x,), tmp_path / "m.mlir", tmp_path / "m.safetensors")
    np.save(tmp_path / "x.npy", x.numpy())
    with torch.no_grad():
        expected = model(x).numpy()
    out = tmp_path / "m.gpuopt"
    proc = subprocess.run(
        [COMPILE, tmp_path / "m.mlir", "--target=cuda", "--cuda-arch=sm_90", "--cuda-format=ptx"]
        + ["--cuda-host-image", f"--cuda-write-kernels={tmp_path / 'k.mlir'}", "-o", out]
        + ([f"--pipeline={pipeline}"] if pipeline else []),
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    # The LayerNorm's kernel is the warp-rows one: two butterflies, of 5
    # shuffles for a contiguous row, of 2 for 8 strided rows per warp.
    kernels = (tmp_path / "k.mlir").read_text()
    shuffles = len(re.findall(r"gpu\.shuffle\s+xor", kernels))
    assert shuffles == (4 if pipeline else 10), kernels
    check_orders(out, tmp_path / "m.safetensors", [tmp_path / "x.npy"], expected, f"LayerNorm({channels})")
