"""The remaining fusions of --gpuopt-optimize on the zoo: BatchNorm folded
forward (Rolling-UNet's ReLU -> BN in the DSC branch, into fc6) and
LayerNorm over the channels of an NCHW map without the permute pair.

Numerics: random weights and random BatchNorm statistics
(``gpuopt.randomize``), the optimized graph through ``gpuopt-run --backend=reference``
and ``--backend=cpu`` against PyTorch eager; tolerance: relative L2 error
<= 1e-4, the bound of the other zoo tests (test_export.REL_L2).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import torch
from conftest import rel_l2
from test_export import REL_L2, export_and_optimize, run_reference

import gpuopt
from gpuopt import models
from gpuopt.randomize import randomize
from gpuopt.tools import tool

LAYOUT_OPS = ("seg.permute", "seg.reshape")


def count(graph: str, op: str) -> int:
    return len(re.findall(rf"= {re.escape(op)} ", graph))


def layer_norms_between_layout_ops(graph: str) -> list[str]:
    """The seg.layer_norm lines whose input comes from a layout op and whose
    result feeds one: the permute pairs the channel-axis form removes."""
    defining: dict[str, str] = {}
    users: dict[str, list[str]] = {}
    norms: list[tuple[str, str, str]] = []
    for line in graph.splitlines():
        m = re.match(r"\s*(%[\w]+)(?::\d+)? = (seg\.\w+) ([^:]*)", line)
        if not m:
            continue
        result, op, operands = m.groups()
        defining[result] = op
        names = re.findall(r"%[\w]+", operands)
        for name in names:
            users.setdefault(name, []).append(op)
        if op == "seg.layer_norm":
            norms.append((result, names[0], line.strip()))
    return [
        line
        for result, source, line in norms
        if defining.get(source) in LAYOUT_OPS and any(u in LAYOUT_OPS for u in users.get(result, []))
    ]


@pytest.mark.parametrize(("name", "side"), [("rolling_unet_s", 32), ("unext", 32)])
def test_optimized_zoo_model_matches_pytorch(name: str, side: int, tmp_path: Path) -> None:
    graph, expected = export_and_optimize(name, side, tmp_path)
    assert count(graph, "seg.batch_norm") == 0, "a BatchNorm is left after --gpuopt-optimize"
    assert layer_norms_between_layout_ops(graph) == []
    for backend in ("reference", "cpu"):
        err = rel_l2(
            run_reference(tmp_path, [tmp_path / "x.npy"], graph="opt.mlir", backend=backend), expected
        )
        assert err <= REL_L2, f"{name} on --backend={backend}: relative L2 error {err:.3e}"


def test_rolling_unet_batch_norms_fold_forward(tmp_path: Path) -> None:
    """Rolling-UNet-S's 3 DSC-branch BatchNorms (ReLU -> BN) fold forward into
    fc6; the other 13 fold backward into their convolutions."""
    model = randomize(models.build("rolling_unet_s").eval(), seed=13)
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(14))
    gpuopt.export(model, (x,), tmp_path / "m.mlir", tmp_path / "m.safetensors")
    exported = (tmp_path / "m.mlir").read_text()
    batch_norms = sum(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules())
    assert count(exported, "seg.batch_norm") == batch_norms
    proc = subprocess.run(
        [
            str(tool("gpuopt-opt")),
            str(tmp_path / "m.mlir"),
            "--gpuopt-optimize=report=true",
            "-o",
            "/dev/null",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    stats = re.search(
        r"fuse-conv-bn-relu: (\d+) batch_norm folded, .* (\d+) batch_norm folded forward", proc.stderr
    )
    assert stats, proc.stderr
    backward, forward = int(stats.group(1)), int(stats.group(2))
    lo2_blocks = sum(type(m).__name__ == "Lo2" for m in model.modules())
    assert forward == lo2_blocks > 0
    assert backward + forward == batch_norms
