"""UNeXt-Stripe: a documented RECONSTRUCTION, not the authors' code.

No public code exists for UNeXt-Stripe. The seed paper describes it only as a
UNeXt-like network built from standard convolutions, with few channels at high
resolution (E1 3->16 at H/2, E2 16->32 at H/4, ..., E4 160 channels at H/16) and
an "edge-enhanced stripe decoder" whose block runs in parallel a main Conv3x3,
two Conv3x3 edge branches initialised as Sobel-x / Sobel-y filters and a Conv1x1
high-frequency branch, then fuses them. It reports 3.48 M parameters and
1.922 "GFLOPs" (= 2 x thop MACs at 224x224, where thop counts conv and linear
MACs plus 4 * numel per BatchNorm output and nothing for F.interpolate).

This module fills the gaps with the choices below; everything the description
states is kept, everything else follows UNeXt:

* Encoder (UNeXt's conv stages, widths 16, 32, 128 as in UNeXt):
  E1-E3 = ``Conv3x3 -> BN -> MaxPool 2x2 -> ReLU``: 3->16 (H/2), 16->32 (H/4),
  32->128 (H/8). E4 = ``Conv3x3 stride 2 -> BN -> ReLU``, 128->160 (H/16);
  the bottleneck E5 = the same, 160->288 (H/32).
* Decoder stage (UNeXt's order: convolve at the low resolution, then upsample):
  :class:`EdgeEnhancedBlock` ``cin -> cout``, bilinear x2 (``F.interpolate``,
  align_corners=False as in UNeXt), add the encoder skip. At H/16 and H/8, where
  UNeXt runs its shifted-MLP blocks (shift along H, then along W), a
  :class:`StripeBlock` follows: its standard-conv analogue, a residual
  ``Conv(k x 1) -> BN -> ReLU -> Conv(1 x k) -> BN`` with k = 7. Stages:
  288->160 (+E4), 160->128 (+E3), 128->32 (+E2), 32->16 (+E1), 16->16; then a
  Conv1x1 gives logits at (H, W).
* :class:`EdgeEnhancedBlock`: main Conv3x3, Sobel-x Conv3x3, Sobel-y Conv3x3 and
  Conv1x1 branches (each ``cin -> cout``, no bias), fused by concatenation and a
  Conv1x1 (``4 cout -> cout``), BN, ReLU. Everything before the BN is linear,
  so at inference the block is exactly one Conv3x3 (a re-parameterisation the
  compiler may perform).

How it meets the figures: the bottleneck width (288) is the one free width and
was fitted to them. With 1 class and 3 input channels the model has 3,405,793
parameters (-2.1 % from 3.48 M) and 0.9489 G thop MACs at 224x224, i.e.
2 x thop = 1.898 G (-1.3 % from 1.922 G); true MACs (convolutions only) are 0.9399 G.
Input sides must be divisible by 32.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

_SOBEL_X = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]])


def _sobel_init(conv: nn.Conv2d, kernel: torch.Tensor) -> None:
    """Output channel o applies ``kernel`` to input channel ``o % in_channels``; zero elsewhere."""
    with torch.no_grad():
        conv.weight.zero_()
        for o in range(conv.out_channels):
            conv.weight[o, o % conv.in_channels] = kernel


class EdgeEnhancedBlock(nn.Module):
    """Parallel main / Sobel-x / Sobel-y / high-frequency branches, fused by Conv1x1 -> BN -> ReLU."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.main = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
        self.edge_x = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
        self.edge_y = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
        self.high_freq = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.fuse = nn.Conv2d(4 * out_channels, out_channels, 1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        _sobel_init(self.edge_x, _SOBEL_X)
        _sobel_init(self.edge_y, _SOBEL_X.t())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Maps ``x`` (B, in_channels, H, W) to (B, out_channels, H, W)."""
        branches = [self.main(x), self.edge_x(x), self.edge_y(x), self.high_freq(x)]
        return F.relu(self.bn(self.fuse(torch.cat(branches, dim=1))))


class StripeBlock(nn.Module):
    """Residual stripe convolutions: ``ReLU(x + BN(Conv 1xk(ReLU(BN(Conv kx1(x))))))``."""

    def __init__(self, channels: int, k: int = 7):
        super().__init__()
        self.conv_h = nn.Conv2d(channels, channels, (k, 1), padding=(k // 2, 0), bias=False)
        self.bn_h = nn.BatchNorm2d(channels)
        self.conv_w = nn.Conv2d(channels, channels, (1, k), padding=(0, k // 2), bias=False)
        self.bn_w = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Maps ``x`` (B, C, H, W) to a tensor of the same shape."""
        y = F.relu(self.bn_h(self.conv_h(x)))
        return F.relu(x + self.bn_w(self.conv_w(y)))


class UNeXtStripe(nn.Module):
    """The reconstructed UNeXt-Stripe; see the module docstring for the choices made."""

    def __init__(
        self,
        num_classes: int = 1,
        input_channels: int = 3,
        widths: tuple[int, int, int, int, int] = (16, 32, 128, 160, 288),
        stripe_kernel: int = 7,
    ):
        super().__init__()
        c1, c2, c3, c4, c5 = widths
        self.encoder1 = nn.Conv2d(input_channels, c1, 3, padding=1, bias=False)
        self.encoder2 = nn.Conv2d(c1, c2, 3, padding=1, bias=False)
        self.encoder3 = nn.Conv2d(c2, c3, 3, padding=1, bias=False)
        self.encoder4 = nn.Conv2d(c3, c4, 3, stride=2, padding=1, bias=False)
        self.encoder5 = nn.Conv2d(c4, c5, 3, stride=2, padding=1, bias=False)
        self.ebn1 = nn.BatchNorm2d(c1)
        self.ebn2 = nn.BatchNorm2d(c2)
        self.ebn3 = nn.BatchNorm2d(c3)
        self.ebn4 = nn.BatchNorm2d(c4)
        self.ebn5 = nn.BatchNorm2d(c5)

        self.decoder1 = EdgeEnhancedBlock(c5, c4)
        self.stripe1 = StripeBlock(c4, stripe_kernel)
        self.decoder2 = EdgeEnhancedBlock(c4, c3)
        self.stripe2 = StripeBlock(c3, stripe_kernel)
        self.decoder3 = EdgeEnhancedBlock(c3, c2)
        self.decoder4 = EdgeEnhancedBlock(c2, c1)
        self.decoder5 = EdgeEnhancedBlock(c1, c1)
        self.final = nn.Conv2d(c1, num_classes, kernel_size=1)

    @staticmethod
    def _up(x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, scale_factor=(2, 2), mode="bilinear")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Segments ``x`` (B, input_channels, H, W), H and W divisible by 32, into logits."""
        t1 = F.relu(F.max_pool2d(self.ebn1(self.encoder1(x)), 2, 2))
        t2 = F.relu(F.max_pool2d(self.ebn2(self.encoder2(t1)), 2, 2))
        t3 = F.relu(F.max_pool2d(self.ebn3(self.encoder3(t2)), 2, 2))
        t4 = F.relu(self.ebn4(self.encoder4(t3)))
        out = F.relu(self.ebn5(self.encoder5(t4)))

        out = self.stripe1(self._up(self.decoder1(out)) + t4)
        out = self.stripe2(self._up(self.decoder2(out)) + t3)
        out = self._up(self.decoder3(out)) + t2
        out = self._up(self.decoder4(out)) + t1
        out = self._up(self.decoder5(out))
        return self.final(out)


def unext_stripe(num_classes: int = 1, input_channels: int = 3) -> UNeXtStripe:
    """Constructs the UNeXt-Stripe reconstruction (3,405,793 parameters for 1 class)."""
    return UNeXtStripe(num_classes=num_classes, input_channels=input_channels)
