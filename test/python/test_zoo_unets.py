"""The UNet-family zoo models: parameter counts, call counts, thop MACs, output shapes.

Parameter counts are exact for the models re-implemented from public code
(UNet, UNeXt, UNeXt-S); UNeXt-Stripe is a reconstruction and must land within
5 % of the seed's 3.48 M parameters and 1.922 "GFLOPs" (2 x thop MACs at 224x224).
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from gpuopt.models import build


class CallCounter(TorchFunctionMode):
    """Counts torch-function calls (``torch.roll``, ``F.pad``, ...) by function name."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: collections.Counter[str] = collections.Counter()

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        self.counts[getattr(func, "__name__", str(func))] += 1
        return func(*args, **(kwargs or {}))


def thop_macs(model: nn.Module, side: int) -> int:
    """MACs at (1, 3, side, side) in thop's convention.

    Conv and Linear MACs (bias not counted), 4 * numel per BatchNorm / LayerNorm
    output, a ConvTranspose2d counted as output numel * in_channels * kernel area
    (thop's 4x over-count for 2x2 / stride 2), nothing for functional ops.
    """
    total = 0

    def hook(m: nn.Module, inputs: tuple[torch.Tensor, ...], out: torch.Tensor) -> None:
        nonlocal total
        if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
            area = m.weight.shape[2] * m.weight.shape[3]
            total += out.numel() * (inputs[0].shape[1] // m.groups) * area
        elif isinstance(m, nn.Linear):
            total += out.numel() * m.in_features
        elif isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)):
            total += 4 * out.numel()

    handles = [m.register_forward_hook(hook) for m in model.modules()]
    try:
        with torch.no_grad():
            model.eval()(torch.randn(1, 3, side, side))
    finally:
        for h in handles:
            h.remove()
    return total


def num_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize(
    ("name", "kwargs", "expected"),
    [
        ("unet", {}, 31_037_633),
        ("unet", {"bilinear": True}, 17_262_977),
        ("unext", {}, 1_471_921),
        ("unext_s", {}, 253_561),
    ],
)
def test_exact_parameter_count(name: str, kwargs: dict[str, Any], expected: int) -> None:
    assert num_params(build(name, **kwargs)) == expected


def test_unext_stripe_parameters_within_5_percent() -> None:
    params = num_params(build("unext_stripe"))
    assert abs(params / 3.48e6 - 1) < 0.05, params


def test_unext_stripe_thop_gflops_within_5_percent() -> None:
    gflops = 2 * thop_macs(build("unext_stripe"), 224) / 1e9
    assert abs(gflops / 1.922 - 1) < 0.05, gflops


def test_thop_counter_matches_seed_figures() -> None:
    # Cross-checks the counter itself: the seed's UNeXt figure is thop 0.573 G at 256x256.
    assert round(thop_macs(build("unext"), 256) / 1e9, 3) == 0.573


@pytest.mark.parametrize("name", ["unext", "unext_s"])
def test_unext_shift_call_counts(name: str) -> None:
    model = build(name).eval()
    with torch.no_grad(), CallCounter() as counter:
        model(torch.randn(1, 3, 64, 64))
    counts = {f: counter.counts[f] for f in ("roll", "pad", "chunk", "cat", "narrow")}
    assert counts == {"roll": 40, "pad": 8, "chunk": 8, "cat": 8, "narrow": 16}


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("unet", {}),
        ("unet", {"bilinear": True}),
        ("unext", {}),
        ("unext_s", {}),
        ("unext_stripe", {}),
    ],
)
def test_output_shape(name: str, kwargs: dict[str, Any]) -> None:
    model = build(name, **kwargs).eval()
    with torch.no_grad():
        out = model(torch.randn(1, 3, 64, 64))
    assert out.shape == (1, 1, 64, 64)


def test_num_classes_and_input_channels() -> None:
    for name in ("unet", "unext", "unext_s", "unext_stripe"):
        model = build(name, num_classes=3, input_channels=1).eval()
        with torch.no_grad():
            out = model(torch.randn(2, 1, 64, 64))
        assert out.shape == (2, 3, 64, 64), name
