"""Every shift idiom end to end: PyTorch module -> exporter -> --gpuopt-optimize
-> gpuopt-run, against PyTorch (issue 15, item 3).

Each idiom of models/inplace_idioms.py that is a shift (and the other common
spellings: a hand-written roll, a crop of a circular pad, index_select with
constant runs, Tensor.roll, copy_ and narrow().copy_ into a zero buffer) is
followed by the consumer the real networks put after it (a 1x1 or 3x3
convolution, a token Linear, ShiftViT's residual add). After
--gpuopt-optimize no standalone shift op may remain where its consumer can
absorb it: every seg.roll / seg.channel_shift / seg.shift left is listed
below with the reason (ShiftViT's shift read by an add, which fuses into the
add's loop at lowering; a channel roll moved onto a weight, computed at load).
TSM's shift along T, i.e. along the batch axis of the convolution, becomes
the convolution's frame_shift: nothing of it runs per inference. The
optimized graph must match PyTorch to relative L2 <= 1e-5 on the reference
and cpu backends (TSM's also on the CUDA emulator), with random parameters
(gpuopt.randomize) and a random input. A slice pattern that is NOT a shift
must stay as exported, and still be exact.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import rel_l2
from models import inplace_idioms as idioms
from test_cuda_emulate import compile_cuda, needs_cuda_run
from test_export import per_inference_ops, run_opt, run_reference
from torch import nn

import gpuopt
from gpuopt.compiled import CompiledModel
from gpuopt.randomize import randomize

REL_L2 = 1e-5
SHIFT_OPS = ("seg.roll", "seg.channel_shift", "seg.shift")


class ConvAfter(nn.Module):
    """``shift`` (a module) then a k x k convolution (padding k // 2)."""

    def __init__(self, shift: nn.Module, channels: int, k: int) -> None:
        super().__init__()
        self.shift = shift
        self.conv = nn.Conv2d(channels, channels, k, padding=k // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(self.shift(x))


class LinearAfter(nn.Module):
    """``shift`` then a Linear over the tokens of the map (ViT's MLP input)."""

    def __init__(self, shift: nn.Module, channels: int) -> None:
        super().__init__()
        self.shift = shift
        self.fc = nn.Linear(channels, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.shift(x).flatten(2).transpose(1, 2))


class HandRoll(nn.Module):
    """A roll written as a cat of the two ends: torch.cat((x[..., -s:], x[..., :-s]), d)."""

    def __init__(self, s: int = 2, dim: int = -1) -> None:
        super().__init__()
        self.s, self.dim = s, dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s, d = self.s, self.dim
        return torch.cat((x.narrow(d, x.shape[d] - s, s), x.narrow(d, 0, x.shape[d] - s)), d)


class HandRollEllipsis(nn.Module):
    """The spelling of the issue, literally: x[..., -s:] and x[..., :-s]."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = 2
        return torch.cat((x[..., -s:], x[..., :-s]), -1)


class CircularCrop(nn.Module):
    """F.pad(mode="circular") then a crop that is a roll by (1, -2) along (H, W)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.pad(x, (2, 2, 1, 1), mode="circular")[:, :, :-2, 4:]


class IndexSelectRuns(nn.Module):
    """index_select with constant runs (a rotation of W), the index made in forward."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = x.shape[3]
        index = torch.cat([torch.arange(w - 3, w), torch.arange(0, w - 3)])
        return torch.index_select(x, 3, index)


class TensorRoll(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.roll((1, -2), (2, 3))


class CopyIntoZeros(nn.Module):
    """ShiftViT's shift written with copy_ into the slices of a zero buffer."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = x.shape[1] // 4
        out = torch.zeros_like(x)
        out[:, :g, :, 1:].copy_(x[:, :g, :, :-1])
        out[:, g : 2 * g, 1:].copy_(x[:, g : 2 * g, :-1])
        out[:, 2 * g :].copy_(x[:, 2 * g :])
        return out


class NarrowCopyShift(nn.Module):
    """The same with torch.narrow views on both sides, chained."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c, w = x.shape[1], x.shape[3]
        g = c // 4
        out = x.new_zeros(x.shape)
        out.narrow(1, 0, g).narrow(3, 0, w - 1).copy_(x.narrow(1, 0, g).narrow(3, 1, w - 1))
        out.narrow(1, g, g).narrow(2, 1, x.shape[2] - 1).copy_(x.narrow(1, g, g).narrow(2, 0, x.shape[2] - 1))
        out.narrow(1, 2 * g, c - 2 * g).copy_(x.narrow(1, 2 * g, c - 2 * g))
        return out


class EveryGroupShifted(nn.Module):
    """Both channel groups shifted along H, apart: the writes are disjoint
    along H too (rows 3-4 and row 0), and the exporter must still concat
    along C, the dim they tile, for --collapse-rolls to see the shift."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(x)
        out[:, :12, 3:] = x[:, :12, :-3]
        out[:, 12:, :1] = x[:, 12:, 4:]
        return out


class NotAShift(nn.Module):
    """Slice assignment that moves channels 8-15 onto 0-7 (and shifts them):
    the pieces do not partition C in order, so it is no shift."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(x)
        out[:, :8, :, 1:] = x[:, 8:16, :, :-1]
        out[:, 8:] = x[:, 8:]
        return out


class NotARotation(nn.Module):
    """A cat of windows that skips a column: no roll."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat((x[..., -2:], x[..., :-3]), -1)


S4 = (2, 24, 5, 6)
TSM = idioms.INPUT_SHAPES["TemporalShiftConv"]

# name -> (module factory, input shape, the shift ops allowed to remain)
CASES = {
    # TSM shifts along T of the (N, T, C, H, W) view; the convolution reads the
    # view back as (N*T, C, H, W), so the shift moves whole images along its
    # batch axis: it becomes the convolution's frame_shift.
    "tsm_conv3x3": (lambda: idioms.TemporalShiftConv(), TSM, {}),
    "tsm_zeros_view_conv1x1": (
        lambda: ConvAfter(idioms.TemporalShiftZerosView(), 8, 1),
        TSM,
        {},
    ),
    # ShiftViT: the shift is read by the residual add (x + shift(x)), which
    # cannot absorb it into addressing; one seg.channel_shift remains, whose
    # only user is the add (its gather fuses into the add's loop when lowered).
    "shiftvit_block": (lambda: idioms.ShiftViTBlock(), S4, {"seg.channel_shift": 1}),
    "shiftvit_conv1x1": (lambda: ConvAfter(idioms.ShiftViT(), 24, 1), S4, {}),
    "shiftvit_new_full_conv3x3": (lambda: ConvAfter(idioms.ShiftViT("zeros"), 24, 3), S4, {}),
    "shiftvit_linear": (lambda: LinearAfter(idioms.ShiftViT("new_zeros"), 24), S4, {}),
    "shiftnet_conv1x1": (lambda: ConvAfter(idioms.ShiftNetGroupShift(), 24, 1), S4, {}),
    "hand_roll_w_conv3x3": (lambda: ConvAfter(HandRoll(2, -1), 24, 3), S4, {}),
    "hand_roll_h_conv1x1": (lambda: ConvAfter(HandRoll(1, 2), 24, 1), S4, {}),
    # (along the channels: a permutation of the conv weight's input channels,
    # so the one seg.roll left rotates the weight, computed at load)
    "hand_roll_c_conv3x3": (lambda: ConvAfter(HandRoll(5, 1), 24, 3), S4, {"seg.roll": 1}),
    "hand_roll_ellipsis_linear": (lambda: LinearAfter(HandRollEllipsis(), 24), S4, {}),
    # (along H and W: two cyclic shifts, composed into one fused_conv2d)
    "circular_crop_conv3x3": (lambda: ConvAfter(CircularCrop(), 24, 3), S4, {}),
    "index_select_conv1x1": (lambda: ConvAfter(IndexSelectRuns(), 24, 1), S4, {}),
    "tensor_roll_conv3x3": (lambda: ConvAfter(TensorRoll(), 24, 3), S4, {}),
    "copy_conv1x1": (lambda: ConvAfter(CopyIntoZeros(), 24, 1), S4, {}),
    "every_group_shifted_conv1x1": (lambda: ConvAfter(EveryGroupShifted(), 24, 1), S4, {}),
    "narrow_copy_conv3x3": (lambda: ConvAfter(NarrowCopyShift(), 24, 3), S4, {}),
}

NEGATIVE = {
    "not_a_shift_conv1x1": (lambda: ConvAfter(NotAShift(), 24, 1), S4),
    "not_a_rotation_conv1x1": (lambda: ConvAfter(NotARotation(), 24, 1), (2, 24, 5, 7)),
}


def _export(factory, shape: tuple[int, ...], tmp_path: Path, seed: int) -> np.ndarray:
    model = randomize(factory().eval(), seed=seed)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed + 1))
    with torch.no_grad():
        expected = model(x.clone()).numpy()
    gpuopt.export(model, (x,), tmp_path / "m.mlir", tmp_path / "m.safetensors")
    np.save(tmp_path / "x.npy", x.numpy())
    assert float(np.abs(expected).max()) > 0.0
    return expected


