"""Shift idioms written in place, as published code writes them (test_export_inplace.py).

Every class maps an input of INPUT_SHAPES[name] (default (2, 24, 5, 6)) to a
tensor. The `Bad*` modules must be refused; the line marked `# ERROR` is the
one the message names.
"""

import torch
import torch.nn.functional as F
from torch import nn

INPUT_SHAPES = {
    "TemporalShift": (8, 8, 3, 4),
    "TemporalShiftConv": (8, 8, 3, 4),
    "TemporalShiftZerosView": (8, 8, 3, 4),
    "BadStaleView": (1, 4, 5, 5),
    "RandomWrites": (2, 6, 5, 4),
}


class TemporalShift(nn.Module):
    """TSM's shift (Lin et al., temporal_shift.py, inplace=False), verbatim."""

    def __init__(self, n_segment=4, fold_div=4):
        super().__init__()
        self.n_segment = n_segment
        self.fold_div = fold_div

    def forward(self, x):
        nt, c, h, w = x.size()
        n_batch = nt // self.n_segment
        x = x.view(n_batch, self.n_segment, c, h, w)
        fold = c // self.fold_div
        out = torch.zeros_like(x)
        out[:, :-1, :fold] = x[:, 1:, :fold]  # shift left
        out[:, 1:, fold : 2 * fold] = x[:, :-1, fold : 2 * fold]  # shift right
        out[:, :, 2 * fold :] = x[:, :, 2 * fold :]  # not shift
        return out.view(nt, c, h, w)


class TemporalShiftConv(nn.Module):
    """TSM's residual shift block: shift, then a convolution, plus the input."""

    def __init__(self):
        super().__init__()
        self.shift = TemporalShift()
        self.conv = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        return x + self.conv(self.shift(x))


class TemporalShiftZerosView(nn.Module):
    """The buffer made flat, written through its 5-D view, returned flat."""

    def forward(self, x):
        nt, c, h, w = x.shape
        out = torch.zeros(nt, c, h, w)
        o = out.view(2, 4, c, h, w)
        v = x.view(2, 4, c, h, w)
        o[:, :-1, :2] = v[:, 1:, :2]
        o[:, 1:, 2:4] = v[:, :-1, 2:4]
        o[:, :, 4:] = v[:, :, 4:]
        return out


class ShiftViT(nn.Module):
    """ShiftViT's shift_feat (Wang et al.), verbatim, n_div = 12."""

    def __init__(self, creator="zeros_like"):
        super().__init__()
        self.creator = creator

    def new_buffer(self, x):
        if self.creator == "zeros_like":
            return torch.zeros_like(x)
        if self.creator == "new_zeros":
            return x.new_zeros(x.shape)
        if self.creator == "zeros":
            return torch.zeros(x.shape)
        if self.creator == "empty_like_zero":
            return torch.empty_like(x).zero_()
        if self.creator == "full":
            return torch.full(x.shape, 0.25)
        if self.creator == "empty_fill":
            return torch.empty(x.shape).fill_(-1.5)
        if self.creator == "ones_like":
            return torch.ones_like(x)
        return x.new_full(x.shape, 2.0)

    def forward(self, x):
        _, C, _, _ = x.shape  # upstream: B, C, H, W = x.shape
        g = C // 12
        out = self.new_buffer(x)
        out[:, g * 0 : g * 1, :, :-1] = x[:, g * 0 : g * 1, :, 1:]  # shift left
        out[:, g * 1 : g * 2, :, 1:] = x[:, g * 1 : g * 2, :, :-1]  # shift right
        out[:, g * 2 : g * 3, :-1, :] = x[:, g * 2 : g * 3, 1:, :]  # shift up
        out[:, g * 3 : g * 4, 1:, :] = x[:, g * 3 : g * 4, :-1, :]  # shift down
        out[:, g * 4 :, :, :] = x[:, g * 4 :, :, :]  # no shift
        return out


