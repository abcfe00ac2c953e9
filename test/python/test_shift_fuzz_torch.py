"""Random shift idioms written as PyTorch code, through the real exporter.

The sibling of test_shift_fuzz.py (which generates seg IR): here each case is
a PyTorch function of its own random input, in one of the spellings published
code uses, with random ranks, dims, groups and offsets:
- a zero buffer (zeros_like / new_zeros / torch.zeros) filled by shifted slice
  assignments (`out[..] = x[..]`, `out[..].copy_(x[..])` or
  `out.narrow(..).copy_(x.narrow(..))`): one group dim split into random
  groups, each shifted along random other dims (TSM, ShiftViT);
- F.pad(mode="circular") then a crop back to the input's size (a roll of the
  last rank - 2 dims);
- a hand-written roll `torch.cat((x[.., -s:], x[.., :-s]), d)`;
each sometimes spoiled so that it is NOT a shift (a group written from other
channels; a roll that skips an element), which must stay and still be exact.
Cases are packed into one module per batch (one input and one output per
case) and exported with gpuopt.export; the graph as exported and after each
pipeline of test_shift_fuzz runs on the reference backend and must agree with
PyTorch to |a - e| <= 1e-5 + 1e-5 |e|. --collapse-rolls must recognize
every unspoiled case (the concats left are the spoiled ones').
"""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from test_export import run_opt
from test_shift_fuzz import PIPELINES, run_module
from torch import nn

import gpuopt

SEED = 20261201
BATCHES = 5
PER_BATCH = 200


def _zero_buffer_case(rng: random.Random, spoil: bool):
    rank = rng.randint(3, 5)
    shape = tuple(rng.randint(2, 5) for _ in range(rank))
    g = rng.randrange(rank)
    shape = tuple(rng.randint(3, 9) if d == g else n for d, n in enumerate(shape))
    cuts = sorted(rng.sample(range(1, shape[g]), rng.randint(1, min(4, shape[g] - 1))))
    bounds = [0, *cuts, shape[g]]
    groups = []
    for a, b in itertools.pairwise(bounds):
        others = [d for d in range(rank) if d != g]
        dims = rng.sample(others, rng.randint(0, min(2, len(others))))
        offsets = {d: rng.choice([o for o in range(-shape[d] + 1, shape[d]) if o != 0]) for d in dims}
        groups.append((a, b, offsets))
    style = rng.choice(["setitem", "copy", "narrow"])
    creator = rng.choice(["zeros_like", "new_zeros", "zeros"])
    wrong = rng.randrange(len(groups)) if spoil else -1

    def fn(x: torch.Tensor) -> torch.Tensor:
        if creator == "zeros_like":
            out = torch.zeros_like(x)
        elif creator == "new_zeros":
            out = x.new_zeros(x.shape)
        else:
            out = torch.zeros(x.shape)
        for k, (a, b, offsets) in enumerate(groups):
            src_g = (a, b)
            if k == wrong:  # read the group from the next channels (wrapping)
                width = b - a
                start = b % shape[g] if b + width <= shape[g] else 0
                src_g = (start, start + width) if start + width <= shape[g] else (a, b)
                if src_g == (a, b):  # no room: read channel 0 for every channel
                    src_g = None
            dst = [slice(None)] * rank
            src = [slice(None)] * rank
            dst[g] = slice(a, b)
            src[g] = slice(*src_g) if src_g else slice(0, 1)
            for d, o in offsets.items():
                n = shape[d]
                dst[d], src[d] = (slice(o, n), slice(0, n - o)) if o > 0 else (slice(0, n + o), slice(-o, n))
            value = x[tuple(src)]
            if style == "setitem" or src_g is None:
                out[tuple(dst)] = value
            elif style == "copy":
                out[tuple(dst)].copy_(value)
            else:
                view = out
                for d, s in enumerate(dst):
                    if s != slice(None):
                        view = view.narrow(d, s.start, s.stop - s.start)
                view.copy_(value)
        return out

    return shape, fn, f"zero_buffer({style},{creator},g={g},{groups},spoiled={spoil})"


def _circular_case(rng: random.Random, spoil: bool):
    rank = rng.randint(2, 5)
    shape = tuple(rng.randint(2, 6) for _ in range(rank))
    k = max(1, rank - 2)  # torch pads the last rank - 2 dims circularly (2-D: the last)
    pads, crop = [], [slice(None)] * rank
    for j in range(k):
        d = rank - 1 - j
        n = shape[d]
        lo, hi = rng.randint(0, n), rng.randint(0, n)
        if lo + hi == 0:
            hi = 1
        pads += [lo, hi]
        start = rng.randint(0, lo + hi)
        crop[d] = slice(start, start + n)

    def fn(x: torch.Tensor) -> torch.Tensor:
        return F.pad(x, pads, mode="circular")[tuple(crop)]

    # a crop of a circular pad is always a roll: no spoiled form
    return shape, fn, f"circular(pads={pads},crop={crop})"


