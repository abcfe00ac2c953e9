"""Rolling-UNet S / M / L in the zoo against the facts of shared/MODELS.md.

Parameter counts are exact (1 class, 3 input channels). Layer and call counts are the same for
every variant; the number of ``torch.roll`` calls is 4·C per Lo2 block whatever the resolution.
Forward passes use 64x64 inputs to stay fast.
"""

from __future__ import annotations

import collections

import pytest
import torch
from torch import nn
from torch.overrides import TorchFunctionMode

import gpuopt.models as zoo
from gpuopt.models.rolling_unet import Lo2, _roll_channels

PARAMS = {
    "rolling_unet_s": 1_783_185,
    "rolling_unet_m": 7_098_401,
    "rolling_unet_l": 28_324_929,
}
# Lo2 blocks of width C4, C5, C4; 4·C rolls each.
ROLLS = {"rolling_unet_s": 2048, "rolling_unet_m": 4096, "rolling_unet_l": 8192}
VARIANTS = list(PARAMS)


class _CallCounter(TorchFunctionMode):
    """Counts the torch functions called, by name."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: collections.Counter[str] = collections.Counter()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls[getattr(func, "__name__", str(func))] += 1
        return func(*args, **(kwargs or {}))


@pytest.fixture(scope="module")
def models() -> dict[str, nn.Module]:
    torch.manual_seed(0)
    return {name: zoo.build(name).eval() for name in VARIANTS}


@pytest.mark.parametrize("name", VARIANTS)
def test_parameter_count(models: dict[str, nn.Module], name: str) -> None:
    assert sum(p.numel() for p in models[name].parameters()) == PARAMS[name]


@pytest.mark.parametrize("name", VARIANTS)
def test_module_counts(models: dict[str, nn.Module], name: str) -> None:
    counts = collections.Counter(type(m) for m in models[name].modules())
    assert counts[nn.Conv2d] == 23
    assert counts[nn.BatchNorm2d] == 16
    assert counts[nn.Linear] == 18
    # 9 applied + the reference's unused LayerNorm(C) in each of the three Lo2 blocks.
    assert counts[nn.LayerNorm] == 12


@pytest.mark.parametrize("name", VARIANTS)
def test_forward_calls(models: dict[str, nn.Module], name: str) -> None:
    model = models[name]
    applied: collections.Counter[type] = collections.Counter()
    kinds = (nn.Conv2d, nn.BatchNorm2d, nn.LayerNorm, nn.Linear, nn.GELU)
    hooks = [
        m.register_forward_hook(lambda mod, *_: applied.update([type(mod)]))
        for m in model.modules()
        if isinstance(m, kinds)
    ]
    try:
        with torch.no_grad(), _CallCounter() as counter:
            y = model(torch.randn(1, 3, 64, 64))
    finally:
        for h in hooks:
            h.remove()
    assert y.shape == (1, 1, 64, 64)
    assert counter.calls["roll"] == ROLLS[name]
    assert counter.calls["chunk"] == 12
    assert counter.calls["cat"] == 18
    assert counter.calls["interpolate"] == 4
    assert applied == {
        nn.Conv2d: 23,
        nn.BatchNorm2d: 16,
        nn.LayerNorm: 9,
        nn.Linear: 18,
        nn.GELU: 9,
    }


def test_output_shape_and_determinism(models: dict[str, nn.Module]) -> None:
    model = models["rolling_unet_s"]
    x = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        a, b = model(x), model(x)
        batched = model(torch.randn(2, 3, 96, 96))
    assert a.shape == (1, 1, 64, 64)
    assert batched.shape == (2, 1, 96, 96)
    assert torch.isfinite(a).all()
    assert torch.equal(a, b)


def test_other_classes_and_channels() -> None:
    model = zoo.build("rolling_unet_s", num_classes=3, input_channels=1).eval()
    with torch.no_grad():
        assert model(torch.randn(1, 1, 32, 48)).shape == (1, 3, 32, 48)


@pytest.mark.parametrize("sign,dim", [(1, 2), (1, 3), (-1, 3)])
def test_roll_closed_form(sign: int, dim: int) -> None:
    # out[b, c, h, w] = x[b, c, (h - sign·c) mod H, w] for dim 2, likewise on w for dim 3.
    x = torch.randn(2, 7, 5, 6)
    out = _roll_channels(x, sign, dim)
    size = x.shape[dim]
    for c in range(x.shape[1]):
        src = (torch.arange(size) - sign * c) % size
        assert torch.equal(out[:, c], x[:, c].index_select(dim - 1, src))


def test_linear_inputs_are_transposed_views() -> None:
    block = Lo2(8).eval()
    contiguous: dict[str, bool] = {}
    for name in ("fc1", "fc2", "fc3", "fc4"):
        getattr(block, name).register_forward_pre_hook(
            lambda mod, args, name=name: contiguous.__setitem__(name, args[0].is_contiguous())
        )
    with torch.no_grad():
        block(torch.randn(2, 4 * 4, 8), 4, 4)
    assert contiguous == {"fc1": False, "fc2": False, "fc3": False, "fc4": False}