class ShiftViTBlock(nn.Module):
    """ShiftViT's block: the shift read by a residual add and an MLP of 1x1 convs."""

    def __init__(self):
        super().__init__()
        self.shift = ShiftViT()
        self.fc1 = nn.Conv2d(24, 48, 1)
        self.fc2 = nn.Conv2d(48, 24, 1)

    def forward(self, x):
        x = x + self.shift(x)
        return x + self.fc2(F.gelu(self.fc1(x)))


class ShiftNetGroupShift(nn.Module):
    """Shift-Net's group shift: pad, one shifted slice per group, cat."""

    def forward(self, x):
        g = x.shape[1] // 5
        xp = F.pad(x, (1, 1, 1, 1))
        return torch.cat(
            [
                xp[:, 0 * g : 1 * g, 1:-1, 2:],
                xp[:, 1 * g : 2 * g, 1:-1, :-2],
                xp[:, 2 * g : 3 * g, 2:, 1:-1],
                xp[:, 3 * g : 4 * g, :-2, 1:-1],
                xp[:, 4 * g :, 1:-1, 1:-1],
            ],
            1,
        )


class ZeroBufferCopy(nn.Module):
    """A zero buffer filled by copy_ into its slices (one source computed)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(24, 12, 1)

    def forward(self, x):
        out = x.new_zeros(x.shape)
        out[:, :12, 1:].copy_(x[:, 12:, :-1])
        out[:, 12:].copy_(self.conv(x))
        return out


class NarrowCopy(nn.Module):
    """torch.narrow views copied into, chained (a narrow of a narrow)."""

    def forward(self, x):
        out = torch.zeros_like(x)
        out.narrow(1, 0, 8).narrow(3, 1, 5).copy_(x.narrow(1, 0, 8).narrow(3, 0, 5))
        out.narrow(1, 8, 8).copy_(x.narrow(1, 8, 8))
        out.narrow(1, -8, 8).narrow(2, 0, 4).copy_(x[:, -8:, 1:])
        return out


class AddOnSlice(nn.Module):
    """`+=` on slices: of a computed tensor, and of a buffer after assignment."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(24, 24, 1)

    def forward(self, x):
        y = self.conv(x)
        y[:, :8] += x[:, 8:16]
        out = torch.zeros_like(x)
        out[:, :, 1:] = x[:, :, :-1]
        out[:, 4:12, :, 2:] += y[:, 4:12, :, :-2]
        out[..., 0].add_(x[..., -1])
        return out * y


class ReluOnView(nn.Module):
    """relu_ / F.relu_ / mul_ / sigmoid_ on views of a shifted buffer."""

    def forward(self, x):
        out = torch.zeros_like(x)
        out[:, :, 1:] = x[:, :, :-1]
        out[:, :, :1] = x[:, :, -1:]
        F.relu_(out[:, :8])
        out[:, 8:16].sigmoid_()
        out[:, 16:, :, 1:].mul_(x[:, 16:, :, :-1])
        return out


class OverlappingWrites(nn.Module):
    """Later writes over earlier ones, numbers and tensors, broadcasting sources."""

    def forward(self, x):
        out = torch.zeros_like(x)
        out[:, :, :, :4] = x[:, :, :, 2:]
        out[:, :, 1:4, 2:6] = x[:, :, :3, :4]
        out[:, 3:9] = 0.5
        out[:, 10, 2] = x[:, 0, 0]  # integer indices: a box of size 1
        out[:, 12:14] = x[:, 5:6]  # a size-1 dim broadcast
        out[..., -1] = x[:, :1, :, 0]  # '...' and a leading size-1 broadcast
        return out


