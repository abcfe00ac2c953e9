"""The cost report front end (python -m gpuopt.costreport) and the cost model's fidelity.

The numbers come from ``gpuopt-opt --seg-cost-report``; here: the JSON the plot is drawn
from, the plot itself (one point per op), a before/after pipeline comparison, and the
parameter and FLOP counts of the zoo against the published figures of ../shared/MODELS.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from spec_package import line_of, write_unet_package

from gpuopt import calibrate, costreport, models
from gpuopt.export import load_spec

# A device where predicted times are exact: 1 FLOP/s, 1 B/s, launches of 1000 s
# (compiled) and 10000 s (eager).
UNIT_DEVICE = {
    "devices": {
        "unit": {"peak_flops": {"fp32": 1}, "bandwidth": 1, "launch_s": 1000, "eager_launch_s": 10000}
    }
}

# conv (2 kernels eager: cuDNN + bias add) -> relu -> tokens (views) -> linear on the strided
# token view (2 kernels eager: matmul + bias add) -> gelu (fused into nothing: its producer is
# a linear).
GRAPH = """
func.func @forward(%x: tensor<1x2x4x4xf32>) -> tensor<1x16x5xf32> {
  %w = seg.param "conv.weight" : tensor<3x2x3x3xf32>
  %b = seg.param "conv.bias" : tensor<3xf32>
  %lw = seg.param "fc.weight" : tensor<5x3xf32>
  %lb = seg.param "fc.bias" : tensor<5xf32>
  %c = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1
       : tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32> -> tensor<1x3x4x4xf32>
  %r = seg.relu %c : tensor<1x3x4x4xf32>
  %f = seg.reshape %r : tensor<1x3x4x4xf32> -> tensor<1x3x16xf32>
  %t = seg.permute %f dims = [0, 2, 1] : tensor<1x3x16xf32> -> tensor<1x16x3xf32>
  %y = seg.linear %t, %lw, %lb : tensor<1x16x3xf32>, tensor<5x3xf32>, tensor<5xf32> -> tensor<1x16x5xf32>
  %g = seg.gelu %y : tensor<1x16x5xf32>
  return %g : tensor<1x16x5xf32>
}
"""

# Rolling-UNet's idiom on a 2-channel map: one-channel slices rolled by +c, then a 1x1 conv.
ROLL_GRAPH = """
func.func @forward(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = seg.param "w" : tensor<2x2x1x1xf32>
  %s0 = seg.slice %x start = [0, 0, 0, 0] size = [1, 1, 4, 4] step = [1, 1, 1, 1]
        : tensor<1x2x4x4xf32> -> tensor<1x1x4x4xf32>
  %s1 = seg.slice %x start = [0, 1, 0, 0] size = [1, 1, 4, 4] step = [1, 1, 1, 1]
        : tensor<1x2x4x4xf32> -> tensor<1x1x4x4xf32>
  %r1 = seg.roll %s1 shifts = [1] dims = [2] : tensor<1x1x4x4xf32>
  %c = seg.concat %s0, %r1 dim = 1 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
  %y = seg.conv2d %c, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1
       : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32> -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}
