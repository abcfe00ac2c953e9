"""UNeXt (Valanarasu & Patel, MICCAI 2022) in the idioms of its reference code.

Deliberately not pre-optimized: the shifted MLP zero-pads with ``F.pad``,
splits channels with ``torch.chunk``, rolls every chunk with its own
``torch.roll``, concatenates, and crops back with two ``torch.narrow``; the
Linear layers consume transposed token views. Per forward pass: 4 shifted
blocks x 2 shifts = 8 ``F.pad``, 8 ``torch.chunk``, 40 ``torch.roll``,
8 ``torch.cat`` and 16 ``torch.narrow`` calls. Because every shift is at most
the padding (2), each pad/roll/crop group is a zero-filled, non-cyclic shift of
its channel chunk.

Architecture (widths ``c1..c5``):

* Conv stages 1-3: ``Conv3x3 -> BN -> MaxPool 2x2 -> ReLU`` (in -> c1 -> c2 -> c3);
  outputs t1 (H/2), t2 (H/4), t3 (H/8).
* Token stage 4 and bottleneck: overlapping patch embedding (Conv3x3 stride 2,
  to tokens, LayerNorm), one pre-LN residual shifted block, LayerNorm, back to
  NCHW; t4 = (c4, H/16), bottleneck (c5, H/32).
* Decoder: ``Conv3x3 -> BN -> bilinear x2 (align_corners=False) -> ReLU -> + skip``;
  the first two decoder stages then run a shifted block and a LayerNorm; the
  last stage has no BN and no skip; a final Conv1x1 gives logits at (H, W).

``unext`` is the reference configuration (widths 16, 32, 128, 160, 256; the paper
text says 32, 64, ... but the code is the reference): 1,471,921 parameters for
1 class. ``unext_s`` is the repository's ``UNext_S`` (widths 8, 16, 32, 64, 128):
253,561 parameters for 1 class. Input sides must be divisible by 32.

Unlike the reference code, ``input_channels`` is honoured (the original hard-codes
3 input channels in its first convolution); the parameter counts above are for 3.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from gpuopt.models._init import init_token_layers


class DWConv(nn.Module):
    """Depthwise Conv3x3 (with bias) applied to tokens (B, N, C) through their NCHW view."""

    def __init__(self, dim: int):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 3, 1, 1, bias=True, groups=dim)

    def forward(self, x: torch.Tensor, H: int, W: int) -> torch.Tensor:
        """Convolves tokens ``x`` (B, H*W, C) and returns tokens of the same shape."""
        B, _, C = x.shape
        x = x.transpose(1, 2).view(B, C, H, W)
        x = self.dwconv(x)
        return x.flatten(2).transpose(1, 2)


class ShiftMLP(nn.Module):
    """Tokenized shifted MLP: shift along H, fc1, DWConv, GELU, shift along W, fc2."""

    def __init__(self, dim: int, hidden: int | None = None, shift_size: int = 5):
        super().__init__()
        hidden = hidden or dim
        self.fc1 = nn.Linear(dim, hidden)
        self.dwconv = DWConv(hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)
        self.shift_size = shift_size
        self.pad = shift_size // 2

    def _shift(self, x: torch.Tensor, dim: int, H: int, W: int) -> torch.Tensor:
        """Shifts channel chunk i of tokens ``x`` by ``i - pad`` along ``dim`` (2 = H, 3 = W).

        Written as in the reference: zero-pad, chunk, roll each chunk, concat,
        crop back, and return a transposed (non-contiguous) token view.
        """
        B, _, C = x.shape
        xn = x.transpose(1, 2).view(B, C, H, W).contiguous()
        xn = F.pad(xn, (self.pad, self.pad, self.pad, self.pad), "constant", 0)
        xs = torch.chunk(xn, self.shift_size, 1)
        shifted = [torch.roll(x_c, s, dim) for x_c, s in zip(xs, range(-self.pad, self.pad + 1))]
        x_cat = torch.cat(shifted, 1)
        x_cat = torch.narrow(x_cat, 2, self.pad, H)
        x_s = torch.narrow(x_cat, 3, self.pad, W)
        x_s = x_s.reshape(B, C, H * W).contiguous()
        return x_s.transpose(1, 2)

    def forward(self, x: torch.Tensor, H: int, W: int) -> torch.Tensor:
        """Maps tokens ``x`` (B, H*W, C) to tokens of the same shape."""
        x = self.fc1(self._shift(x, 2, H, W))
        x = self.act(self.dwconv(x, H, W))
        return self.fc2(self._shift(x, 3, H, W))


class ShiftedBlock(nn.Module):
    """Pre-LayerNorm residual block ``x + ShiftMLP(LN(x))`` (MLP ratio 1)."""

    def __init__(self, dim: int):
        super().__init__()
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = ShiftMLP(dim)
        self.apply(init_token_layers)

    def forward(self, x: torch.Tensor, H: int, W: int) -> torch.Tensor:
        """Maps tokens ``x`` (B, H*W, C) to tokens of the same shape."""
        return x + self.mlp(self.norm2(x), H, W)


class OverlapPatchEmbed(nn.Module):
    """Conv3x3 stride 2 (padding 1), flattened to tokens, then LayerNorm."""

    def __init__(self, in_channels: int, embed_dim: int):
        super().__init__()
        self.proj = nn.Conv2d(in_channels, embed_dim, kernel_size=3, stride=2, padding=1)
        self.norm = nn.LayerNorm(embed_dim)
        self.apply(init_token_layers)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, int, int]:
        """Returns tokens (B, H/2 * W/2, embed_dim) and the token grid's H and W."""
        x = self.proj(x)
        _, _, H, W = x.shape
        x = x.flatten(2).transpose(1, 2)
        return self.norm(x), H, W