class WriteIntoComputed(nn.Module):
    """Writes into a convolution's output, then read by another convolution."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(24, 24, 3, padding=1)
        self.b = nn.Conv2d(24, 24, 1)

    def forward(self, x):
        y = self.a(x)
        v = y[:, 2:6]
        y[:, :4] = x[:, 20:]
        y[:, :, 0] = -1.0
        y[1] = y[0]  # a row of the batch over another
        return self.b(y)[:, :4] + v


class ViewsReadAfterWrites(nn.Module):
    """A slice, a reshape and a detach() of a buffer read after writes through another view."""

    def forward(self, x):
        out = torch.zeros_like(x)
        flat = out.view(2, 24, 30)
        part = out[:, 6:18]
        alias = out.detach()
        out[:, :12, :, 1:] = x[:, :12, :, :-1]
        out[:, 12:].copy_(x[:, :12])
        return torch.cat([part, alias[:, :6]], 1) + flat.view(2, 24, 5, 6)[:, :18]


class CircularPad(nn.Module):
    """F.pad(mode="circular") then a crop: a roll by 1 along H and W."""

    def forward(self, x):
        y = F.pad(x, (1, 2, 2, 1), mode="circular")
        return y[:, :, 1:-2, 2:-1] + F.pad(x, (0, 0, 3, 0), mode="circular")[:, :, :5]


class IndexSelect(nn.Module):
    """Constant gathers: index_select with a tensor made in forward, x[:, list], a long buffer."""

    def __init__(self):
        super().__init__()
        self.register_buffer("perm", torch.tensor([3, 4, 5, 0, 1, 2]))

    def forward(self, x):
        a = torch.index_select(x, 1, torch.arange(23, -1, -1))
        b = x[:, [1, 2, 3, 7, 8, 0] * 4]
        c = x.index_select(3, self.perm)
        return a + b + c


class Rolls(nn.Module):
    """Tensor.roll and a hand-written roll (cat of two slices)."""

    def forward(self, x):
        s = 2
        hand = torch.cat((x[..., -s:], x[..., :-s]), -1)
        return x.roll(1, 2) + hand + x.roll((1, -1), (1, 3))


class InplaceOnTransposedView(nn.Module):
    """relu_ on a transposed view whose base nothing reads again."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(24, 24, 1)

    def forward(self, x):
        t = self.conv(x).transpose(2, 3)
        t.relu_()
        return t.flatten(2)


