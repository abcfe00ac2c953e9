"""In-place shift idioms (TSM, ShiftViT, copy_ into slices, +=, relu_ on views, ...)
exported as exact functional seg ops (docs/Export.md, "In-place writes").

Each module of models/inplace_idioms.py is exported with random weights and a
random input, run through `gpuopt-run` on the reference and the cpu backend,
and compared with PyTorch eager (relative L2 <= 1e-6: the shifts are copies).
The emitted form of TSM and ShiftViT is checked op by op (one seg.concat of
seg.pad / seg.slice pieces of the shifted tensor): --fuse-roll relies on it.
The `Bad*` modules must be refused with one exact located line, exit 1.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import rel_l2
from test_export import randomize, run_reference

import gpuopt
from gpuopt.capture import capture
from gpuopt.export import load_spec
from gpuopt.export import main as export_main

HERE = Path(__file__).resolve().parent
MODELS = HERE / "models" / "inplace_idioms.py"
SOURCE = MODELS.read_text().splitlines()
REL_L2 = 1e-6
DEFAULT_SHAPE = (2, 24, 5, 6)
BACKEND = "torch.compile backend 'gpuopt'"

GOOD = [
    ("TemporalShift", {}),
    ("TemporalShiftConv", {}),
    ("TemporalShiftZerosView", {}),
    *[
        ("ShiftViT", {"creator": c})
        for c in (
            "zeros_like",
            "new_zeros",
            "zeros",
            "empty_like_zero",
            "full",
            "empty_fill",
            "ones_like",
            "new_full",
        )
    ],
    ("ShiftViTBlock", {}),
    ("ShiftNetGroupShift", {}),
    ("ZeroBufferCopy", {}),
    ("NarrowCopy", {}),
    ("AddOnSlice", {}),
    ("ReluOnView", {}),
    ("OverlappingWrites", {}),
    ("WriteIntoComputed", {}),
    ("ViewsReadAfterWrites", {}),
    ("CircularPad", {}),
    ("IndexSelect", {}),
    ("Rolls", {}),
    ("InplaceOnTransposedView", {}),
    ("RestrideInPlace", {}),
    ("StridedWrites", {}),
]


def _shape(name: str) -> tuple[int, ...]:
    from models.inplace_idioms import INPUT_SHAPES

    return INPUT_SHAPES.get(name, DEFAULT_SHAPE)


def _model(name: str, kwargs: dict) -> torch.nn.Module:
    return randomize(load_spec(f"{MODELS}:{name}", kwargs).eval(), seed=3)


def _input(name: str) -> torch.Tensor:
    return torch.randn(*_shape(name), generator=torch.Generator().manual_seed(7))


@pytest.mark.parametrize(
    ("name", "kwargs"), GOOD, ids=[n + "".join(f"-{v}" for v in k.values()) for n, k in GOOD]
)
def test_idiom_matches_pytorch_on_reference_and_cpu(name: str, kwargs: dict, tmp_path: Path) -> None:
    model, x = _model(name, kwargs), _input(name)
    with torch.no_grad():
        expected = model(x.clone()).numpy()
    gpuopt.export(model, (x,), tmp_path / "m.mlir", tmp_path / "m.safetensors")
    np.save(tmp_path / "x.npy", x.numpy())
    assert float(np.abs(expected).max()) > 0.0
    for backend in ("reference", "cpu"):
        actual = run_reference(tmp_path, [tmp_path / "x.npy"], backend=backend)
        err = rel_l2(actual, expected)
        assert err <= REL_L2, f"{backend}: relative L2 error {err:.3e}"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_write_programs_match_pytorch(seed: int, tmp_path: Path) -> None:
    """30 random programs per seed: writes of tensors and numbers into random
    boxes (negative bounds, steps, integer indices, '...') of fresh and computed
    buffers, relu_ / += / copy_ through views, reads between the writes and
    views read after later writes (models/inplace_idioms.py: RandomWrites)."""
    model, x = _model("RandomWrites", {"seed": seed}), _input("RandomWrites")
    with torch.no_grad():
        expected = model(x.clone()).numpy()
    gpuopt.export(model, (x,), tmp_path / "m.mlir", tmp_path / "m.safetensors")
    np.save(tmp_path / "x.npy", x.numpy())
    actual = run_reference(tmp_path, [tmp_path / "x.npy"])
    assert actual.shape == expected.shape
    err = rel_l2(actual, expected)
    assert err <= REL_L2, f"relative L2 error {err:.3e}"


# ---------------------------------------------------------------------------
# The canonical form
# ---------------------------------------------------------------------------

_OP = re.compile(r"^\s*(%\w+) = seg\.(\w+) (.*?) : ")


def _ops(mlir: str) -> dict[str, tuple[str, list[str], str]]:
    """SSA name -> (op, operands, attributes) of every seg op."""
    ops = {}
    for line in mlir.splitlines():
        m = _OP.match(line)
        if m:
            operands = re.findall(r"%\w+", m.group(3))
            ops[m.group(1)] = (m.group(2), operands, m.group(3))
    return ops


def _ints(attrs: str, name: str) -> list[int]:
    m = re.search(rf"\b{name} = \[([-\d, ]*)\]", attrs)
    assert m, (name, attrs)
    return [int(v) for v in m.group(1).split(",")]


def _returned(mlir: str) -> str:
    return re.search(r"^\s*return (%\w+)", mlir, re.MULTILINE).group(1)


def _concat_pieces(
    ops: dict, concat: str, source: str
) -> list[tuple[list[int], list[int], list[int], list[int]]]:
    """(slice start, slice size, pad low, pad high) per piece of the concat, in
    order; each piece must be a seg.slice of ``source``, or a seg.pad (value 0)
    of one, and nothing else."""
    pieces = []
    for operand in ops[concat][1]:
        op, args, attrs = ops[operand]
        low = high = None
        if op == "pad":
            assert "value = 0.0" in attrs, attrs
            low, high = _ints(attrs, "low"), _ints(attrs, "high")
            op, args, attrs = ops[args[0]]
        assert op == "slice" and args == [source], (operand, op, args)
        assert set(_ints(attrs, "step")) == {1}, attrs
        pieces.append((_ints(attrs, "start"), _ints(attrs, "size"), low, high))
    return pieces


def test_temporal_shift_is_one_concat_of_pads_and_slices() -> None:
    n, t, c, h, w, fold = 2, 4, 8, 3, 4, 2  # TemporalShift: n_segment 4, fold_div 4
    mlir = capture(_model("TemporalShift", {}), (_input("TemporalShift"),)).mlir
    ops = _ops(mlir)
    assert (
        sorted(op for op, _, _ in ops.values())
        == ["concat", "pad", "pad", "reshape", "reshape"] + ["slice"] * 3
    )
    reshape_out = ops[_returned(mlir)]
    assert reshape_out[0] == "reshape"
    concat = reshape_out[1][0]
    assert ops[concat][0] == "concat" and "dim = 2" in ops[concat][2]
    (view,) = [name for name, (op, args, _) in ops.items() if op == "reshape" and args == ["%arg0"]]
    assert _concat_pieces(ops, concat, view) == [
        # out[:, :-1, :fold] = x[:, 1:, :fold]: pad one frame at the end of T
        ([0, 1, 0, 0, 0], [n, t - 1, fold, h, w], [0] * 5, [0, 1, 0, 0, 0]),
        # out[:, 1:, fold:2*fold] = x[:, :-1, fold:2*fold]: one at the start
        ([0, 0, fold, 0, 0], [n, t - 1, fold, h, w], [0, 1, 0, 0, 0], [0] * 5),
        # out[:, :, 2*fold:] = x[:, :, 2*fold:]: the slice itself
        ([0, 0, 2 * fold, 0, 0], [n, t, c - 2 * fold, h, w], None, None),
    ]


def test_shiftvit_is_one_concat_of_pads_and_slices() -> None:
    n, c, h, w = DEFAULT_SHAPE
    g = c // 12
    mlir = capture(_model("ShiftViT", {}), (_input("ShiftViT"),)).mlir
    ops = _ops(mlir)
    assert sorted(op for op, _, _ in ops.values()) == ["concat"] + ["pad"] * 4 + ["slice"] * 5
    concat = _returned(mlir)
    assert ops[concat][0] == "concat" and "dim = 1" in ops[concat][2]
    z = [0, 0, 0, 0]
    assert _concat_pieces(ops, concat, "%arg0") == [
        ([0, 0, 0, 1], [n, g, h, w - 1], z, [0, 0, 0, 1]),  # shift left
        ([0, g, 0, 0], [n, g, h, w - 1], [0, 0, 0, 1], z),  # shift right
        ([0, 2 * g, 1, 0], [n, g, h - 1, w], z, [0, 0, 1, 0]),  # shift up
        ([0, 3 * g, 0, 0], [n, g, h - 1, w], [0, 0, 1, 0], z),  # shift down
        ([0, 4 * g, 0, 0], [n, c - 4 * g, h, w], None, None),  # no shift
    ]


def test_gap_of_fill_is_the_padding_of_a_neighbour() -> None:
    """Channels no write touches are the fill: padding along the concat dim."""

    class Gaps(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out = torch.full_like(x, 0.5)
            out[:, 2:4, :, 1:] = x[:, 2:4, :, :-1]
            out[:, 6:] = x[:, 6:]
            return out

    x = torch.randn(1, 8, 3, 3)
    mlir = capture(Gaps(), (x,)).mlir
    ops = _ops(mlir)
    concat = _returned(mlir)
    assert ops[concat][0] == "concat" and "dim = 1" in ops[concat][2]
    first, second = ops[concat][1]
    assert ops[first][0] == "pad" and "value = 0.5" in ops[first][2]
    # channels 0-1 before the first write, 4-5 after it: its padding along C
    assert _ints(ops[first][2], "low") == [0, 2, 0, 1] and _ints(ops[first][2], "high") == [0, 2, 0, 0]
    assert ops[second] == ("slice", ["%arg0"], ops[second][2])


def test_writes_tiling_two_dims_concat_along_the_unshifted_one() -> None:
    """Writes that tile both the group dim (2) and a shifted dim of size 2 (0):
    the concat is along the dim each write lands where it was read from (the
    group dim), the form --collapse-rolls makes one seg.shift of (the random
    PyTorch-written shift fuzzer's case659)."""

    class TwoTilings(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out = torch.zeros_like(x)
            out[0:1, :, 0:1] = x[1:2, :, 0:1]  # group [0, 1): shifted along dim 0
            out[1:2, 3:4, 1:5] = x[0:1, 0:1, 1:5]  # group [1, 5): along dims 0 and 1
            return out

    mlir = capture(TwoTilings(), (torch.randn(2, 4, 5),)).mlir
    ops = _ops(mlir)
    concat = _returned(mlir)
    assert ops[concat][0] == "concat" and "dim = 2" in ops[concat][2], mlir
    assert [start for start, _, _, _ in _concat_pieces(ops, concat, "%arg0")] == [[1, 0, 0], [0, 0, 1]]


# ---------------------------------------------------------------------------
# torch.compile
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["TemporalShiftConv", "ShiftViTBlock", "AddOnSlice"])
def test_in_place_idiom_under_torch_compile(
    name: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Dynamo's FX graph keeps the writes (operator.setitem, zeros_like): the
    same capture, zero graph breaks, no fallback to eager."""
    import gpuopt.compile  # noqa: F401  (registers the backend)

    model, x = _model(name, {}), _input(name)
    torch._dynamo.reset()
    explained = torch._dynamo.explain(model)(x)
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    torch._dynamo.reset()
    fast = torch.compile(model, backend="gpuopt", options={"cache_dir": str(tmp_path / "cache")})
    with caplog.at_level(logging.INFO, logger="gpuopt"), torch.no_grad():
        y = fast(x)
        expected = model(x)
    messages = [r.getMessage() for r in caplog.records if r.name == "gpuopt"]
    assert not [m for m in messages if "running the graph eagerly" in m], messages
    assert any(m.startswith(f"{BACKEND}: compiled graph ") for m in messages), messages
    assert rel_l2(y.numpy(), expected.numpy()) <= REL_L2


# ---------------------------------------------------------------------------
# Refused
# ---------------------------------------------------------------------------


def _line(name: str) -> int:
    """The line marked `# ERROR` inside class ``name``."""
    start = SOURCE.index(next(line for line in SOURCE if line.startswith(f"class {name}(")))
    for i in range(start + 1, len(SOURCE)):
        if SOURCE[i].startswith("class "):
            break
        if SOURCE[i].endswith("# ERROR"):
            return i + 1
    raise AssertionError(f"{name} has no '# ERROR' line")


def _created(name: str, call: str) -> str:
    """file:line of the first line of class ``name`` that calls ``call``."""
    start = SOURCE.index(next(line for line in SOURCE if line.startswith(f"class {name}(")))
    line = next(i for i in range(start, len(SOURCE)) if call in SOURCE[i])
    return f"{MODELS}:{line + 1}"


REFUSED = {
    "BadUninitialized": lambda at: (
        f"{at}: add lhs reads uninitialized memory: torch.empty_like at "
        f"{_created('BadUninitialized', 'torch.empty_like')} is read with elements no write set "
        "(the box at [0, 12, 0, 0] of size [2, 12, 5, 6]); fill it first (zero_(), fill_(v)) or "
        "create it with torch.zeros or torch.full"
    ),
    "BadUninitializedOutput": lambda at: (
        f"{at}: output 0 reads uninitialized memory: Tensor.new_empty at "
        f"{_created('BadUninitializedOutput', 'new_empty')} is read with elements no write set "
        "(the box at [0, 0, 0, 0] of size [2, 24, 5, 1]); fill it first (zero_(), fill_(v)) or "
        "create it with torch.zeros or torch.full"
    ),
    "BadWriteIntoInput": lambda at: (
        f"{at}: in-place write torch.Tensor.__setitem__ into input 0; a gpuopt graph cannot change "
        "its inputs, parameters or buffers: compute a new tensor instead"
    ),
    "BadTensorIndex": lambda at: (
        f"{at}: torch.Tensor.__setitem__ with a tensor index; gpuopt captures slice assignment into "
        "boxes (integers, slices, '...'): write the pieces one slice at a time"
    ),
    "BadNoneIndex": lambda at: (
        f"{at}: torch.Tensor.__setitem__ with None (a new axis) in the target index is not "
        "supported; index the tensor without it"
    ),
    "BadStridedEmpty": lambda at: (
        f"{at}: output 0 reads uninitialized memory: torch.empty_like at "
        f"{_created('BadStridedEmpty', 'empty_like')} is read with elements no write set (the "
        "element at [0, 1, 0, 0] and 719 others); fill it first (zero_(), fill_(v)) or create it "
        "with torch.zeros or torch.full"
    ),
    "BadStaleView": lambda at: (
        f"{at}: in-place write torch.Tensor.__setitem__ changed memory that a tensor read later "
        "shares (output 0), and that tensor is not a box of the written one (a reshape of part of "
        "it); gpuopt would read the old value: write the op out of place"
    ),
    "BadConstantBuffer": lambda at: (
        f"{at}: mul rhs is a tensor that is neither a model input, a parameter or buffer of the "
        f"module, nor computed from them (torch.ones_like at {_created('BadConstantBuffer', 'ones_like')}, "
        "no computed value written into it); gpuopt has no constant op: register it as a buffer "
        "of the module"
    ),
    "BadScalarMulOnView": lambda at: (
        f"{at}: mul with a Python scalar operand (0.5) is not supported; seg.mul takes two tensors"
    ),
}


def test_every_bad_module_is_listed() -> None:
    bad = [line.split()[1].split("(")[0] for line in SOURCE if line.startswith("class Bad")]
    assert sorted(bad) == sorted(REFUSED)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_one_located_line(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    status = export_main(
        [
            f"{MODELS}:{name}",
            "-o",
            str(tmp_path / "m.mlir"),
            "--weights",
            str(tmp_path / "m.safetensors"),
            "--input-shape",
            ",".join(str(d) for d in _shape(name)),
            "-q",
        ]
    )
    err = capsys.readouterr().err
    assert status == 1, err
    expected = REFUSED[name](f"{MODELS}:{_line(name)}")
    assert err == f"gpuopt.export: error: {expected}\n"
    assert not (tmp_path / "m.mlir").exists()
