"""A seeded generator of random shift graphs for differential testing.

Each case is a small seg program over one NCHW input that shifts channels the
way real models do — a random partition of the channels into slices, each
rolled by its own amount along H, W, both or neither (positive, negative,
larger than the size), rolls of rolls, whole-tensor rolls, and UNeXt-style
zero-padding → roll → crop (sometimes with shifts larger than the padding, so
that it is *not* a zero-filled shift) — and the other spellings of shifts in
the exporter's canonical form (issue 15): zero-filled buffers with shifted
slice assignments (TSM along T of an (N, T, C, H, W) view, ShiftViT along H/W;
a stream of its own for TSM, generate_tsm, with clips of several frames),
Shift-Net's windows of a zero-padded map, hand-written rolls (a concat of
slices rotating a dim) and crops of circular pads, each sometimes spoiled so
that it is *not* a shift (pieces out of order, a nonzero fill, a pad that zeroes
what a shift would read) — followed by a random consumer: a
convolution (1×1 or 3×3, stride, padding, groups), a linear over the tokens
(flatten + transpose or channels-last), an add, several consumers at once, or
none. Weights are extra function arguments, so a case needs no weights file.

Many cases are packed into one `@forward` (one argument list, one result per
case) so that a thousand cases cost a few tool invocations.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field


def ty(shape: tuple[int, ...] | list[int]) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


@dataclass
class Case:
    """One generated case: its argument shapes, body lines and result."""

    name: str
    args: list[tuple[int, ...]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    result: str = ""
    result_shape: tuple[int, ...] = ()


class _Builder:
    def __init__(self, prefix: str, first_arg: int) -> None:
        self.prefix = prefix
        self.counter = 0
        self.first_arg = first_arg
        self.case = Case(prefix)

    def arg(self, shape: tuple[int, ...]) -> str:
        self.case.args.append(shape)
        return f"%arg{self.first_arg + len(self.case.args) - 1}"

    def op(self, text: str) -> str:
        name = f"%{self.prefix}_{self.counter}"
        self.counter += 1
        self.case.lines.append(f"{name} = {text}")
        return name


def _partition(rng: random.Random, channels: int) -> list[int]:
    if rng.random() < 0.4:
        return [1] * channels  # Rolling-UNet: one-channel slices
    if rng.random() < 0.5:  # torch.chunk(x, k, 1): ceil-sized chunks, fewer than asked
        k = rng.randint(1, channels + 2)
        size = -(-channels // k)
        sizes = []
        left = channels
        while left > 0:
            sizes.append(min(size, left))
            left -= size
        return sizes
    cuts = sorted(rng.sample(range(1, channels), rng.randint(0, channels - 1))) if channels > 1 else []
    bounds = [0] + cuts + [channels]
    return [b - a for a, b in itertools.pairwise(bounds)]


def _shift_value(rng: random.Random, size: int) -> int:
    return rng.choice([0, 1, -1, rng.randint(-2 * size, 2 * size)])


def _roll_group(b: _Builder, x: str, shape: list[int], rng: random.Random) -> str:
    """Slices of x along channels, each rolled, concatenated."""
    n, c, h, w = shape
    parts, types = [], []
    start = 0
    for size in _partition(rng, c):
        part_shape = [n, size, h, w]
        v = b.op(
            f"seg.slice {x} start = [0, {start}, 0, 0] size = {part_shape} step = [1, 1, 1, 1] "
            f": {ty(shape)} -> {ty(part_shape)}"
        )
        axes = rng.choice([[2], [3], [2, 3], [3, 2], []])
        if axes:
            shifts = [_shift_value(rng, shape[a]) for a in axes]
            v = b.op(f"seg.roll {v} shifts = {shifts} dims = {axes} : {ty(part_shape)}")
            if rng.random() < 0.15:  # roll of roll
                v = b.op(f"seg.roll {v} shifts = [{_shift_value(rng, h)}] dims = [2] : {ty(part_shape)}")
        parts.append(v)
        types.append(ty(part_shape))
        start += size
    if len(parts) == 1:
        return parts[0]
    order = list(range(len(parts)))
    if rng.random() < 0.1:  # a channel permutation, not a shift
        rng.shuffle(order)
    elif rng.random() < 0.05:  # one slice used twice, another not at all
        i, j = rng.sample(order, 2)
        if types[i] == types[j]:
            order[j] = i
    return b.op(
        f"seg.concat {', '.join(parts[i] for i in order)} dim = 1 : "
        f"{', '.join(types[i] for i in order)} -> {ty(shape)}"
    )


def _padded_group(b: _Builder, x: str, shape: list[int], rng: random.Random) -> str:
    """UNeXt: zero-pad, roll channel groups along one axis, crop back."""
    n, c, h, w = shape
    p = rng.randint(0, 3)
    padded = [n, c, h + 2 * p, w + 2 * p]
    value = "0.0" if rng.random() < 0.9 else "1.5"
    v = b.op(
        f"seg.pad {x} low = [0, 0, {p}, {p}] high = [0, 0, {p}, {p}] value = {value} "
        f": {ty(shape)} -> {ty(padded)}"
    )
    axis = rng.choice([2, 3])
    parts, types = [], []
    start = 0
    for size in _partition(rng, c):
        part_shape = [n, size, padded[2], padded[3]]
        s = b.op(
            f"seg.slice {v} start = [0, {start}, 0, 0] size = {part_shape} step = [1, 1, 1, 1] "
            f": {ty(padded)} -> {ty(part_shape)}"
        )
        # Exact while |shift| <= 2p (what wraps lands in the padding); test
        # both sides of that boundary.
        limit = 2 * p if rng.random() < 0.7 else 2 * p + 2
        s = b.op(f"seg.roll {s} shifts = [{rng.randint(-limit, limit)}] dims = [{axis}] : {ty(part_shape)}")
        parts.append(s)
        types.append(ty(part_shape))
        start += size
    cat = (
        parts[0]
        if len(parts) == 1
        else b.op(f"seg.concat {', '.join(parts)} dim = 1 : {', '.join(types)} -> {ty(padded)}")
    )
    if rng.random() < 0.5:  # one crop
        return b.op(
            f"seg.slice {cat} start = [0, 0, {p}, {p}] size = {shape} step = [1, 1, 1, 1] "
            f": {ty(padded)} -> {ty(shape)}"
        )
    mid = [n, c, h, padded[3]]
    v = b.op(
        f"seg.slice {cat} start = [0, 0, {p}, 0] size = {mid} step = [1, 1, 1, 1] : {ty(padded)} -> {ty(mid)}"
    )
    return b.op(
        f"seg.slice {v} start = [0, 0, 0, {p}] size = {shape} step = [1, 1, 1, 1] : {ty(mid)} -> {ty(shape)}"
    )


def _slice(b: _Builder, x: str, shape: list[int], start: list[int], size: list[int]) -> str:
    return b.op(
        f"seg.slice {x} start = {start} size = {size} step = {[1] * len(shape)} : {ty(shape)} -> {ty(size)}"
    )


def _zero_group(
    b: _Builder,
    x: str,
    shape: list[int],
    g: int,
    dims: list[int],
    rng: random.Random,
    permute_cyclic: bool = True,
) -> str:
    """A zero buffer with shifted slice assignments, in canonical form: a concat
    along dim g of channel intervals, each a slice of x zero-padded back to its
    size along the shifted dims (or whole), or with cyclic pieces (rolls).
    ``permute_cyclic=False``: cyclic pieces are never permuted (the rolls of
    such pieces stay seg.roll, which the roll streams must not leave)."""
    parts, types = [], []
    cyclic = rng.random() < 0.2
    sizes = _partition(rng, shape[g])
    if cyclic and len(sizes) < 2:
        cyclic = False
    start = 0
    for size in sizes:
        piece = list(shape)
        piece[g] = size
        lo, hi = [0] * len(shape), [0] * len(shape)
        sl_start, sl_size = [0] * len(shape), list(piece)
        sl_start[g] = start
        offsets = {}
        for d in dims:
            if rng.random() < 0.6:
                offsets[d] = rng.randint(-(shape[d] - 1), shape[d] - 1)
        if cyclic:
            v = _slice(b, x, shape, sl_start, sl_size)
            if offsets:
                ds = sorted(offsets)
                v = b.op(f"seg.roll {v} shifts = {[offsets[d] for d in ds]} dims = {ds} : {ty(piece)}")
        else:
            spoil = rng.random() < 0.04
            for d, o in offsets.items():
                # out[i] = x[i - o]: the window [max(0, -o), L - max(0, o)) padded
                # by max(0, o) below and max(0, -o) above.
                sl_start[d] = max(0, -o)
                sl_size[d] = shape[d] - abs(o)
                lo[d], hi[d] = max(0, o), max(0, -o)
                if spoil and o > 0 and sl_size[d] > 1:
                    sl_start[d] = 1  # zeroes x[0] where the shift reads it
            v = _slice(b, x, shape, sl_start, sl_size)
            if offsets:
                value = "1.5" if rng.random() < 0.04 else "0.0"
                v = b.op(f"seg.pad {v} low = {lo} high = {hi} value = {value} : {ty(sl_size)} -> {ty(piece)}")
        parts.append(v)
        types.append(ty(piece))
        start += size
    if len(parts) == 1:
        return parts[0]
    order = list(range(len(parts)))
    # A permutation of the groups, not a shift.
    if rng.random() < 0.05 and len(parts) > 2 and (permute_cyclic or not cyclic):
        # Not a rotation either (that is a roll along the groups, which stays).
        rotations = [order[k:] + order[:k] for k in range(len(order))]
        while order in rotations:
            rng.shuffle(order)
    return b.op(
        f"seg.concat {', '.join(parts[i] for i in order)} dim = {g} : "
        f"{', '.join(types[i] for i in order)} -> {ty(shape)}"
    )


def _shiftnet_group(b: _Builder, x: str, shape: list[int], rng: random.Random) -> str:
    """Shift-Net: pad H and W by p, each channel group's window offset by up to
    p, concat along channels."""
    n, c, h, w = shape
    p = rng.randint(1, 2)
    padded = [n, c, h + 2 * p, w + 2 * p]
    value = "0.0" if rng.random() < 0.95 else "1.5"
    v = b.op(
        f"seg.pad {x} low = [0, 0, {p}, {p}] high = [0, 0, {p}, {p}] value = {value} "
        f": {ty(shape)} -> {ty(padded)}"
    )
    parts, types = [], []
    start = 0
    for size in _partition(rng, c):
        dy, dx = rng.randint(-p, p), rng.randint(-p, p)
        part = [n, size, h, w]
        parts.append(_slice(b, v, padded, [0, start, p - dy, p - dx], part))
        types.append(ty(part))
        start += size
    if len(parts) == 1:
        return parts[0]
    return b.op(f"seg.concat {', '.join(parts)} dim = 1 : {', '.join(types)} -> {ty(shape)}")


def _rotation(b: _Builder, x: str, shape: list[int], d: int, rng: random.Random) -> str:
    """A hand-written roll (or index_select with constant runs): slices of x
    along d in the order a, a+1, ..., L-1, 0, ..., a-1, cut at random points."""
    length = shape[d]
    first = rng.randrange(length)
    order = [(first + i) % length for i in range(length)]
    cuts = sorted(rng.sample(range(1, length), rng.randint(0, length - 1))) if length > 1 else []
    bounds = [0] + cuts + [length]
    runs = []
    for lo, hi in itertools.pairwise(bounds):
        idx = order[lo:hi]
        # A run that wraps from L-1 to 0 is two slices.
        split = next((k for k in range(1, len(idx)) if idx[k] != idx[k - 1] + 1), None)
        if split is None:
            runs.append((idx[0], len(idx)))
        else:
            runs += [(idx[0], split), (idx[split], len(idx) - split)]
    if rng.random() < 0.05 and len(runs) > 1:  # not a rotation
        rng.shuffle(runs)
    parts, types = [], []
    for start, size in runs:
        st, sz = [0] * len(shape), list(shape)
        st[d], sz[d] = start, size
        parts.append(_slice(b, x, shape, st, sz))
        types.append(ty(sz))
    if len(parts) == 1:
        return parts[0]
    return b.op(f"seg.concat {', '.join(parts)} dim = {d} : {', '.join(types)} -> {ty(shape)}")


def _circular_crop(b: _Builder, x: str, shape: list[int], rng: random.Random) -> str:
    """F.pad(mode="circular") as the exporter writes it (a concat of the end,
    the tensor and the start, per dim), then a crop back to the size at a
    random offset: a roll."""
    axes = rng.choice([[2], [3], [3, 2], [2, 3]])
    v, cur = x, list(shape)
    for d in axes:
        lo, hi = rng.randint(0, cur[d]), rng.randint(0, cur[d])
        parts, types = [], []
        if lo:
            st, sz = [0] * 4, list(cur)
            st[d], sz[d] = cur[d] - lo, lo
            parts.append(_slice(b, v, cur, st, sz))
            types.append(ty(sz))
        parts.append(v)
        types.append(ty(cur))
        if hi:
            sz = list(cur)
            sz[d] = hi
            parts.append(_slice(b, v, cur, [0] * 4, sz))
            types.append(ty(sz))
        nxt = list(cur)
        nxt[d] += lo + hi
        if len(parts) > 1:
            v = b.op(f"seg.concat {', '.join(parts)} dim = {d} : {', '.join(types)} -> {ty(nxt)}")
        cur = nxt
    start = [0, 0, rng.randint(0, cur[2] - shape[2]), rng.randint(0, cur[3] - shape[3])]
    return _slice(b, v, cur, start, list(shape))


def _canonical_form(b: _Builder, x: str, shape: list[int], rng: random.Random) -> str:
    """One of the canonical-form spellings over the NCHW input x."""
    kind = rng.choice(["tsm", "tsm", "zero", "zero", "shiftnet", "roll", "circular"])
    n, c, h, w = shape
    if kind == "tsm" and n > 1:
        # (N·T, C, H, W) viewed as (N', T, C, H, W): shift channel groups along
        # T (and sometimes H/W), view back.
        t = n
        view = [1, t, c, h, w]
        v = b.op(f"seg.reshape {x} : {ty(shape)} -> {ty(view)}")
        s = _zero_group(b, v, view, 2, rng.choice([[1], [1], [1, 3], [1, 4]]), rng)
        return b.op(f"seg.reshape {s} : {ty(view)} -> {ty(shape)}")
    if kind in ("zero", "tsm"):
        return _zero_group(b, x, shape, 1, rng.choice([[2], [3], [2, 3]]), rng)
    if kind == "shiftnet":
        return _shiftnet_group(b, x, shape, rng)
    if kind == "roll":
        return _rotation(b, x, shape, rng.choice([2, 3]), rng)
    return _circular_crop(b, x, shape, rng)


def _consume(
    b: _Builder, x: str, s: str, shape: list[int], rng: random.Random, kind: str | None = None
) -> tuple[str, tuple[int, ...]]:
    n, c, h, w = shape
    if kind is None:
        kind = rng.choice(["conv", "conv", "linear", "linear", "add", "none", "multi"])
    if kind in ("conv", "multi"):
        k = rng.choice([1, 3])
        stride = rng.choice([1, 1, 2])
        pad = rng.choice([0, k // 2])
        divisors = [g for g in range(1, c + 1) if c % g == 0]
        groups = rng.choice(divisors)
        out = groups * rng.randint(1, 3)
        ho = (h + 2 * pad - k) // stride + 1
        wo = (w + 2 * pad - k) // stride + 1
        if ho < 1 or wo < 1:
            k, pad, stride, ho, wo = 1, 0, 1, h, w
        wt = b.arg((out, c // groups, k, k))
        res = [n, out, ho, wo]
        y = b.op(
            f"seg.conv2d {s}, {wt} stride = [{stride}, {stride}] padding = [{pad}, {pad}] "
            f"dilation = [1, 1] groups = {groups} : {ty(shape)}, {ty((out, c // groups, k, k))} "
            f"-> {ty(res)}"
        )
        if kind == "conv":
            return y, tuple(res)
        # multi: the shift also feeds an add (it must stay, once).
        z = b.op(f"seg.add {s}, {x} : {ty(shape)}, {ty(shape)} -> {ty(shape)}")
        flat = b.op(f"seg.reshape {z} : {ty(shape)} -> {ty((n * c * h * w,))}")
        yflat = b.op(f"seg.reshape {y} : {ty(res)} -> {ty((n * res[1] * ho * wo,))}")
        total = n * c * h * w + n * res[1] * ho * wo
        return b.op(
            f"seg.concat {flat}, {yflat} dim = 0 : {ty((n * c * h * w,))}, "
            f"{ty((n * res[1] * ho * wo,))} -> {ty((total,))}"
        ), (total,)
    if kind == "linear":
        out = rng.randint(1, 5)
        wt = b.arg((out, c))
        if rng.random() < 0.5:
            f = b.op(f"seg.reshape {s} : {ty(shape)} -> {ty((n, c, h * w))}")
            t = b.op(f"seg.permute {f} dims = [0, 2, 1] : {ty((n, c, h * w))} -> {ty((n, h * w, c))}")
        else:
            p = b.op(f"seg.permute {s} dims = [0, 2, 3, 1] : {ty(shape)} -> {ty((n, h, w, c))}")
            t = b.op(f"seg.reshape {p} : {ty((n, h, w, c))} -> {ty((n, h * w, c))}")
        res = (n, h * w, out)
        return b.op(f"seg.linear {t}, {wt} : {ty((n, h * w, c))}, {ty((out, c))} -> {ty(res)}"), res
    if kind == "add":
        return b.op(f"seg.add {s}, {x} : {ty(shape)}, {ty(shape)} -> {ty(shape)}"), tuple(shape)
    return s, tuple(shape)


def generate(seed: int, index: int, first_arg: int, canonical: bool = False) -> Case:
    """Case number ``index`` of the stream ``seed``; its arguments start at ``%arg<first_arg>``.

    ``canonical``: the stream of the exporter's canonical-form spellings
    (zero-filled buffers, Shift-Net windows, hand-written rolls, circular
    pads) instead of the roll spellings."""
    rng = random.Random(seed * 1_000_003 + index)
    b = _Builder(f"{'k' if canonical else 'c'}{index}", first_arg)
    shape = [rng.choice([1, 2]), rng.randint(1, 6), rng.randint(2, 6), rng.randint(2, 6)]
    x = b.arg(tuple(shape))
    style = rng.random()
    if canonical:
        s = _canonical_form(b, x, shape, rng)
    elif style < 0.55:
        s = _roll_group(b, x, shape, rng)
    elif style < 0.85:
        s = _padded_group(b, x, shape, rng)
    else:
        axes = rng.choice([[2], [3], [2, 3]])
        shifts = [_shift_value(rng, shape[a]) for a in axes]
        s = b.op(f"seg.roll {x} shifts = {shifts} dims = {axes} : {ty(shape)}")
    b.case.result, b.case.result_shape = _consume(b, x, s, shape, rng)
    return b.case


def generate_tsm(seed: int, index: int, first_arg: int) -> Case:
    """Case number ``index`` of the TSM stream ``seed``: an (N·T, C, H, W) input
    viewed as (N, T, C, H, W) (N of 1 or 2 clips of T = 2 to 4 frames), a
    zero-filled buffer of channel groups shifted along T (sometimes along T and
    W, sometimes cyclic or spoiled, see _zero_group) viewed back, and mostly a
    convolution after it (else an add or several consumers)."""
    rng = random.Random(seed * 1_000_003 + index + 7_000_000)
    b = _Builder(f"t{index}", first_arg)
    clips, frames = rng.choice([1, 2]), rng.randint(2, 4)
    shape = [clips * frames, rng.randint(1, 6), rng.randint(2, 5), rng.randint(2, 5)]
    x = b.arg(tuple(shape))
    view = [clips, frames] + shape[1:]
    v = b.op(f"seg.reshape {x} : {ty(shape)} -> {ty(view)}")
    s = _zero_group(b, v, view, 2, rng.choice([[1], [1], [1], [1, 4]]), rng, permute_cyclic=False)
    s = b.op(f"seg.reshape {s} : {ty(view)} -> {ty(shape)}")
    kind = rng.choice(["conv"] * 8 + ["add", "multi"])
    b.case.result, b.case.result_shape = _consume(b, x, s, shape, rng, kind)
    return b.case


def module(cases: list[Case]) -> str:
    """One @forward taking every case's arguments and returning every result."""
    args = [shape for case in cases for shape in case.args]
    sig = ", ".join(f"%arg{i}: {ty(s)}" for i, s in enumerate(args))
    results = ", ".join(ty(c.result_shape) for c in cases)
    lines = [f"func.func @forward({sig}) -> ({results}) {{"]
    for case in cases:
        lines += ["  " + line for line in case.lines]
    lines.append(f"  return {', '.join(c.result for c in cases)} : {results}")
    lines.append("}")
    return "\n".join(lines) + "\n"
