"""The gpuopt model zoo: segmentation networks written in their papers' idioms.

The models are deliberately *not* pre-optimized: Rolling-UNet rolls one-channel
slices one `torch.roll` at a time, UNeXt pads/chunks/rolls/crops, Linear layers
consume transposed token views. The compiler must earn its speedups.

``build(name, **kwargs)`` constructs a zoo model (in eval mode is the caller's
choice); ``names()`` lists them.
"""

from __future__ import annotations

import importlib
from typing import Any

from torch import nn

# name -> (module, constructor). Imported lazily so that one broken model file
# cannot make the whole zoo unusable.
_ZOO: dict[str, tuple[str, str]] = {
    "unet": ("gpuopt.models.unet", "unet"),
    "rolling_unet_s": ("gpuopt.models.rolling_unet", "rolling_unet_s"),
    "rolling_unet_m": ("gpuopt.models.rolling_unet", "rolling_unet_m"),
    "rolling_unet_l": ("gpuopt.models.rolling_unet", "rolling_unet_l"),
    "unext": ("gpuopt.models.unext", "unext"),
    "unext_s": ("gpuopt.models.unext", "unext_s"),
    "unext_stripe": ("gpuopt.models.unext_stripe", "unext_stripe"),
}


def names() -> list[str]:
    """Names accepted by :func:`build`."""
    return list(_ZOO)


def build(name: str, **kwargs: Any) -> nn.Module:
    """Constructs zoo model ``name`` with constructor keyword arguments ``kwargs``."""
    if name not in _ZOO:
        raise KeyError(f"unknown zoo model '{name}'; available: {', '.join(_ZOO)}")
    module, ctor = _ZOO[name]
    return getattr(importlib.import_module(module), ctor)(**kwargs)
