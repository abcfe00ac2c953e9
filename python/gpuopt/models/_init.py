"""Weight initialisation shared by the zoo's token-mixing models."""

from __future__ import annotations

import math

from torch import nn


def init_token_layers(m: nn.Module) -> None:
    """The initialisation UNeXt and Rolling-UNet use for their token-mixing
    parts (apply with ``module.apply``): truncated-normal Linear weights,
    unit LayerNorms, He-style (fan-out) normal convolutions, zero biases."""
    if isinstance(m, nn.Linear):
        nn.init.trunc_normal_(m.weight, std=0.02)
        if m.bias is not None:
            nn.init.zeros_(m.bias)
    elif isinstance(m, nn.LayerNorm):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Conv2d):
        fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels // m.groups
        nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / fan_out))
        if m.bias is not None:
            nn.init.zeros_(m.bias)