def _hand_roll_case(rng: random.Random, spoil: bool):
    rank = rng.randint(2, 5)
    shape = tuple(rng.randint(2, 7) for _ in range(rank))
    d = rng.randrange(rank)
    n = shape[d]
    if spoil and n < 3:
        shape = tuple(3 if i == d else s for i, s in enumerate(shape))
        n = 3
    s = rng.randint(1, n - 2 if spoil else n - 1)  # spoiled: the head keeps >= 1 element
    negative = rng.random() < 0.5
    spelling = rng.choice(["index", "narrow"])

    def fn(x: torch.Tensor) -> torch.Tensor:
        dd = d - rank if negative else d
        tail_start = n - s
        head_stop = n - s - (1 if spoil else 0)  # spoiled: skips one element
        if spelling == "narrow":
            return torch.cat((x.narrow(dd, tail_start, s), x.narrow(dd, 0, head_stop)), dd)
        idx_tail = [slice(None)] * rank
        idx_head = [slice(None)] * rank
        idx_tail[d] = slice(-s, None)
        idx_head[d] = slice(None, head_stop - n) if head_stop < n else slice(None)
        return torch.cat((x[tuple(idx_tail)], x[tuple(idx_head)]), dd)

    return shape, fn, f"hand_roll({spelling},d={d},s={s},spoiled={spoil})"


GENERATORS = [_zero_buffer_case, _circular_case, _hand_roll_case]


class Pack(nn.Module):
    def __init__(self, fns) -> None:
        super().__init__()
        self.fns = fns

    def forward(self, *xs: torch.Tensor):
        return tuple(fn(x) for fn, x in zip(self.fns, xs, strict=True))


def generate(seed: int, index: int):
    rng = random.Random(f"{seed}:{index}")
    spoil = rng.random() < 0.15
    shape, fn, name = rng.choice(GENERATORS)(rng, spoil)
    return shape, fn, f"case{index}:{name}", spoil and "circular" not in name


def _concats(text: str) -> int:
    """seg.concat ops in ``text``, not counting broadcasts (one value repeated:
    a spoiled case reading one channel for all makes one)."""
    operands = re.findall(r"= seg\.concat ([^:]*?) dim = ", text)
    return sum(1 for ops in operands if len({o.strip() for o in ops.split(",")}) > 1)


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_torch_shift_idioms(batch: int, tmp_path: Path) -> None:
    cases = [generate(SEED, batch * PER_BATCH + i) for i in range(PER_BATCH)]
    rng = np.random.default_rng(SEED + batch)
    xs = [torch.from_numpy(rng.standard_normal(shape).astype(np.float32)) for shape, _, _, _ in cases]
    with torch.no_grad():
        expected = [fn(x).numpy() for (_, fn, _, _), x in zip(cases, xs, strict=True)]
    original = tmp_path / "original.mlir"
    gpuopt.export(Pack([fn for _, fn, _, _ in cases]), tuple(xs), original, tmp_path / "m.safetensors")
    inputs = []
    for i, x in enumerate(xs):
        inputs.append(tmp_path / f"in{i}.npy")
        np.save(inputs[-1], x.numpy())
    spoiled = sum(1 for c in cases if c[3])
    exported_concats = _concats(original.read_text())
    assert exported_concats >= PER_BATCH // 2, exported_concats

    graphs = [(None, original)]
    for pipeline in PIPELINES:
        optimized = tmp_path / f"opt{PIPELINES.index(pipeline)}.mlir"
        text = run_opt(original, pipeline, output=optimized)
        # (a hand-written roll of a tensor that is not NCHW, or along N or C,
        # legitimately stays one seg.roll: no channel_shift form exists)
        if pipeline == "--collapse-rolls":
            # the concats left are the spoiled cases' (at most one each, besides
            # broadcasts); writes
            # that tile two dims (case659: the group dim and a shifted dim of
            # size 2) are concatenated along the dim they are not shifted along
            left = _concats(text)
            assert left <= spoiled, f"{left} concats left, {spoiled} spoiled cases"
        graphs.append((pipeline, optimized))
    for pipeline, graph in graphs:
        actual = run_module(graph, inputs, len(cases), tmp_path)
        for case, a, e in zip(cases, actual, expected, strict=True):
            assert a.shape == e.shape, case[2]
            np.testing.assert_allclose(
                a, e, rtol=1e-5, atol=1e-5, err_msg=f"{pipeline or 'as exported'}: {case[2]} differs"
            )
