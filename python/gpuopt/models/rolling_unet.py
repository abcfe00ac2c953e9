"""Rolling-UNet (Liu et al., AAAI 2024): a UNet whose two deepest stages mix tokens with rolls.

The network follows the published architecture (variants S / M / L, widths C1..C5 of
[16, 32, 64, 128, 256] times 1 / 2 / 4): three DoubleConv stages, a token stage and a
bottleneck built from "feature incentive" blocks (Conv3x3 -> tokens -> GELU -> LayerNorm) and
Lo2 blocks, and a decoder that *adds* the skips and upsamples bilinearly (align_corners=False).

A Lo2 block runs two OR-MLPs (orthogonal rolling MLPs) and a depthwise-separable conv branch
(DSC) on tokens (B, N, C). An OR-MLP rolls channel c of the NCHW map by c (or -c) pixels along
H or W, cyclically, around a Linear layer.

The idioms of the reference implementation are kept on purpose, because the compiler has to
recognise and beat them, not this file:

- every roll group splits the NCHW map into C one-channel slices with ``torch.chunk``, rolls
  each slice with its own ``torch.roll`` call in a list comprehension and concatenates them
  (4·C ``torch.roll`` calls per Lo2 block, 2048 / 4096 / 8192 per forward for S / M / L);
- the OR-MLP Linear layers consume transposed, non-contiguous token views;
- the DSC branch applies BatchNorm *after* its ReLU;
- Dropout / DropPath layers stay in the graph (identity in eval mode);
- each Lo2 block carries the reference's unused LayerNorm(C): 12 LayerNorm modules, 9 applied.

With ``num_classes=1, input_channels=3`` the variants have 1,783,185 / 7,098,401 / 28,324,929
parameters. The input side must be divisible by 16.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from gpuopt.models._init import init_token_layers

__all__ = ["RollingUNet", "rolling_unet_l", "rolling_unet_m", "rolling_unet_s"]


def _roll_channels(x: torch.Tensor, sign: int, dim: int) -> torch.Tensor:
    """Rolls channel c of the NCHW map ``x`` by ``sign * c`` along ``dim``, one slice at a time."""
    slices = torch.chunk(x, x.shape[1], 1)
    rolled = [torch.roll(x_c, sign * c, dim) for c, x_c in enumerate(slices)]
    return torch.cat(rolled, 1)


class DropPath(nn.Module):
    """Stochastic depth: drops whole samples with probability ``p`` in training."""

    def __init__(self, p: float = 0.0) -> None:
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.p == 0.0 or not self.training:
            return x
        keep = 1.0 - self.p
        mask = x.new_empty((x.shape[0],) + (1,) * (x.dim() - 1)).bernoulli_(keep)
        return x * mask / keep


class DoubleConv(nn.Sequential):
    """[Conv3x3 -> BN -> ReLU] x 2; the decoder variant keeps ``in_ch`` after the first conv."""

    def __init__(self, in_ch: int, out_ch: int, mid_ch: int | None = None) -> None:
        mid_ch = out_ch if mid_ch is None else mid_ch
        super().__init__(
            nn.Conv2d(in_ch, mid_ch, 3, padding=1),
            nn.BatchNorm2d(mid_ch),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, out_ch, 3, padding=1),
            nn.BatchNorm2d(out_ch),
            nn.ReLU(inplace=True),
        )


class FeatureIncentive(nn.Module):
    """Conv3x3 (stride 1) -> tokens (B, H·W, C) -> GELU -> LayerNorm."""

    def __init__(self, in_ch: int, out_ch: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(in_ch, out_ch, 3, stride=1, padding=1)
        self.act = nn.GELU()
        self.norm = nn.LayerNorm(out_ch)
        self.apply(init_token_layers)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, int, int]:
        x = self.proj(x)
        h, w = x.shape[2], x.shape[3]
        tokens = x.flatten(2).transpose(1, 2)
        return self.norm(self.act(tokens)), h, w


class Lo2(nn.Module):
    """Lo2 block on tokens (B, N, C): two OR-MLPs and a DSC branch, fused by Linear layers."""

    def __init__(self, dim: int, drop: float = 0.0, drop_path: float = 0.0) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.fc3 = nn.Linear(dim, dim)
        self.fc4 = nn.Linear(dim, dim)
        self.fc5 = nn.Linear(2 * dim, dim)
        self.fc6 = nn.Linear(2 * dim, dim)
        self.act = nn.GELU()
        self.drop = nn.Dropout(drop)
        self.norm = nn.LayerNorm(2 * dim)
        self.dw_conv = nn.Conv2d(dim, dim, 3, 1, 1, groups=dim)
        self.pw_conv = nn.Conv2d(dim, dim, 1)
        self.dsc_act = nn.ReLU()
        self.dsc_norm = nn.BatchNorm2d(dim)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()
        # The reference block constructs a pre-norm LayerNorm(C) that its forward never applies.
        # It is kept (unused) so that parameter counts and checkpoints match the published model.
        self.unused_norm = nn.LayerNorm(dim)
        self.apply(init_token_layers)

    @staticmethod
    def _to_map(tokens: torch.Tensor, h: int, w: int) -> torch.Tensor:
        b, _, c = tokens.shape
        return tokens.transpose(1, 2).view(b, c, h, w).contiguous()

    @staticmethod
    def _to_tokens(x: torch.Tensor) -> torch.Tensor:
        b, c = x.shape[0], x.shape[1]
        return x.reshape(b, c, -1).contiguous().transpose(1, 2)

    def _or_mlp(
        self,
        x: torch.Tensor,
        h: int,
        w: int,
        first: tuple[int, int],
        second: tuple[int, int],
        fc_a: nn.Linear,
        fc_b: nn.Linear,
    ) -> torch.Tensor:
        """Roll (sign, dim) ``first`` -> fc_a -> GELU -> roll ``second`` -> fc_b."""
        y = self._to_tokens(_roll_channels(self._to_map(x, h, w), *first))
        y = self.drop(self.act(fc_a(y)))
        y = self._to_tokens(_roll_channels(self._to_map(y, h, w), *second))
        return self.drop(fc_b(y))

    def forward(self, x: torch.Tensor, h: int, w: int) -> torch.Tensor:
        b, _, c = x.shape
        # OR-MLP along H then W, and along -W then H.
        x_1 = self._or_mlp(x, h, w, (1, 2), (1, 3), self.fc1, self.fc2)
        x_2 = self._or_mlp(x, h, w, (-1, 3), (1, 2), self.fc3, self.fc4)
        mixed = torch.cat([torch.add(x_1, x), torch.add(x_2, x)], dim=2)
        x1 = torch.add(self.drop(self.fc5(self.norm(mixed))), x)

        x2 = self.pw_conv(self.dw_conv(x.transpose(1, 2).view(b, c, h, w)))
        x2 = self.dsc_norm(self.dsc_act(x2)).flatten(2).transpose(1, 2)

        out = self.drop(self.fc6(torch.cat([x1, x2], dim=2)))
        return self.drop_path(out)


class RollingUNet(nn.Module):
    """Rolling-UNet with encoder widths ``widths`` (C1..C5) and last decoder width ``widths[0] // 2``."""

    def __init__(
        self,
        widths: tuple[int, int, int, int, int],
        num_classes: int = 1,
        input_channels: int = 3,
        drop_rate: float = 0.0,
        bottleneck_drop: float = 0.1,
        drop_path_rate: float = 0.0,
    ) -> None:
        super().__init__()
        c1, c2, c3, c4, c5 = widths
        self.conv1 = DoubleConv(input_channels, c1)
        self.conv2 = DoubleConv(c1, c2)
        self.conv3 = DoubleConv(c2, c3)
        self.pool = nn.MaxPool2d(2)

        # Stochastic depth as in the reference: the outer blocks get rate 0, the bottleneck the
        # middle of linspace(0, drop_path_rate, 3).
        dpr = torch.linspace(0, drop_path_rate, 3).tolist()
        self.enc_embed = FeatureIncentive(c3, c4)
        self.enc_block = Lo2(c4, drop_rate, dpr[0])
        self.enc_norm = nn.LayerNorm(c4)
        self.mid_embed = FeatureIncentive(c4, c5)
        self.mid_block = Lo2(c5, drop_rate + bottleneck_drop, dpr[1])
        self.mid_norm = nn.LayerNorm(c5)
        self.mid_out = FeatureIncentive(c5, c4)
        self.dec_block = Lo2(c4, drop_rate, dpr[0])
        self.dec_norm = nn.LayerNorm(c4)

        self.dec4_conv = nn.Conv2d(c4, c3, 3, stride=1, padding=1)
        self.dec4_bn = nn.BatchNorm2d(c3)
        self.dec3 = DoubleConv(c3, c2, mid_ch=c3)
        self.dec2 = DoubleConv(c2, c1, mid_ch=c2)
        self.dec1 = DoubleConv(c1, c1 // 2, mid_ch=c1)
        self.final = nn.Conv2d(c1 // 2, num_classes, kernel_size=1)

    @staticmethod
    def _up(x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, scale_factor=(2, 2), mode="bilinear", align_corners=False)

    @staticmethod
    def _tokens_to_map(tokens: torch.Tensor, h: int, w: int) -> torch.Tensor:
        b = tokens.shape[0]
        return tokens.reshape(b, h, w, -1).permute(0, 3, 1, 2).contiguous()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t1 = self.conv1(x)
        t2 = self.conv2(self.pool(t1))
        t3 = self.conv3(self.pool(t2))
        out = self.pool(t3)

        out, h, w = self.enc_embed(out)
        out = self.enc_norm(self.enc_block(out, h, w))
        t4 = self._tokens_to_map(out, h, w)

        out, h, w = self.mid_embed(self.pool(t4))
        out = self.mid_norm(self.mid_block(out, h, w))
        out, h, w = self.mid_out(self._tokens_to_map(out, h, w))
        out = self._up(self._tokens_to_map(out, h, w))

        out = torch.add(out, t4)
        h, w = out.shape[2], out.shape[3]
        out = self.dec_norm(self.dec_block(out.flatten(2).transpose(1, 2), h, w))
        out = self._tokens_to_map(out, h, w)
        out = self._up(F.relu(self.dec4_bn(self.dec4_conv(out))))

        out = self._up(self.dec3(torch.add(out, t3)))
        out = self._up(self.dec2(torch.add(out, t2)))
        out = self.dec1(torch.add(out, t1))
        return self.final(out)


def rolling_unet_s(num_classes: int = 1, input_channels: int = 3, **kwargs: Any) -> RollingUNet:
    """Rolling-UNet-S: widths 16..256, 1,783,185 parameters for one class."""
    kwargs.setdefault("bottleneck_drop", 0.1)
    return RollingUNet((16, 32, 64, 128, 256), num_classes, input_channels, **kwargs)


def rolling_unet_m(num_classes: int = 1, input_channels: int = 3, **kwargs: Any) -> RollingUNet:
    """Rolling-UNet-M: widths 32..512, 7,098,401 parameters for one class."""
    kwargs.setdefault("bottleneck_drop", 0.2)
    return RollingUNet((32, 64, 128, 256, 512), num_classes, input_channels, **kwargs)


def rolling_unet_l(num_classes: int = 1, input_channels: int = 3, **kwargs: Any) -> RollingUNet:
    """Rolling-UNet-L: widths 64..1024, 28,324,929 parameters for one class."""
    kwargs.setdefault("bottleneck_drop", 0.3)
    return RollingUNet((64, 128, 256, 512, 1024), num_classes, input_channels, **kwargs)
