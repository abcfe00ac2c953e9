"""A model file written the way the papers' repositories write them (not from the zoo).

It is imported unmodified by `python -m gpuopt.export path/to/paper_style.py:PaperNet`:
shapes read from `x.shape`, `B, N, C = x.shape` unpacking, `transpose(1, 2).view(...)`
reshapes, UNeXt-style pad -> chunk -> roll -> narrow shifts, Rolling-UNet-style
per-channel rolls in a list comprehension, in-place ReLU and `+=`, DropPath and Dropout,
slicing with `[:, :, a:b]`, `torch.split`, negative `F.pad` (a crop).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        if self.drop_prob == 0.0 or not self.training:
            return x
        keep = 1 - self.drop_prob
        mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep)
        return x * mask / keep


class ShiftMLP(nn.Module):
    def __init__(self, dim, shift_size=5):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.dwconv = nn.Conv2d(dim, dim, 3, 1, 1, groups=dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(dim, dim)
        self.drop = nn.Dropout(0.1)
        self.shift_size = shift_size
        self.pad = shift_size // 2

    def forward(self, x, H, W):
        B, N, C = x.shape
        xn = x.transpose(1, 2).view(B, C, H, W).contiguous()
        xn = F.pad(xn, (self.pad, self.pad, self.pad, self.pad), "constant", 0)
        xs = torch.chunk(xn, self.shift_size, 1)
        x_shift = [torch.roll(x_c, shift, 2) for x_c, shift in zip(xs, range(-self.pad, self.pad + 1))]
        x_cat = torch.cat(x_shift, 1)
        x_cat = torch.narrow(x_cat, 2, self.pad, H)
        x_s = torch.narrow(x_cat, 3, self.pad, W)
        x_s = x_s.reshape(B, C, H * W).contiguous()
        x = self.fc1(x_s.transpose(1, 2))
        x = x.transpose(1, 2).view(B, C, H, W)
        x = self.dwconv(x)
        x = x.flatten(2).transpose(1, 2)
        x = self.drop(self.act(x))
        return self.fc2(x)


class RollMix(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, H, W):
        B, N, C = x.shape
        x_ = x.transpose(1, 2).view(B, C, H, W)
        xs = torch.chunk(x_, C, 1)
        x_shift = [torch.roll(x_c, shift, 3) for x_c, shift in zip(xs, range(0, C))]
        x_ = torch.cat(x_shift, 1).reshape(B, C, H * W).transpose(1, 2)
        return self.norm(self.fc(x_))


class PaperNet(nn.Module):
    def __init__(self, in_ch=3, dim=16, num_classes=2):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(in_ch, dim, 3, 1, 1, bias=False), nn.BatchNorm2d(dim), nn.ReLU(inplace=True)
        )
        self.down = nn.Conv2d(dim, dim, 3, 2, 1)
        self.norm1 = nn.LayerNorm(dim)
        self.shift = ShiftMLP(dim)
        self.roll = RollMix(dim)
        self.drop_path = DropPath(0.1)
        self.up = nn.ConvTranspose2d(dim, dim, 2, 2)
        self.head = nn.Conv2d(2 * dim, num_classes, 1)

    def forward(self, x):
        skip = self.stem(x)
        t = self.down(skip)
        B, C, H, W = t.shape
        t = t.flatten(2).transpose(1, 2)
        t = t + self.drop_path(self.shift(self.norm1(t), H, W))
        t += self.roll(t, H, W)
        t = t.transpose(1, 2).reshape(B, C, H, W)
        t = F.relu(self.up(t), inplace=True)
        left, right = torch.split(t, [C // 2, C - C // 2], dim=1)
        t = torch.cat([right, left[:, :, :, :]], dim=1)
        t = F.pad(F.pad(t, (1, 1, 1, 1)), (-1, -1, -1, -1))
        y = self.head(torch.cat([t, skip], 1))
        y = F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
        return torch.sigmoid(F.max_pool2d(y, 2))


def paper_net_factory(width=8):
    """A function returning a module, as SPEC may also name."""
    return PaperNet(dim=width)


class Unsupported(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return torch.erf(y)  # no seg equivalent


class NotAModule:
    pass
