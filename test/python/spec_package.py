"""A small package with Pytorch-UNet's import structure, for the SPEC tests.

``unet/__init__.py`` re-exports the model with a relative import,
``unet/unet_model.py`` star-imports its building blocks relatively and
``unet/unet_parts.py`` holds them; ``unet/heads.py`` imports the package by
its own name (absolute). Written for these tests (not upstream's code).
"""

from __future__ import annotations

from pathlib import Path

INIT = '''\
"""A small U-Net package."""
from .unet_model import UNet

__version__ = "0.1"
'''

MODEL = '''\
"""The network, assembled from unet_parts."""
from .unet_parts import *


class UNet(nn.Module):
    def __init__(self, n_channels=3, n_classes=2, width=WIDTH):
        super().__init__()
        if width < 2:
            raise ValueError(f"width {width} is too small")  # RAISE
        self.inc = DoubleConv(n_channels, width)
        self.down = Down(width, 2 * width)
        self.up = Up(2 * width, width)
        self.outc = OutConv(width, n_classes)

    def forward(self, x):
        skip = self.inc(x)
        return self.outc(self.up(self.down(skip), skip))
'''

PARTS = '''\
"""Building blocks of the network."""
import torch
from torch import nn

__all__ = ["nn", "DoubleConv", "Down", "Up", "OutConv"]


class DoubleConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.body(x)  # FORWARD


class Down(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.pool = nn.MaxPool2d(2)
        self.conv = DoubleConv(cin, cout)

    def forward(self, x):
        return self.conv(self.pool(x))


class Up(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.up = nn.ConvTranspose2d(cin, cin // 2, 2, stride=2)
        self.conv = DoubleConv(cin, cout)

    def forward(self, x, skip):
        return self.conv(torch.cat([skip, self.up(x)], dim=1))


class OutConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1)

    def forward(self, x):
        return self.conv(x)
'''

HEADS = '''\
"""A head importing the package by its own name."""
from unet.unet_parts import OutConv


def seg_head(width=4, n_classes=2):
    return OutConv(width, n_classes)
'''

#: Op counts of UNet's graph, from its definition above: three DoubleConvs
#: (conv, batch norm, relu each), the 1x1 output conv, one pool, one
#: transposed conv and one concatenation.
UNET_OPS = {"conv2d": 4, "batch_norm": 3, "relu": 3, "max_pool2d": 1, "conv_transpose2d": 1, "concat": 1}


def write_unet_package(root: Path, width: int = 4) -> Path:
    """Writes ``root/unet/`` (UNet's default width ``width``) and returns it."""
    package = root / "unet"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(INIT)
    (package / "unet_model.py").write_text(MODEL.replace("WIDTH", str(width)))
    (package / "unet_parts.py").write_text(PARTS)
    (package / "heads.py").write_text(HEADS)
    return package


def line_of(path: Path, marker: str) -> int:
    """The 1-based line of ``path`` that contains ``marker``."""
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if marker in text)