class StridedWrites(nn.Module):
    """Slice assignment with steps: into fresh and computed memory, numbers and tensors."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(24, 24, 1)

    def forward(self, x):
        out = torch.zeros_like(x)
        out[:, ::2] = x[:, 1::2]
        out[:, 1::3, :, ::4] = x[:, :8, :, 1::4]
        out[..., 1:4:2, :] = 2.0
        y = self.conv(x)
        y[:, 3::5] += x[:, :5]
        y[:, :, ::2, 1::2] = x[:, :, ::2, :-1:2]
        return out + y


# ---------------------------------------------------------------------------
# Refused
# ---------------------------------------------------------------------------


class BadUninitialized(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        out[:, :12] = x[:, 12:]
        return out + x  # ERROR


class BadUninitializedOutput(nn.Module):
    def forward(self, x):
        out = x.new_empty(x.shape)
        out[:, :, :, 1:] = x[:, :, :, :-1]  # ERROR
        return out


class BadWriteIntoInput(nn.Module):
    def forward(self, x):
        x[:, :2] = 0.0  # ERROR
        return x


class BadTensorIndex(nn.Module):
    def forward(self, x):
        out = torch.zeros_like(x)
        out[:, torch.tensor([0, 2])] = x[:, :2]  # ERROR
        return out


class BadNoneIndex(nn.Module):
    def forward(self, x):
        out = torch.zeros_like(x)
        out[:, None, :2] = x[:, None, :2]  # ERROR
        return out


class BadStridedEmpty(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        out[:, ::2] = x[:, ::2]  # ERROR
        return out


class BadStaleView(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        y = self.conv(x)
        t = y[:, :2].flatten(2)
        y[:, :, :2] = x[:, :, 3:]  # ERROR
        return t


class BadConstantBuffer(nn.Module):
    def forward(self, x):
        out = torch.ones_like(x)
        out[:, :2] = 3.0
        return x * out  # ERROR


class BadScalarMulOnView(nn.Module):
    def forward(self, x):
        out = torch.zeros_like(x)
        out[:, :, 1:] = x[:, :, :-1]
        out[:, :4].mul_(0.5)  # ERROR
        return out


# ---------------------------------------------------------------------------
# Random write programs (test_random_write_programs_match_pytorch)
# ---------------------------------------------------------------------------


def _random_box(rng, shape):
    """A basic index of a random non-empty box: slices (negative bounds too) or integers."""
    index = []
    for n in shape:
        kind = rng.random()
        if kind < 0.15:
            index.append(rng.randrange(-n, n))
        elif kind < 0.3:
            index.append(slice(None))
        elif kind < 0.45:
            a = rng.randrange(0, n)
            index.append(slice(a, None, rng.randrange(2, 4)))
        else:
            a = rng.randrange(0, n)
            b = rng.randrange(a + 1, n + 1)
            index.append(
                slice(a - n if rng.random() < 0.3 else a, b - n if b < n and rng.random() < 0.3 else b)
            )
    if rng.random() < 0.2:
        k = rng.randrange(0, len(index))
        index = [Ellipsis] + index[k + 1 :] if all(i == slice(None) for i in index[: k + 1]) else index
    return tuple(index)


def _size(shape, index):
    """The shape of x[index] for x of ``shape`` (basic indexing)."""
    return tuple(torch.empty(shape)[index].shape)


class RandomWrites(nn.Module):
    """``count`` random programs of writes into one buffer each, with reads between."""

    def __init__(self, seed=0, count=30):
        super().__init__()
        import random

        rng = random.Random(seed)
        shape = (2, 6, 5, 4)
        self.programs = []
        for _ in range(count):
            start = rng.choice(["zeros", "full", "computed", "empty_zero"])
            steps = []
            has_tensor = start == "computed"  # a fresh buffer of numbers only cannot be read
            for _ in range(rng.randrange(1, 7)):
                box = _random_box(rng, shape)
                kind = rng.choice(["tensor", "tensor", "scalar", "relu_", "add_", "copy_", "read", "view"])
                if kind in ("read", "view") and not has_tensor:
                    kind = "tensor"
                has_tensor = has_tensor or kind != "scalar"
                steps.append((kind, box, self._source(rng, shape, box), round(rng.uniform(-2, 2), 2)))
            if not has_tensor:
                box = _random_box(rng, shape)
                steps.append(("tensor", box, self._source(rng, shape, box), 0.0))
            self.programs.append((start, steps))

    @staticmethod
    def _source(rng, shape, box):
        """A box of x of the same size as ``box`` (None: the box itself)."""
        size = _size(shape, box)
        if len(size) != len(shape):
            return None
        return tuple(
            slice(o, o + n) for o, n in zip([rng.randrange(0, m - n + 1) for m, n in zip(shape, size)], size)
        )

    def forward(self, x):
        outs = []
        for start, steps in self.programs:
            if start == "zeros":
                buf = torch.zeros_like(x)
            elif start == "full":
                buf = torch.full(x.shape, 0.75)
            elif start == "empty_zero":
                buf = torch.empty_like(x).zero_()
            else:
                buf = torch.sigmoid(x)
            views = []
            for kind, box, src, number in steps:
                target = buf[box]
                source = x[src] if src is not None else x[box]
                if kind == "tensor":
                    buf[box] = source
                elif kind == "scalar":
                    buf[box] = number
                elif kind == "relu_":
                    buf[box] = source
                    target.relu_()
                elif kind == "add_":
                    buf[box] = source
                    buf[box] += x[box]
                elif kind == "copy_":
                    target.copy_(source)
                elif kind == "read":
                    outs.append(target.reshape(-1))
                else:  # a view read at the end, after the later writes
                    views.append(target)
            outs += [v.reshape(-1) for v in views]
            outs.append(buf.reshape(-1))
        return torch.cat(outs)


class RestrideInPlace(nn.Module):
    """unsqueeze_ / squeeze_ on a written buffer and on a view of it, read before and after."""

    def forward(self, x):
        out = torch.zeros_like(x)
        out[:, :, 1:] = x[:, :, :-1]
        v = out[:, 4:8]
        w = v * v
        v.unsqueeze_(0)
        out.unsqueeze_(1)
        y = out * out
        out.squeeze_(1)
        return torch.cat([out, v.squeeze(0), w, y.squeeze(1)], 1)
