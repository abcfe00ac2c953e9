"""Output safety of the Python tools: no output overwrites an input, none is left half-written.

`python -m gpuopt.export` refuses `-o`/`--weights` equal to each other, to the
SPEC file or to a file `--reference-dir` writes, before it reads or writes
anything; `python -m gpuopt.costreport` does the same for `--json`/`--png`
against the model and the device file. Every output goes through
gpuopt._atomic: a failed write leaves the old file as it was.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import gpuopt
from gpuopt import _atomic, costreport
from gpuopt.export import main as export_main

MODEL = """
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3, padding=1)

    def forward(self, x):
        return self.conv(x).relu()
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "net.py"
    path.write_text(MODEL)
    return path


def _export(spec: Path, output: Path, weights: Path, *extra: str) -> int:
    return export_main(
        [
            f"{spec}:Net",
            "-o",
            str(output),
            "--weights",
            str(weights),
            "--input-shape",
            "1,2,5,5",
            "-q",
            *extra,
        ]
    )


def test_output_equal_to_weights_is_refused(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "m.mlir"
    out.write_text("old graph")
    # A second spelling of the same file.
    assert _export(spec, out, tmp_path / "." / "m.mlir") == 1
    assert "-o and --weights are the same file" in capsys.readouterr().err
    assert out.read_text() == "old graph"


def test_output_equal_to_spec_file_is_refused(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _export(spec, tmp_path / "m.mlir", spec) == 1
    assert "--weights" in capsys.readouterr().err
    assert spec.read_text() == MODEL
    assert not (tmp_path / "m.mlir").exists()


def test_output_through_a_symlink_to_the_spec_is_refused(spec: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.mlir"
    link.symlink_to(spec)
    assert _export(spec, link, tmp_path / "m.safetensors") == 1
    assert spec.read_text() == MODEL


def test_output_in_the_reference_dir_is_refused(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = tmp_path / "ref"
    ref.mkdir()
    status = _export(spec, tmp_path / "m.mlir", ref / "output.npy", "--reference-dir", str(ref))
    assert status == 1
    assert "--reference-dir" in capsys.readouterr().err
    assert not (tmp_path / "m.mlir").exists() and not (ref / "output.npy").exists()


def test_distinct_outputs_are_written(spec: Path, tmp_path: Path) -> None:
    ref = tmp_path / "ref"
    assert _export(spec, tmp_path / "m.mlir", tmp_path / "m.safetensors", "--reference-dir", str(ref)) == 0
    assert "seg.conv2d" in (tmp_path / "m.mlir").read_text()
    assert np.load(ref / "input.npy").shape == (1, 2, 5, 5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.mlir", "m.safetensors", "net.py", "ref"]


def _full_disk(tensors: dict, filename: str) -> None:
    """A safetensors writer that runs out of space half-way."""
    Path(filename).write_bytes(b"half a header")
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), filename)


def test_failed_write_leaves_the_old_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import safetensors.torch

    out, weights = tmp_path / "m.mlir", tmp_path / "m.safetensors"
    out.write_text("old graph")
    weights.write_bytes(b"old weights")
    monkeypatch.setattr(safetensors.torch, "save_file", _full_disk)
    module = torch.nn.Sequential(torch.nn.Conv2d(2, 2, 1))
    with pytest.raises(OSError, match="No space left"):
        gpuopt.export(module, torch.randn(1, 2, 3, 3), out, weights)
    assert out.read_text() == "old graph" and weights.read_bytes() == b"old weights"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.mlir", "m.safetensors"]


def test_failed_write_from_the_command_line_is_one_line(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import safetensors.torch

    monkeypatch.setattr(safetensors.torch, "save_file", _full_disk)
    assert _export(spec, tmp_path / "m.mlir", tmp_path / "m.safetensors") == 1
    err = capsys.readouterr().err
    assert err.startswith("gpuopt.export: error: ") and err.count("\n") == 1, err
    assert f"cannot write {tmp_path / 'm.safetensors'}: No space left" in err, err
    assert not (tmp_path / "m.mlir").exists() and not (tmp_path / "m.safetensors").exists()


def test_missing_output_directory_is_one_line(
    spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _export(spec, tmp_path / "no" / "m.mlir", tmp_path / "m.safetensors") == 1
    err = capsys.readouterr().err
    assert (
        err
        == f"gpuopt.export: error: [Errno 2] cannot write {tmp_path / 'no' / 'm.mlir'}: No such file or directory\n"
    )
    assert not (tmp_path / "m.safetensors").exists()


def test_atomic_output_keeps_mode_suffix_and_symlink(tmp_path: Path) -> None:
    target = tmp_path / "y.npy"
    target.write_bytes(b"old")
    target.chmod(0o640)
    link = tmp_path / "link.npy"
    link.symlink_to(target)
    with _atomic.atomic_output(link) as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".npy"
        np.save(tmp, np.arange(3.0))  # np.save adds ".npy" unless the name has it
    assert link.is_symlink()
    np.testing.assert_array_equal(np.load(target), np.arange(3.0))
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.npy", "y.npy"]


def test_atomic_output_on_error_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt), _atomic.atomic_output(target) as tmp:
        tmp.write_text("half")
        raise KeyboardInterrupt
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_atomic_output_into_a_missing_directory_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="cannot write .*missing/out.json"):
        _atomic.write_text(tmp_path / "missing" / "out.json", "{}")


def test_atomic_output_writes_a_fifo_directly(tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    # The read end, opened first without waiting, lets the write end open at
    # once; what is written fits in the pipe's buffer, so nothing blocks.
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        _atomic.write_text(fifo, "{}")
        received = os.read(reader, 100)
    finally:
        os.close(reader)
    assert received == b"{}"
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["out.fifo"]


def character_device(tmp_path: Path) -> Path:
    """A private node of /dev/null's device (root may mknod), else /dev/null itself."""
    null = os.stat("/dev/null")
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, null.st_rdev)
    except PermissionError:
        return Path("/dev/null")
    return node


def test_atomic_output_writes_a_character_device_directly(tmp_path: Path) -> None:
    device = character_device(tmp_path)
    before = os.stat(device)
    _atomic.write_text(device, "{}")
    after = os.stat(device)
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert list(device.parent.glob(f".{device.name}.*")) == []


def test_atomic_output_to_dev_stdout_reaches_a_pipe() -> None:
    """`--json /dev/stdout` (a link to the pipe of stdout) writes into the pipe."""
    code = "from gpuopt._atomic import write_text; write_text('/dev/stdout', '{}')"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False)
    assert (proc.returncode, proc.stdout) == (0, b"{}"), proc.stderr.decode()


def test_atomic_output_refuses_a_directory_and_a_socket(tmp_path: Path) -> None:
    with pytest.raises(OSError, match=r"cannot write .*: not a regular file \(directory\)"):
        _atomic.write_text(tmp_path, "{}")
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        with pytest.raises(OSError, match=r"cannot write .*s.sock: not a regular file \(socket\)"):
            _atomic.write_text(path, "{}")
        assert stat.S_ISSOCK(path.lstat().st_mode)


@pytest.mark.parametrize("flag", ["--json", "--png"])
def test_costreport_output_equal_to_its_model_is_refused(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "m.mlir"
    model.write_text("the model")
    with pytest.raises(SystemExit) as exit_info:
        costreport.main([str(model), flag, str(model)])
    assert exit_info.value.code == 2
    assert "is also the model" in capsys.readouterr().err
    assert model.read_text() == "the model"


def test_costreport_output_equal_to_the_device_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    devices = tmp_path / "devices.json"
    devices.write_text("{}")
    with pytest.raises(SystemExit):
        costreport.main(["zoo:unet", "--devices", str(devices), "--json", str(devices)])
    assert "is also --devices" in capsys.readouterr().err
    assert devices.read_text() == "{}"
