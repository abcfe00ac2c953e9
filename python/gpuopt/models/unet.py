"""Classic UNet in the widely used "milesial" configuration (Pytorch-UNet).

Encoder: DoubleConv (``[Conv3x3 (no bias) -> BN -> ReLU] x 2``) at widths 64, 128,
256, 512, 1024 with 2x2 max pooling between them. Decoder: ``ConvTranspose2d``
2x2 / stride 2 (with bias), zero-pad to the skip's size, concatenate
``[skip, upsampled]`` on channels, DoubleConv; a final Conv1x1 gives logits.

``bilinear=True`` replaces the transposed convolutions by ``Upsample(x2,
bilinear, align_corners=True)`` and, as in milesial, halves the bottleneck and
the decoder outputs so that the concatenated channel counts still line up
(17,262,977 parameters for 1 class instead of 31,037,633).

Any input side works (the pad-to-match step absorbs odd sizes); sides divisible
by 16 need no padding.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class DoubleConv(nn.Sequential):
    """``[Conv3x3 (no bias) -> BatchNorm -> ReLU] x 2``, optionally with a different middle width."""

    def __init__(self, in_channels: int, out_channels: int, mid_channels: int | None = None):
        mid = mid_channels or out_channels
        super().__init__(
            nn.Conv2d(in_channels, mid, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(mid),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )


class Down(nn.Sequential):
    """2x2 max pooling followed by a :class:`DoubleConv`."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__(nn.MaxPool2d(2), DoubleConv(in_channels, out_channels))


class Up(nn.Module):
    """Upsample ``x``, pad it to the skip's size, concatenate ``[skip, x]``, DoubleConv."""

    def __init__(self, in_channels: int, out_channels: int, bilinear: bool):
        super().__init__()
        self.up: nn.Module
        if bilinear:
            # No learned upsampling: the DoubleConv halves the widths instead.
            self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
            self.conv = DoubleConv(in_channels, out_channels, in_channels // 2)
        else:
            self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
            self.conv = DoubleConv(in_channels, out_channels)

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        """Decodes ``x`` (coarse) with the encoder feature ``skip`` (twice its resolution)."""
        x = self.up(x)
        dy = skip.shape[2] - x.shape[2]
        dx = skip.shape[3] - x.shape[3]
        x = F.pad(x, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        return self.conv(torch.cat([skip, x], dim=1))


class UNet(nn.Module):
    """The milesial UNet: 4 down and 4 up stages, logits of shape (B, num_classes, H, W)."""

    def __init__(self, num_classes: int = 1, input_channels: int = 3, bilinear: bool = False):
        super().__init__()
        factor = 2 if bilinear else 1
        self.inc = DoubleConv(input_channels, 64)
        self.down1 = Down(64, 128)
        self.down2 = Down(128, 256)
        self.down3 = Down(256, 512)
        self.down4 = Down(512, 1024 // factor)
        self.up1 = Up(1024, 512 // factor, bilinear)
        self.up2 = Up(512, 256 // factor, bilinear)
        self.up3 = Up(256, 128 // factor, bilinear)
        self.up4 = Up(128, 64, bilinear)
        self.outc = nn.Conv2d(64, num_classes, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Segments ``x`` (B, input_channels, H, W) into logits (B, num_classes, H, W)."""
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x4 = self.down3(x3)
        x5 = self.down4(x4)
        x = self.up1(x5, x4)
        x = self.up2(x, x3)
        x = self.up3(x, x2)
        x = self.up4(x, x1)
        return self.outc(x)


def unet(num_classes: int = 1, input_channels: int = 3, bilinear: bool = False) -> UNet:
    """Constructs the milesial UNet (31,037,633 parameters for 1 class, 3 input channels)."""
    return UNet(num_classes=num_classes, input_channels=input_channels, bilinear=bilinear)