class UNeXt(nn.Module):
    """UNeXt with conv widths ``c1, c2, c3`` and token widths ``c4, c5``."""

    def __init__(
        self,
        num_classes: int = 1,
        input_channels: int = 3,
        widths: tuple[int, int, int, int, int] = (16, 32, 128, 160, 256),
    ):
        super().__init__()
        c1, c2, c3, c4, c5 = widths
        self.encoder1 = nn.Conv2d(input_channels, c1, 3, stride=1, padding=1)
        self.encoder2 = nn.Conv2d(c1, c2, 3, stride=1, padding=1)
        self.encoder3 = nn.Conv2d(c2, c3, 3, stride=1, padding=1)
        self.ebn1 = nn.BatchNorm2d(c1)
        self.ebn2 = nn.BatchNorm2d(c2)
        self.ebn3 = nn.BatchNorm2d(c3)

        self.patch_embed3 = OverlapPatchEmbed(c3, c4)
        self.block1 = nn.ModuleList([ShiftedBlock(c4)])
        self.norm3 = nn.LayerNorm(c4)
        self.patch_embed4 = OverlapPatchEmbed(c4, c5)
        self.block2 = nn.ModuleList([ShiftedBlock(c5)])
        self.norm4 = nn.LayerNorm(c5)

        self.decoder1 = nn.Conv2d(c5, c4, 3, stride=1, padding=1)
        self.decoder2 = nn.Conv2d(c4, c3, 3, stride=1, padding=1)
        self.decoder3 = nn.Conv2d(c3, c2, 3, stride=1, padding=1)
        self.decoder4 = nn.Conv2d(c2, c1, 3, stride=1, padding=1)
        self.decoder5 = nn.Conv2d(c1, c1, 3, stride=1, padding=1)
        self.dbn1 = nn.BatchNorm2d(c4)
        self.dbn2 = nn.BatchNorm2d(c3)
        self.dbn3 = nn.BatchNorm2d(c2)
        self.dbn4 = nn.BatchNorm2d(c1)
        self.dblock1 = nn.ModuleList([ShiftedBlock(c4)])
        self.dnorm3 = nn.LayerNorm(c4)
        self.dblock2 = nn.ModuleList([ShiftedBlock(c3)])
        self.dnorm4 = nn.LayerNorm(c3)

        self.final = nn.Conv2d(c1, num_classes, kernel_size=1)

    @staticmethod
    def _up(x: torch.Tensor) -> torch.Tensor:
        # The reference relies on F.interpolate's default align_corners (False).
        return F.interpolate(x, scale_factor=(2, 2), mode="bilinear")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Segments ``x`` (B, input_channels, H, W), H and W divisible by 32, into logits."""
        B = x.shape[0]
        out = F.relu(F.max_pool2d(self.ebn1(self.encoder1(x)), 2, 2))
        t1 = out
        out = F.relu(F.max_pool2d(self.ebn2(self.encoder2(out)), 2, 2))
        t2 = out
        out = F.relu(F.max_pool2d(self.ebn3(self.encoder3(out)), 2, 2))
        t3 = out

        out, H, W = self.patch_embed3(out)
        for blk in self.block1:
            out = blk(out, H, W)
        out = self.norm3(out)
        out = out.reshape(B, H, W, -1).permute(0, 3, 1, 2).contiguous()
        t4 = out

        out, H, W = self.patch_embed4(out)
        for blk in self.block2:
            out = blk(out, H, W)
        out = self.norm4(out)
        out = out.reshape(B, H, W, -1).permute(0, 3, 1, 2).contiguous()

        out = F.relu(self._up(self.dbn1(self.decoder1(out))))
        out = torch.add(out, t4)
        _, _, H, W = out.shape
        out = out.flatten(2).transpose(1, 2)
        for blk in self.dblock1:
            out = blk(out, H, W)
        out = self.dnorm3(out)
        out = out.reshape(B, H, W, -1).permute(0, 3, 1, 2).contiguous()

        out = F.relu(self._up(self.dbn2(self.decoder2(out))))
        out = torch.add(out, t3)
        _, _, H, W = out.shape
        out = out.flatten(2).transpose(1, 2)
        for blk in self.dblock2:
            out = blk(out, H, W)
        out = self.dnorm4(out)
        out = out.reshape(B, H, W, -1).permute(0, 3, 1, 2).contiguous()

        out = F.relu(self._up(self.dbn3(self.decoder3(out))))
        out = torch.add(out, t2)
        out = F.relu(self._up(self.dbn4(self.decoder4(out))))
        out = torch.add(out, t1)
        out = F.relu(self._up(self.decoder5(out)))
        return self.final(out)


def unext(num_classes: int = 1, input_channels: int = 3) -> UNeXt:
    """Constructs the reference UNeXt (1,471,921 parameters for 1 class)."""
    return UNeXt(num_classes, input_channels, widths=(16, 32, 128, 160, 256))


def unext_s(num_classes: int = 1, input_channels: int = 3) -> UNeXt:
    """Constructs UNeXt-S, the reference repository's ``UNext_S`` (253,561 parameters, 1 class)."""
    return UNeXt(num_classes, input_channels, widths=(8, 16, 32, 64, 128))
