"""The op-count report: rolls vanish, the numbers come from the real passes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from spec_package import UNET_OPS, line_of, write_unet_package

from gpuopt import models
from gpuopt.optreport import main, report


def test_unext_report_counts() -> None:
    text = report("unext", 64)
    row = re.search(r"^\s+roll\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$", text, re.MULTILINE)
    assert row, text
    assert [int(v) for v in row.groups()] == [40, 0, 0, 0]
    assert (
        "fuse-roll: 40 seg.roll removed, 8 shifts fused, 0 seg.channel_shift left, 0 seg.shift left" in text
    )
    assert "fuse-conv-bn-relu: 7 batch_norm folded" in text


@pytest.mark.parametrize("how", [[], ["--models"]], ids=["positional", "models"])
def test_any_spec_of_the_exporter(
    how: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A package (Pytorch-UNet's layout) by path, at --input-shape: the exported column is its graph."""
    write_unet_package(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    assert main([*how, "proj/unet:UNet", "--input-shape", "1,3,16,16"]) == 0, capsys.readouterr().err
    text = capsys.readouterr().out
    assert text.startswith("proj/unet:UNet at 1x3x16x16 (seg ops; parameters not counted)\n"), text
    for op, count in UNET_OPS.items():
        row = re.search(rf"^\s+{op}\s+(\d+)\s+\d+\s+\d+\s+\d+$", text, re.MULTILINE)
        assert row and int(row.group(1)) == count, text
    total = re.search(r"^\s+total\s+(\d+)", text, re.MULTILINE)
    assert total and int(total.group(1)) == sum(UNET_OPS.values()), text


@pytest.mark.parametrize(
    "args, expected",
    [
        (["proj/unet:Missing"], "SPEC 'proj/unet:Missing': proj/unet/__init__.py defines no 'Missing'"),
        (["--models", "nope"], "unknown zoo model 'nope'; available: " + ", ".join(models.names())),
        (
            ["unet.unet_model:UNet", "--kwargs", '{"width": 1}', "--path", "proj"],
            "constructing unet.unet_model:UNet: ValueError: width 1 is too small (proj/unet/unet_model.py:{RAISE})",
        ),
        (["zoo:unext", "--input-shape", "1,3,x"], "--input-shape '1,3,x': expected comma-separated integers"),
    ],
)
def test_bad_spec_is_one_line(
    args: list[str],
    expected: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    package = write_unet_package(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    assert main(args) == 1
    captured = capsys.readouterr()
    line = line_of(package / "unet_model.py", "# RAISE")
    assert captured.err == f"gpuopt.optreport: error: {expected.replace('{RAISE}', str(line))}\n"
    assert captured.out == ""


def test_traceback_on_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    package = write_unet_package(tmp_path / "proj")
    monkeypatch.chdir(tmp_path)
    assert main(["proj/unet:UNet", "--kwargs", '{"width": 1}', "--traceback"]) == 1
    err = capsys.readouterr().err
    line = line_of(package / "unet_model.py", "# RAISE")
    assert err.startswith("Traceback (most recent call last):\n"), err
    assert f'File "{package / "unet_model.py"}", line {line}, in __init__' in err, err
    assert err.splitlines()[-1].startswith("gpuopt.optreport: error: constructing proj/unet:UNet: ValueError")
