"""python -m gpuopt.kernelbench: shape collection, kernel vs oneDNN equality, output schema, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gpuopt import kernelbench as kb

GRAPH = """\
    %1 = seg.fused_conv2d %0, %w, %b residual %r offsets_h = [1, -2] offsets_w = [] mode = zero stride = [1, 1] \
padding = [1, 1] dilation = [1, 1] groups = 1 activation = gelu : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>, \
tensor<4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    %2 = seg.conv2d %1, %w2 stride = [2, 2] padding = [0, 0] dilation = [1, 1] groups = 2 \
: tensor<1x4x8x8xf32>, tensor<6x2x1x1xf32> -> tensor<1x6x4x4xf32>
    %3 = seg.conv_transpose2d %2, %w3, %b3 stride = [2, 2] padding = [0, 0] output_padding = [0, 0] \
dilation = [1, 1] groups = 1 : tensor<1x6x4x4xf32>, tensor<6x3x2x2xf32>, tensor<3xf32> -> tensor<1x3x8x8xf32>
    %4 = seg.linear %t, %w4 : tensor<1x64x3xf32>, tensor<5x3xf32> -> tensor<1x64x5xf32>
"""


def test_parse_ops_reads_every_attribute() -> None:
    ops = kb.parse_ops(GRAPH)
    assert [o.shape.kind for o in ops] == ["conv2d", "conv2d", "conv_transpose2d", "linear"]
    fused, strided, convt, lin = (o.shape for o in ops)
    assert (fused.c, fused.oc, fused.kh, fused.pad, fused.activation) == (2, 4, 3, (1, 1), "gelu")
    assert fused.bias and fused.residual and fused.shift == "zero" and ops[0].offsets_h == [1, -2]
    assert (strided.groups, strided.stride, strided.oh, strided.bias, strided.shift) == (
        2,
        (2, 2),
        4,
        False,
        "",
    )
    assert (convt.oc, convt.kh, convt.oh, convt.bias) == (3, 2, 8, True) and convt.gpuopt_kernel()
    assert (lin.n, lin.c, lin.oc, lin.bias) == (64, 3, 5, False)
    assert strided.shape_class() == "conv 1x1 grouped strided"
    assert fused.flops() == 2 * 4 * 8 * 8 * 2 * 9


def test_parse_ops_reads_the_string_spelling_of_enums() -> None:
    # The enum attributes print as keywords; the parser also takes strings.
    quoted = GRAPH.replace("mode = zero", 'mode = "zero"').replace("activation = gelu", 'activation = "gelu"')
    assert quoted != GRAPH
    assert kb.parse_ops(quoted) == kb.parse_ops(GRAPH)


@pytest.mark.parametrize(
    ("shape", "offsets_h", "offsets_w"),
    [
        (
            kb.Shape(
                "conv2d", 1, 6, 9, 11, 8, 3, 3, (1, 1), (1, 1), bias=True, activation="gelu", oh=9, ow=11
            ),
            [],
            [],
        ),
        (
            kb.Shape(
                "conv2d",
                1,
                4,
                7,
                7,
                5,
                oh=7,
                ow=7,
                bias=True,
                residual=True,
                activation="relu",
                shift="cyclic",
            ),
            [1, -1, 3, 0],
            [2, 0, -5, 1],
        ),
        (
            kb.Shape("conv2d", 1, 4, 6, 6, 4, oh=6, ow=6, activation="gelu_tanh", shift="zero"),
            [2, -1, 0, 7],
            [],
        ),
        (kb.Shape("conv2d", 1, 8, 9, 9, 8, 3, 3, (2, 2), (1, 1), groups=8, oh=5, ow=5, bias=True), [], []),
        (kb.Shape("conv_transpose2d", 1, 6, 5, 4, 3, 2, 2, (2, 2), bias=True, oh=10, ow=8), [], []),
        (kb.Shape("linear", 37, 19, 1, 1, 23, bias=True), [], []),
    ],
)
def test_kernel_equals_onednn(shape: kb.Shape, offsets_h: list[int], offsets_w: list[int]) -> None:
    entry = kb.ShapeEntry(shape, {"m": 1}, offsets_h, offsets_w)
    p = kb.prepare(kb.load_library(), entry, seed=7)
    assert kb.rel_l2(p.gpuopt_out, p.onednn_out()) <= 1e-4
    g, o = kb.measure(p, runs=2, rep_s=0.001)
    assert len(g) == len(o) == 2 and min(g + o) > 0


def test_small_run_writes_the_schema(tmp_path: Path) -> None:
    out = tmp_path / "k.json"
    args = ["--models", "unext", "--input-size", "32", "--runs", "2", "--rep-ms", "1", "--max-shapes", "3"]
    assert kb.main([*args, "--json", str(out)]) == 0
    rec = json.loads(out.read_text())
    assert {"date", "command", "machine", "versions", "fma_peak_gflops", "shapes", "runs"} <= rec.keys()
    assert rec["machine"]["model_name"] and rec["versions"]["mkldnn_available"] is True
    assert len(rec["shapes"]) == 3 and all(s["counts"]["unext"] >= 1 for s in rec["shapes"])
    assert all(v > 0 for v in rec["fma_peak_gflops"].values())
    for run in rec["runs"]:
        assert len(run["shapes"]) == 3
        for r in run["shapes"]:
            assert r["status"] == "ok", r
            assert r["rel_l2"] <= 1e-4 and r["gpuopt_ms"] > 0 and r["onednn_ms"] > 0
            assert len(r["gpuopt_times_ms"]) == len(r["onednn_times_ms"]) == 2
        assert 0 < run["summary"]["unext"]["kernel_ms"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--models", "resnet"], "unknown models 'resnet'"),
        (["--isa", "neon"], "unknown isa 'neon'"),
        (["--threads", "0"], "--threads"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert kb.main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_isa_the_cpu_lacks_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        kb, "cpu_info", lambda: {"model_name": "test CPU", "flags": ["fma", "avx2"], "cores": 1}
    )
    assert kb.main(["--isa", "avx2,avx512"]) == 2
    assert "cannot run ISA path avx512" in capsys.readouterr().err


def test_fma_peak_of_an_unknown_isa_is_negative() -> None:
    assert kb.load_library().gpuopt_kb_fma_peak(b"sve", 1, 0.01, 1) < 0
    assert kb.load_library().gpuopt_kb_fma_peak(b"generic", 1, 0.01, 1) > 0
    assert np.isfinite(kb.load_library().gpuopt_kb_fma_peak(b"generic", 2, 0.01, 1))
