"""`python -m gpuopt.weights convert`: torch.save'd state_dicts to safetensors.

A checkpoint as the upstream train.py files write it (torch.save of a
state_dict, Pytorch-UNet's with a non-tensor `mask_values` entry) converts,
with a note per dropped key, and then runs under --strict-weights with the
outputs of the PyTorch model; the C++ readers refuse the .pth itself with the
command that converts it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from test_artifacts import Net as ConvBn  # Conv-BN-ReLU

import gpuopt
from gpuopt.compiled import CompiledModel, CompiledModelError, compile_model
from gpuopt.randomize import randomize
from gpuopt.tools import tool


def convert(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gpuopt.weights", "convert", *[str(a) for a in args]],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def model_files(tmp_path: Path) -> dict[str, object]:
    model = randomize(ConvBn().eval(), seed=11)  # random weights and BN statistics
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(12))
    gpuopt.export(model, (x,), tmp_path / "m.mlir", tmp_path / "exported.safetensors")
    np.save(tmp_path / "x.npy", x.numpy())
    state = dict(model.state_dict())
    state["mask_values"] = [0, 1]  # as Pytorch-UNet's train.py saves it
    state["epoch"] = 3
    torch.save(state, tmp_path / "ck.pth")
    with torch.no_grad():
        expected = model(x).numpy()
    return {"dir": tmp_path, "model": model, "expected": expected}


def test_convert_drops_non_tensors_and_runs_strict(model_files: dict) -> None:
    d = model_files["dir"]
    proc = convert(d / "ck.pth", d / "ck.safetensors")
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if "note:" in line]
    assert len(notes) == 2 and "'mask_values'" in notes[0] and "'epoch'" in notes[1], proc.stderr
    tensors = load_file(str(d / "ck.safetensors"))
    state = model_files["model"].state_dict()
    assert set(tensors) == set(state)  # num_batches_tracked included
    for name, t in state.items():
        assert torch.equal(tensors[name], t), name
    for backend in ("reference", "cpu"):
        y = d / f"y-{backend}.npy"
        proc = subprocess.run(
            [
                str(tool("gpuopt-run")),
                str(d / "m.mlir"),
                f"--weights={d / 'ck.safetensors'}",
                f"--input=@{d / 'x.npy'}",
                f"--output=@{y}",
                f"--backend={backend}",
                "--strict-weights",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        np.testing.assert_allclose(np.load(y), model_files["expected"], rtol=1e-4, atol=1e-5)


def test_compiled_library_refuses_pth_and_accepts_the_state_dict_strictly(model_files: dict) -> None:
    d = model_files["dir"]
    so = compile_model(d / "m.mlir", d / "m.so")
    with pytest.raises(CompiledModelError, match=r"a PyTorch checkpoint .*python -m gpuopt\.weights convert"):
        CompiledModel(so, d / "ck.pth")
    assert convert(d / "ck.pth", d / "ck.safetensors").returncode == 0
    with CompiledModel(so, d / "ck.safetensors", strict=True) as m:
        (y,) = m.run(np.load(d / "x.npy"))
    np.testing.assert_allclose(y, model_files["expected"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a checkpoint at all", "not a loadable PyTorch checkpoint"),
        (None, "no such file"),
    ],
)
def test_convert_errors_are_one_line(tmp_path: Path, content: bytes | None, message: str) -> None:
    src = tmp_path / "in.pth"
    if content is not None:
        src.write_bytes(content)
    proc = convert(src, tmp_path / "out.safetensors")
    assert proc.returncode == 1
    assert proc.stderr.startswith("gpuopt.weights: error: ") and message in proc.stderr, proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert not (tmp_path / "out.safetensors").exists()


def test_convert_refuses_a_non_state_dict(tmp_path: Path) -> None:
    torch.save(torch.randn(3), tmp_path / "t.pt")
    proc = convert(tmp_path / "t.pt", tmp_path / "out.safetensors")
    assert proc.returncode == 1 and "not a state_dict" in proc.stderr, proc.stderr
    proc = convert(tmp_path / "t.pt", tmp_path / "t.pt")
    assert proc.returncode == 1 and "refusing to overwrite" in proc.stderr, proc.stderr