def _optimize(tmp_path: Path) -> str:
    return run_opt(tmp_path / "m.mlir", "--gpuopt-optimize", output=tmp_path / "opt.mlir")


def _count(text: str, op: str) -> int:
    return len(re.findall(rf"= {re.escape(op)} ", text))


def _check_numerics(tmp_path: Path, expected: np.ndarray) -> None:
    for backend in ("reference", "cpu"):
        actual = run_reference(tmp_path, [tmp_path / "x.npy"], graph="opt.mlir", backend=backend)
        assert actual.shape == expected.shape
        err = rel_l2(actual, expected)
        assert err <= REL_L2, f"{backend}: relative L2 error {err:.3e}"


def _check_emulated(tmp_path: Path, expected: np.ndarray) -> None:
    """The optimized graph compiled for CUDA, run by the host emulator."""
    artifact = compile_cuda(tmp_path / "opt.mlir", tmp_path / "opt.gpuopt")
    with CompiledModel(artifact, tmp_path / "m.safetensors", device="emulate") as compiled:
        (actual,) = compiled.run(np.load(tmp_path / "x.npy"))
    assert actual.shape == expected.shape
    err = rel_l2(actual, expected)
    assert err <= REL_L2, f"emulate: relative L2 error {err:.3e}"


def _users(text: str, value: str) -> list[str]:
    """The ops (by name) that use SSA ``value``."""
    users = []
    for line in text.splitlines():
        m = re.match(r"^\s*(?:%\S+ = )?([\w.]+)", line)
        if m and re.search(rf"{re.escape(value)}\b", line.split("=", 1)[-1]):
            users.append(m.group(1))
    return users