"""


@pytest.fixture
def unit_devices(tmp_path: Path) -> Path:
    path = tmp_path / "devices.json"
    path.write_text(json.dumps(UNIT_DEVICE))
    return path


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "graph.mlir"
    path.write_text(text)
    return path


def test_report_hand_counts(tmp_path: Path, unit_devices: Path) -> None:
    doc = costreport.report(_write(tmp_path, GRAPH), device="unit", devices=unit_devices)
    fn = doc["functions"][0]
    # conv: 48 outputs × 2·9 = 864 MACs; linear: 80 outputs × 3 = 240 MACs.
    assert fn["macs"] == 864 + 240
    assert fn["params"] == 54 + 3 + 15 + 5
    ops = {op["name"]: op for op in fn["ops"]}
    # Eager: conv + bias add, relu, matmul + bias add (strided tokens), gelu; views are free.
    assert [ops[n]["eager"]["kernels"] for n in ("seg.conv2d", "seg.relu", "seg.linear", "seg.gelu")] == [
        2,
        1,
        2,
        1,
    ]
    assert ops["seg.reshape"]["eager"]["kernels"] == ops["seg.permute"]["eager"]["kernels"] == 0
    assert fn["eager"]["kernels"] == 6
    assert fn["compiled"]["kernels"] == 4
    # Compiled linear: 2·240 + 80 FLOPs; 192 + 60 + 20 + 320 bytes: memory-bound on the unit device.
    linear = ops["seg.linear"]["compiled"]
    assert (linear["flops"], linear["bytes"], linear["time_s"]) == (560, 592, 1592)
    # The summary is the sum of the ops.
    assert fn["eager"]["latency_s"] == sum(op["eager"]["time_s"] for op in fn["ops"])


def test_roofline_png_has_one_point_per_op(tmp_path: Path, unit_devices: Path) -> None:
    doc = costreport.report(_write(tmp_path, GRAPH), device="unit", devices=unit_devices)
    png = tmp_path / "roofline.png"
    panels = costreport.plot_roofline([("eager", doc, "eager"), ("compiled", doc, "compiled")], png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for points, mode in zip(panels, ("eager", "compiled")):
        with_kernels = [op["index"] for op in doc["functions"][0]["ops"] if op[mode]["kernels"] > 0]
        assert [p.index for p in points] == with_kernels
    assert len(panels[0]) == 4  # conv, relu, linear, gelu
    assert len(panels[1]) == 4  # the same: nothing to fuse, views and params cost no kernel


def test_pipeline_before_after(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    graph = _write(tmp_path, ROLL_GRAPH)
    before = costreport.report(graph)
    after = costreport.report(graph, pipeline=["--fuse-roll"])
    names_before = {p.name for p in costreport.roofline_points(before, "eager")}
    names_after = {p.name for p in costreport.roofline_points(after, "compiled")}
    assert "seg.roll" in names_before and "seg.concat" in names_before
    assert names_after == {"seg.fused_conv2d"}
    assert after["functions"][0]["compiled"]["kernels"] < before["functions"][0]["eager"]["kernels"]

    png = tmp_path / "cli.png"
    assert costreport.main([str(graph), "--pipeline=--fuse-roll", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "gpuopt compiled, after --fuse-roll" in out
    assert png.exists()


# Rolling-UNet-S's deepest 3x3 convolution: 256 -> 128 channels on a 14x14 map (K = 2304).
DEEP_CONV = """
func.func @forward(%x: tensor<1x256x14x14xf32>) -> tensor<1x128x14x14xf32> {
  %w = seg.param "w" : tensor<128x256x3x3xf32>
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1
       : tensor<1x256x14x14xf32>, tensor<128x256x3x3xf32> -> tensor<1x128x14x14xf32>
  return %y : tensor<1x128x14x14xf32>
}
"""


def test_gpu_conv_routes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    graph = _write(tmp_path, DEEP_CONV)
    docs = {
        r: costreport.report(graph, "h200", gpu_conv=r) for r in ("model", "generated", "library", "auto")
    }
    conv = {r: d["functions"][0]["ops"][-1] for r, d in docs.items()}
    assert all(d["gpu_conv"]["route"] == r for r, d in docs.items())
    assert "route" not in conv["model"]["compiled"]
    # 128 x 196 outputs fill few of the 132 SMs: the generated kernel splits
    # the reduction (a second kernel adds the parts), as the kernel pass does.
    gen = conv["generated"]["compiled"]
    assert gen["route"] == "generated" and gen["splits"] > 1 and gen["kernels"] == 2
    assert gen["tile"][0] * gen["tile"][1] >= 16 * 64
    # The model's 128 x 128 library tiles leave most SMs idle; the split
    # tiles fill them (even at the generated kernels' lower efficiency).
    assert gen["time_s"] < conv["model"]["compiled"]["time_s"]
    assert conv["library"]["compiled"]["route"] == "library"
    assert conv["auto"]["compiled"]["time_s"] == pytest.approx(
        min(gen["time_s"], conv["library"]["compiled"]["time_s"])
    )
    assert costreport.main([str(graph), "--device=h200", "--gpu-conv=generated"]) == 0
    assert "compiled convolutions/linears: --gpu-conv=generated" in capsys.readouterr().out
    # A route on a CPU device: the pass's located error, exit 1, no traceback.
    assert costreport.main([str(graph), "--device=cpu", "--gpu-conv=generated"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gpuopt.costreport: error: gpuopt-opt exited with 1:")
    assert f"{graph}:2:1: error: seg-cost-report: gpu-conv=generated needs a GPU" in err


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A graph without functions, bytes that are not UTF-8, an output that is
    a directory: one error line (or argparse's), no traceback."""
    empty = _write(tmp_path, "module {}\n")
    assert costreport.main([str(empty)]) == 1
    assert capsys.readouterr().err == f"gpuopt.costreport: error: {empty}: no function to report on\n"
    binary = tmp_path / "bin.mlir"
    binary.write_bytes(b"\xff\xfe binary\n")
    assert costreport.main([str(binary)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gpuopt.costreport: error: gpuopt-opt exited with 1:") and "Traceback" not in err
    (tmp_path / "adir").mkdir()
    with pytest.raises(SystemExit) as exit_info:
        costreport.main([str(_write(tmp_path, GRAPH)), "--png", str(tmp_path / "adir")])
    assert exit_info.value.code == 2
    assert (
        "--png " + str(tmp_path / "adir") + " is a directory, not a file to write" in capsys.readouterr().err
    )


def test_calibrated_entry_is_read_by_the_pass(tmp_path: Path) -> None:
    """python -m gpuopt.calibrate writes entries that --seg-cost-report reads, keeping the others."""
    devices = tmp_path / "devices.json"
    devices.write_text(json.dumps(UNIT_DEVICE))
    entry = {
        "name": "test cpu",
        "kind": "cpu",
        "peak_flops": {"fp32": 2.0},
        "bandwidth": 4.0,
        "compute_efficiency": 1.0,
        "memory_efficiency": 1.0,
        "units": 2,
        "launch_s": 1e-06,
        "eager_launch_s": 1.5e-06,
    }
    calibrate.write_entry(devices, "mine", entry)
    assert set(json.loads(devices.read_text())["devices"]) == {"unit", "mine"}
    doc = costreport.report(_write(tmp_path, GRAPH), device="mine", devices=devices)
    assert doc["device"]["bandwidth"] == 4.0
    assert doc["device"]["eager_launch_s"] == 1.5e-06
    # The shipped device file is in the writer's format.
    shipped = Path(calibrate.DEFAULT_DEVICES)
    assert calibrate.format_devices(json.loads(shipped.read_text())) == shipped.read_text()


# ---------------------------------------------------------------------------
# Fidelity against ../shared/MODELS.md (published facts, asserted to their printed precision).
# ---------------------------------------------------------------------------

_cache: dict[tuple[str, int], dict] = {}


def _zoo(name: str, size: int, tmp_path_factory: pytest.TempPathFactory) -> dict:
    if (name, size) not in _cache:
        path = tmp_path_factory.mktemp("zoo") / f"{name}_{size}.mlir"
        costreport.export_zoo(name, size, path)
        _cache[name, size] = costreport.report(path)["functions"][0]
    return _cache[name, size]


def _used_params(name: str) -> int:
    """Parameters of the module that its forward uses (Rolling-UNet keeps one unused LayerNorm per Lo2)."""
    model = models.build(name)
    return sum(p.numel() for n, p in model.named_parameters() if "unused_norm" not in n)


@pytest.mark.parametrize(
    "name, params",
    [
        ("unet", 31_037_633),
        ("rolling_unet_s", 1_783_185),
        ("rolling_unet_m", 7_098_401),
        ("rolling_unet_l", 28_324_929),
        ("unext", 1_471_921),
    ],
)
def test_zoo_parameters(name: str, params: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    assert sum(p.numel() for p in models.build(name).parameters()) == params
    assert _zoo(name, 256, tmp_path_factory)["params"] == _used_params(name)


def test_unext_stripe_reconstruction(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The seed's 3.48 M parameters and 1.922 GFLOPs (2 × thop at 224²), within 5%."""
    fn = _zoo("unext_stripe", 224, tmp_path_factory)
    assert fn["params"] == _used_params("unext_stripe")
    assert fn["params"] == pytest.approx(3.48e6, rel=0.05)
    assert 2 * fn["thop_macs"] / 1e9 == pytest.approx(1.922, rel=0.05)


def _half_unit(value: float) -> float:
    """Half a unit of the last printed digit of ``value``."""
    return 0.5 * 10 ** -len(f"{value}".split(".")[1])


@pytest.mark.parametrize(
    "name, true_gmacs, thop_gmacs",
    [
        ("rolling_unet_s", 2.070, 2.102),
        ("rolling_unet_m", 8.217, 8.282),
        ("rolling_unet_l", 32.742, 32.870),
        ("unext", 0.562, 0.573),
        ("unet", 48.17, None),
    ],
)
def test_zoo_macs_at_256(
    name: str, true_gmacs: float, thop_gmacs: float | None, tmp_path_factory: pytest.TempPathFactory
) -> None:
    fn = _zoo(name, 256, tmp_path_factory)
    assert fn["macs"] / 1e9 == pytest.approx(true_gmacs, abs=_half_unit(true_gmacs))
    if thop_gmacs is not None:
        assert fn["thop_macs"] / 1e9 == pytest.approx(thop_gmacs, abs=_half_unit(thop_gmacs))


@pytest.mark.parametrize(
    "name, true_gmacs, seed_gflops",
    [("unet", 36.88, 83.82), ("rolling_unet_s", None, 3.22)],
)
def test_seed_gflops_at_224(
    name: str, true_gmacs: float | None, seed_gflops: float, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The seed's "GFLOPs" are 2 × thop MACs at 224²."""
    fn = _zoo(name, 224, tmp_path_factory)
    assert 2 * fn["thop_macs"] / 1e9 == pytest.approx(seed_gflops, abs=_half_unit(seed_gflops))
    if true_gmacs is not None:
        assert fn["macs"] / 1e9 == pytest.approx(true_gmacs, abs=_half_unit(true_gmacs))


# ---------------------------------------------------------------------------
# MODEL as any SPEC of gpuopt.export (docs/Export.md), e.g. a package.
# ---------------------------------------------------------------------------


def test_package_spec_is_exported_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    package = write_unet_package(tmp_path / "proj", width=4)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "report.json"
    status = costreport.main(["proj/unet:UNet", "--input-shape", "1,3,16,16", "--json", str(out)])
    assert status == 0, capsys.readouterr().err
    fn = json.loads(out.read_text())["before"]["functions"][0]
    # The graph's parameters are the module's (built here the same way).
    model = load_spec(f"{package}:UNet", {})
    assert fn["params"] == sum(p.numel() for p in model.parameters())
    assert "PyTorch eager, as given" in capsys.readouterr().out


def test_dotted_spec_with_kwargs_and_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_unet_package(tmp_path / "proj")
    out = tmp_path / "report.json"
    args = ["unet.unet_model:UNet", "--path", str(tmp_path / "proj"), "--kwargs", '{"width": 6}']
    assert costreport.main([*args, "--size", "8", "--json", str(out)]) == 0, capsys.readouterr().err
    model = load_spec("unet.unet_model:UNet", {"width": 6}, [tmp_path / "proj"])
    assert json.loads(out.read_text())["before"]["functions"][0]["params"] == sum(
        p.numel() for p in model.parameters()
    )


@pytest.mark.parametrize(
    "spec, extra, expected",
    [
        ("proj/unet:Missing", [], "SPEC 'proj/unet:Missing': proj/unet/__init__.py defines no 'Missing'"),
        (
            "proj/unet:UNet",
            ["--kwargs", '{"width": 1}'],
            "constructing proj/unet:UNet: ValueError: width 1 is too small (proj/unet/unet_model.py:{RAISE})",
        ),
        ("zoo:nope", [], "unknown zoo model 'nope'; available: " + ", ".join(models.names())),
    ],
)
def test_bad_spec_is_one_line(
    spec: str,
    extra: list[str],
    expected: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    package = write_unet_package(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert costreport.main([spec, *extra]) == 1
    raise_line = line_of(package / "unet_model.py", "# RAISE")
    captured = capsys.readouterr()
    assert captured.err == f"gpuopt.costreport: error: {expected.replace('{RAISE}', str(raise_line))}\n"
    assert captured.out == ""
