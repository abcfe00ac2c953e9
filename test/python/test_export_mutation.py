"""In-place writes: the exporter captures them functionally or refuses them.

Each module of models/inplace.py is exported with the command line's `main`
(in process: a subprocess per module would spend seconds importing torch; one
test runs the real `python -m gpuopt.export`). An `Unsafe*` module must fail
(exit 1, one line, no traceback) with
a message naming the op and the file:line marked `# WRITE`, and write no output.
A `Safe*` module must export, and `gpuopt-run --backend=reference` must match
PyTorch eager on a random input and random weights (relative L2 <= 1e-5).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import rel_l2

from gpuopt.capture import capture
from gpuopt.export import load_spec
from gpuopt.export import main as export_main
from gpuopt.tools import tool

HERE = Path(__file__).resolve().parent
MODELS = HERE / "models" / "inplace.py"
SOURCE = MODELS.read_text().splitlines()
REL_L2 = 1e-5


def _classes(prefix: str) -> list[str]:
    return [line.split()[1].split("(")[0] for line in SOURCE if line.startswith(f"class {prefix}")]


def _write_line(name: str) -> int:
    """The line marked `# WRITE` inside class ``name``."""
    start = SOURCE.index(next(line for line in SOURCE if line.startswith(f"class {name}(")))
    for i in range(start + 1, len(SOURCE)):
        if SOURCE[i].startswith("class "):
            break
        if SOURCE[i].endswith("# WRITE"):
            return i + 1
    raise AssertionError(f"{name} has no '# WRITE' line")


def _args(name: str, out: Path) -> list[str]:
    return [
        f"{MODELS}:{name}",
        "-o",
        str(out / "m.mlir"),
        "--weights",
        str(out / "m.safetensors"),
        "--input-shape",
        "1,4,6,6",
        "--seed",
        "11",
        "--reference-dir",
        str(out),
        "-q",
    ]


def _export(name: str, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Exit status and stderr of `python -m gpuopt.export` on ``name``."""
    capsys.readouterr()
    status = export_main(_args(name, out))
    return status, capsys.readouterr().err


# The ATen op each refusal must name; it comes from the op's schema, so a
# message naming it shows the write was found at the dispatcher.
UNSAFE_OPS = {
    "UnsafeReshapedViewOfMutatedBase": "aten.relu_",
    "UnsafeWriteThroughReshapedView": "aten.relu_",
    "UnsafeClamp": "aten.clamp_",
    "UnsafeIndexPut": "aten.index_put_",
    "UnsafeDataAssign": ".data",
    "UnsafeInputRelu": "aten.relu_",
    "UnsafeInplaceReluOnInput": "aten.relu_",
    "UnsafeParameterWrite": "aten.add_",
    "UnsafeBufferWrite": "aten.add_",
    "UnsafeNumpyWrite": "Tensor.numpy",
    "UnsafeDlpackWrite": "Tensor.__dlpack__",
    "UnsafeWriteWithoutTorchFunction": "aten.fill_",
    "UnsafeLastWriteWithoutTorchFunction": "aten.mul_",
}


def test_every_unsafe_module_is_listed() -> None:
    assert sorted(_classes("Unsafe")) == sorted(UNSAFE_OPS)


@pytest.mark.parametrize("name", sorted(UNSAFE_OPS))
def test_unsafe_write_is_refused_at_its_line(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, err = _export(name, tmp_path, capsys)
    assert status == 1, f"exit {status}; stderr:\n{err}"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuopt.export: error: "), err
    assert f"inplace.py:{_write_line(name)}" in err, err
    assert UNSAFE_OPS[name] in err, err
    assert not (tmp_path / "m.mlir").exists() and not (tmp_path / "m.safetensors").exists()


def test_refusal_from_the_command_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gpuopt.export", *_args("UnsafeClamp", tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"inplace.py:{_write_line('UnsafeClamp')}" in proc.stderr, proc.stderr


@pytest.mark.parametrize("name", _classes("Safe"))
def test_safe_inplace_module_matches_pytorch(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, err = _export(name, tmp_path, capsys)
    assert status == 0, err
    y = tmp_path / "y.npy"
    run = subprocess.run(
        [
            str(tool("gpuopt-run")),
            "--backend=reference",
            str(tmp_path / "m.mlir"),
            f"--weights={tmp_path / 'm.safetensors'}",
            f"--input=@{tmp_path / 'input.npy'}",
            f"--output=@{y}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    # output.npy is PyTorch eager on the same module, weights and input.
    expected = np.load(tmp_path / "output.npy")
    err = rel_l2(np.load(y), expected)
    assert err <= REL_L2, f"relative L2 error {err:.3e}"
    assert float(np.abs(expected).max()) > 0.0


def test_inplace_relu_on_a_fresh_value_is_one_seg_relu() -> None:
    """`x = conv(x); x.relu_()` becomes conv then relu, read by the next conv."""
    model = load_spec(f"{MODELS}:SafeReluInplace", {}).eval()
    mlir = capture(model, (torch.randn(1, 4, 6, 6),)).mlir
    assert mlir.count("seg.relu") == 1 and mlir.count("seg.conv2d") == 2