@pytest.mark.parametrize("name", sorted(CASES))
def test_shift_idiom_folds_and_matches_pytorch(name: str, tmp_path: Path) -> None:
    factory, shape, remaining = CASES[name]
    expected = _export(factory, shape, tmp_path, seed=sorted(CASES).index(name) * 7 + 1)
    text = _optimize(tmp_path)
    left = {op: _count(text, op) for op in SHIFT_OPS}
    assert {op: n for op, n in left.items() if n} == remaining, left
    # the idiom itself is gone: no concat of pieces (none of these graphs has
    # another concat) and no pad of the input
    assert _count(text, "seg.concat") == 0, "the canonical form was not recognized"
    assert _count(text, "seg.pad") == 0
    if name.startswith("tsm"):
        # TSM's shift (n_segment 4, fold 8 // 4 = 2): channels 0-1 read the
        # next frame (offset -1), 2-3 the previous one (+1), 4-7 their own;
        # the 5-D view and its merge are gone with it.
        (line,) = [ln for ln in text.splitlines() if "= seg.fused_conv2d " in ln]
        assert "frame_shift = <frames = 4, offsets = [-1, -1, 1, 1, 0, 0, 0, 0]>" in line, line
        assert re.search(r"\(tensor<8x8x3x4xf32>, ", line), line
        assert _count(text, "seg.reshape") == 0
        forward = per_inference_ops(tmp_path / "opt.mlir")
        assert not [op for op in SHIFT_OPS if _count(forward, op)], forward
    elif name == "shiftvit_block":
        (line,) = [ln for ln in text.splitlines() if "= seg.channel_shift " in ln]
        assert "mode = zero" in line, line
        value = re.match(r"^\s*(%\S+) =", line).group(1)
        assert _users(text, value) == ["seg.add"], _users(text, value)
    elif name == "hand_roll_c_conv3x3":
        (line,) = [ln for ln in text.splitlines() if "= seg.roll " in ln]
        assert "dims = [1] : tensor<24x24x3x3xf32>" in line, line  # the weight's
        forward = per_inference_ops(tmp_path / "opt.mlir")
        assert not [op for op in SHIFT_OPS if _count(forward, op)], forward
    else:
        assert _count(text, "seg.fused_conv2d") >= 1, "the shift was not folded into the consumer"
    _check_numerics(tmp_path, expected)


@needs_cuda_run
@pytest.mark.parametrize("name", sorted(n for n in CASES if n.startswith("tsm")))
def test_frame_shift_emulated(name: str, tmp_path: Path) -> None:
    """TSM's folded frame shift through the CUDA path (the linalg lowering of
    seg.fused_conv2d), run by the emulator, against PyTorch."""
    factory, shape, _ = CASES[name]
    expected = _export(factory, shape, tmp_path, seed=sorted(CASES).index(name) * 7 + 1)
    text = _optimize(tmp_path)
    assert "frame_shift = " in text
    _check_emulated(tmp_path, expected)


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_slice_pattern_that_is_not_a_shift_stays(name: str, tmp_path: Path) -> None:
    factory, shape = NEGATIVE[name]
    expected = _export(factory, shape, tmp_path, seed=5)
    exported = (tmp_path / "m.mlir").read_text()
    text = _optimize(tmp_path)
    assert _count(exported, "seg.concat") == 1
    for op in ("seg.concat", "seg.slice", "seg.pad"):
        assert _count(text, op) == _count(exported, op), op
    for op in SHIFT_OPS:
        assert _count(text, op) == 0, op
    _check_numerics(tmp_path, expected)
