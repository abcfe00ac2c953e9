"""Differential testing of the roll passes on random shift graphs.

1000 generated cases of roll spellings, 1000 of the exporter's canonical
forms of the other shift idioms and 300 of TSM's shift along the frames in
front of (mostly) a convolution (see shift_graphs.py), packed 100 to a
function, run on the reference backend before and after each pipeline. Shifts
move data exactly, so every result must agree to fp32 rounding: |a - e| <=
1e-5 + 1e-5 |e| (a linear turned into a 1x1 convolution may sum in another
order). The pipelines must also leave no seg.roll behind, must fold a good
share of the shifts (for TSM: into the convolutions' frame_shift) and, for
the canonical forms, recognize most of them (a pass that never fires would
pass the numeric check).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import shift_graphs

from gpuopt.tools import tool

SEED = 20261130
BATCHES = 10
PER_BATCH = 100
PIPELINES = ["--fuse-roll", "--collapse-rolls", "--gpuopt-optimize", "--roll-to-deform-conv"]


def run_module(mlir: Path, inputs: list[Path], n_out: int, out_dir: Path) -> list[np.ndarray]:
    outs = [out_dir / f"{mlir.stem}_out{i}.npy" for i in range(n_out)]
    proc = subprocess.run(
        [
            str(tool("gpuopt-run")),
            str(mlir),
            "--quiet",
            *[f"--input=@{p}" for p in inputs],
            *[f"--output=@{p}" for p in outs],
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [np.load(p) for p in outs]


# (stream, batch): the roll spellings 100 to a batch; the canonical forms,
# fewer ops per case, 200 (the cost is mostly per tool invocation); TSM 100.
STREAMS = (
    [("rolls", b, PER_BATCH) for b in range(BATCHES)]
    + [("canonical", b, 2 * PER_BATCH) for b in range(BATCHES // 2)]
    + [("tsm", b, PER_BATCH) for b in range(3)]
)


def generate(stream: str, index: int, first: int) -> shift_graphs.Case:
    if stream == "tsm":
        return shift_graphs.generate_tsm(SEED, index, first)
    return shift_graphs.generate(SEED, index, first, stream == "canonical")


@pytest.mark.parametrize(
    ("stream", "batch", "per_batch"),
    STREAMS,
    ids=[f"{s}{b}" for s, b, _ in STREAMS],
)
def test_random_shift_graphs(stream: str, batch: int, per_batch: int, tmp_path: Path) -> None:
    canonical = stream == "canonical"
    cases, first = [], 0
    for i in range(per_batch):
        case = generate(stream, batch * per_batch + i, first)
        first += len(case.args)
        cases.append(case)
    original = tmp_path / "original.mlir"
    original.write_text(shift_graphs.module(cases))

    rng = np.random.default_rng(SEED + batch)
    shapes = [s for c in cases for s in c.args]
    inputs = []
    for i, s in enumerate(shapes):
        p = tmp_path / f"in{i}.npy"
        np.save(p, rng.standard_normal(s).astype(np.float32))
        inputs.append(p)
    expected = run_module(original, inputs, len(cases), tmp_path)

    for pipeline in PIPELINES:
        optimized = tmp_path / f"opt{PIPELINES.index(pipeline)}.mlir"
        proc = subprocess.run(
            [str(tool("gpuopt-opt")), str(original), pipeline, "-o", str(optimized)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        text = optimized.read_text()
        assert "seg.roll" not in text, f"{pipeline} left a seg.roll"
        if pipeline == "--fuse-roll" and stream == "tsm":
            frames = len(re.findall(r"seg\.fused_conv2d .* frame_shift = <frames = \d", text))
            assert frames >= per_batch // 8, f"only {frames} frame shifts fused in {per_batch} cases"
        elif pipeline == "--fuse-roll":
            fused = len(re.findall(r"seg\.fused_conv2d .* offsets_h = \[\d", text)) + len(
                re.findall(r"seg\.fused_conv2d .* offsets_w = \[-?\d", text)
            )
            assert fused >= per_batch // 5, f"only {fused} shifts fused in {per_batch} cases"
        if pipeline == "--collapse-rolls":
            # What stays: the spoiled cases (not shifts) and the multi
            # consumers' own concats; the pads of the rolls stream are
            # UNeXt's, which become zero-filled shifts.
            for op, share in [("seg.concat", 0.3 if canonical else 0.4)] + (
                [] if canonical else [("seg.pad", 0.4)]
            ):
                before, after = original.read_text().count(op), text.count(op)
                assert after <= share * before, f"{after} of {before} {op} left: shifts not recognized"
        actual = run_module(optimized, inputs, len(cases), tmp_path)
        for case, a, e in zip(cases, actual, expected):
            assert a.shape == e.shape, case.name
            np.testing.assert_allclose(
                a, e, rtol=1e-5, atol=1e-5, err_msg=f"{pipeline}: case {case.name} differs"
            )


# The canonical-form idioms of the --collapse-rolls lit test, each checked
# against the PyTorch code it stands for, on the reference and cpu backends
# after --gpuopt-optimize (which must have recognized it: no concat left).
IDIOMS_MLIR = Path(__file__).parents[1] / "Dialect/Seg/Transforms/collapse-rolls-idioms.mlir"


def _torch_idioms():
    import torch
    import torch.nn.functional as F

    def tsm(x):
        out = torch.zeros_like(x)
        out[:, :-1, :2] = x[:, 1:, :2]
        out[:, 1:, 2:4] = x[:, :-1, 2:4]
        out[:, :, 4:] = x[:, :, 4:]
        return out

    def tsm_conv(x, w):
        v = x.view(2, 3, 4, 2, 2)
        out = torch.zeros_like(v)
        out[:, :-1, :1] = v[:, 1:, :1]
        out[:, 1:, 1:2] = v[:, :-1, 1:2]
        out[:, :, 2:] = v[:, :, 2:]
        return F.conv2d(out.view(6, 4, 2, 2), w, padding=1)

    def shiftvit(x):
        out = torch.zeros_like(x)
        out[:, 0, :, 1:] = x[:, 0, :, :-1]
        out[:, 1, :, :-1] = x[:, 1, :, 1:]
        out[:, 2, 1:, :] = x[:, 2, :-1, :]
        out[:, 3, :-1, :] = x[:, 3, 1:, :]
        out[:, 4:] = x[:, 4:]
        return x + out

    def shiftnet(x, w):
        xp = F.pad(x, (1, 1, 1, 1))
        shifts = [(1, 0), (-1, 0), (0, 1), (0, -1), (0, 0)]
        groups = [xp[:, g : g + 1, 1 - dy : 5 - dy, 1 - dx : 5 - dx] for g, (dy, dx) in enumerate(shifts)]
        return F.conv2d(torch.cat(groups, 1), w)

    def hand_written_roll(x, w):
        return F.conv2d(torch.cat((x[..., -2:], x[..., :-2]), -1), w, padding=1)

    def index_select_runs(x):
        return torch.index_select(x, 1, torch.tensor([5, 6, 7, 0, 1, 2, 3, 4]))

    def circular_pad_crop(x):
        return F.pad(x, (1, 1, 2, 2), mode="circular")[:, :, 1:5, 2:10]

    return {
        f.__name__: f
        for f in (tsm, tsm_conv, shiftvit, shiftnet, hand_written_roll, index_select_runs, circular_pad_crop)
    }


@pytest.mark.parametrize("backend", ["reference", "cpu"])
def test_canonical_idioms_match_pytorch(backend: str, tmp_path: Path) -> None:
    import torch

    idioms = _torch_idioms()
    chunks = IDIOMS_MLIR.read_text().split("// -----")
    found = 0
    for chunk in chunks:
        m = re.search(r"^func\.func @(\w+)\((.*?)\) ->", chunk, re.MULTILINE)
        if not m or m.group(1) not in idioms:
            continue
        found += 1
        name = m.group(1)
        src = tmp_path / f"{name}.mlir"
        src.write_text(chunk[m.start() :])
        opt = tmp_path / f"{name}_opt.mlir"
        proc = subprocess.run(
            [str(tool("gpuopt-opt")), str(src), "--gpuopt-optimize", "-o", str(opt)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert "seg.concat" not in opt.read_text(), f"{name}: not recognized"
        shapes = [
            tuple(int(d) for d in t.split("x")[:-1]) for t in re.findall(r"tensor<([0-9x]+f32)>", m.group(2))
        ]
        rng = np.random.default_rng(7)
        args, inputs = [], []
        for i, shape in enumerate(shapes):
            a = rng.standard_normal(shape).astype(np.float32)
            p = tmp_path / f"{name}_in{i}.npy"
            np.save(p, a)
            args.append(torch.from_numpy(a))
            inputs.append(p)
        expected = idioms[name](*args).numpy()
        out = tmp_path / f"{name}_out.npy"
        proc = subprocess.run(
            [
                str(tool("gpuopt-run")),
                str(opt),
                "--quiet",
                f"--backend={backend}",
                *[f"--input=@{p}" for p in inputs],
                f"--output=@{out}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        actual = np.load(out)
        assert actual.shape == expected.shape, name
        err = np.linalg.norm(actual - expected) / max(np.linalg.norm(expected), 1e-30)
        assert err <= 1e-5, f"{name} on {backend}: relative L2 error {err:.3e}"
    assert found == len(idioms), f"{found} of {len(idioms)} idioms found in {IDIOMS_MLIR}"
