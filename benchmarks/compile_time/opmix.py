"""A synthetic network with Rolling-UNet's op mix, sized by op count.

``OpMix(ops=N)`` is a plain ``nn.Module`` that ``python -m gpuopt.export
benchmarks/compile_time/opmix.py:OpMix --kwargs '{"ops": N}'`` turns into a seg
graph of about N ops (within one block). Each block is what Rolling-UNet is
made of: a per-channel slice/roll/concat shift, a 3x3 convolution, and a token
MLP (reshape, permute, layer norm, linear, GELU, linear, permute back, reshape)
with a residual add. Every layer has its own parameters and every roll a
non-zero shift that differs from its neighbours', so neither CSE nor the
folders of the lowering pipeline can merge or drop ops: the compiler sees N
ops. It exists to measure compile time against op count
(benchmarks/compile_time/compile_time.py).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["OpMix", "ops_per_block"]

_CHANNELS = 8
_SIDE = 8


def ops_per_block(channels: int = _CHANNELS) -> int:
    """Seg ops one block exports to, counting its ``seg.param``s."""
    shift = 2 * channels + 1  # a slice and a roll per channel, one concat
    conv = 3  # two params, the convolution
    # reshape+permute, layer norm, linear, GELU, linear, permute+reshape, add
    mlp = 2 + 3 + 3 + 1 + 3 + 2 + 1
    return shift + conv + mlp


class _Block(nn.Module):
    def __init__(self, index: int, channels: int) -> None:
        super().__init__()
        self.index = index
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm = nn.LayerNorm(channels)
        self.fc1 = nn.Linear(channels, 2 * channels)
        self.fc2 = nn.Linear(2 * channels, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        # Shifts 1..h-1, varying with the block and the channel, never 0 mod h
        # (a full-period roll folds away).
        dim = 2 + self.index % 2
        rolled = [torch.roll(x[:, k : k + 1], 1 + (self.index + k) % (h - 1), dim) for k in range(c)]
        y = self.conv(torch.cat(rolled, 1))
        t = y.reshape(n, c, h * w).permute(0, 2, 1)
        t = self.fc2(F.gelu(self.fc1(self.norm(t))))
        return x + t.permute(0, 2, 1).reshape(n, c, h, w)


class OpMix(nn.Module):
    """``ops // ops_per_block()`` blocks (at least one) on a 1x8x8x8 input."""

    def __init__(self, ops: int = 1000, channels: int = _CHANNELS) -> None:
        super().__init__()
        blocks = max(1, ops // ops_per_block(channels))
        self.blocks = nn.Sequential(*(_Block(i, channels) for i in range(blocks)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


def example_input() -> torch.Tensor:
    """The input shape the benchmark exports with."""
    return torch.randn(1, _CHANNELS, _SIDE, _SIDE)
