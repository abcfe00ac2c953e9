"""Bad input to gpuopt-run: each case exits with status 1 and a located message.

A crash (a signal: negative return code) or a zero exit with bad input fails
these tests.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import CONV_GRAPH
from safetensors.numpy import save_file

from gpuopt.tools import tool

BN_GRAPH = """\
func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %m = seg.param "bn.running_mean" : tensor<3xf32>
  %v = seg.param "bn.running_var" : tensor<3xf32>
  %g = seg.param "bn.weight" : tensor<3xf32>
  %b = seg.param "bn.bias" : tensor<3xf32>
  %y = seg.batch_norm %x, %m, %v, %g, %b epsilon = 1.0e-05
       : tensor<1x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<1x3x8x8xf32>
  return %y : tensor<1x3x8x8xf32>
}
"""


def run(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(tool("gpuopt-run")), *[str(a) for a in args]], capture_output=True, text=True, check=False
    )


def expect_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    assert proc.returncode == 1, f"exit {proc.returncode}\nstderr:\n{proc.stderr}"
    for fragment in fragments:
        assert fragment in proc.stderr, f"{fragment!r} not in:\n{proc.stderr}"


def test_valid_run_succeeds(files: dict[str, Path]) -> None:
    y = files["dir"] / "y.npy"
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}", f"--output=@{y}")
    assert proc.returncode == 0, proc.stderr
    assert np.load(y).shape == (1, 4, 8, 8)


def test_malformed_mlir(files: dict[str, Path]) -> None:
    files["model"].write_text(CONV_GRAPH.replace("stride = [1, 1]", "stride = [1, 1"))
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}")
    expect_error(proc, f"{files['model']}:4:")


def test_verifier_failure(files: dict[str, Path]) -> None:
    files["model"].write_text(CONV_GRAPH.replace("groups = 1", "groups = 2"))
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}")
    expect_error(proc, f"{files['model']}:4:", "divisible by groups")


def test_unknown_op(files: dict[str, Path]) -> None:
    files["model"].write_text(CONV_GRAPH.replace("seg.conv2d", "seg.conv3d"))
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}")
    expect_error(proc, f"{files['model']}:4:", "seg.conv3d")


def test_op_without_reference_implementation(files: dict[str, Path]) -> None:
    graph = """\
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
"""
    files["model"].write_text(graph)
    x = files["dir"] / "v.npy"
    np.save(x, np.arange(1, 5, dtype=np.float32))
    proc = run(files["model"], f"--input=@{x}")
    expect_error(proc, f"{files['model']}:2:", "cannot execute 'arith.addf'")


def test_missing_weights_file(files: dict[str, Path]) -> None:
    proc = run(files["model"], f"--weights={files['dir'] / 'nope.safetensors'}", f"--input=@{files['x']}")
    expect_error(proc, "nope.safetensors")


def test_no_weights_flag(files: dict[str, Path]) -> None:
    proc = run(files["model"], f"--input=@{files['x']}")
    expect_error(proc, "--weights")


def test_truncated_weights(files: dict[str, Path]) -> None:
    data = files["weights"].read_bytes()
    files["weights"].write_bytes(data[: len(data) - 10])
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}")
    expect_error(proc, str(files["weights"]))


def test_hostile_header_length(files: dict[str, Path]) -> None:
    data = files["weights"].read_bytes()
    files["weights"].write_bytes(struct.pack("<Q", 2**63) + data[8:])
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}")
    expect_error(proc, str(files["weights"]))


def test_garbage_weights(files: dict[str, Path]) -> None:
    files["weights"].write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all")
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}")
    expect_error(proc, str(files["weights"]))


def test_missing_parameter(files: dict[str, Path], rng: np.random.Generator) -> None:
    save_file({"conv.weight": rng.standard_normal((4, 3, 3, 3)).astype(np.float32)}, str(files["weights"]))
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}")
    expect_error(proc, f"{files['model']}:3:", "parameter 'conv.bias' is not in the weights file")


def test_parameter_shape_mismatch(files: dict[str, Path], rng: np.random.Generator) -> None:
    save_file(
        {
            "conv.weight": rng.standard_normal((4, 3, 5, 5)).astype(np.float32),
            "conv.bias": rng.standard_normal(4).astype(np.float32),
        },
        str(files["weights"]),
    )
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}")
    expect_error(proc, f"{files['model']}:2:", "[4, 3, 5, 5]", "tensor<4x3x3x3xf32>")


def test_wrong_input_shape(files: dict[str, Path]) -> None:
    np.save(files["x"], np.ones((1, 3, 8, 9), dtype=np.float32))
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}")
    expect_error(proc, "input 0 has shape [1, 3, 8, 9]", "tensor<1x3x8x8xf32>")


def test_wrong_input_dtype(files: dict[str, Path]) -> None:
    np.save(files["x"], np.ones((1, 3, 8, 8), dtype=np.float64))
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}")
    expect_error(proc, str(files["x"]), "'<f8'")


def test_fortran_order_input(files: dict[str, Path]) -> None:
    np.save(files["x"], np.asfortranarray(np.ones((1, 3, 8, 8), dtype=np.float32).transpose(3, 2, 1, 0)))
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}")
    expect_error(proc, str(files["x"]))


def test_truncated_input(files: dict[str, Path]) -> None:
    data = files["x"].read_bytes()
    files["x"].write_bytes(data[:-4])
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}")
    expect_error(proc, str(files["x"]), "truncated")


def test_missing_input(files: dict[str, Path]) -> None:
    proc = run(files["model"], f"--weights={files['weights']}")
    expect_error(proc, "takes 1 input(s) but 0 --input given")


def test_input_without_at(files: dict[str, Path]) -> None:
    proc = run(files["model"], f"--weights={files['weights']}", f"--input={files['x']}")
    expect_error(proc, "expected @FILE.npy")


def test_too_many_outputs(files: dict[str, Path]) -> None:
    proc = run(
        files["model"],
        f"--weights={files['weights']}",
        f"--input=@{files['x']}",
        "--output=@a.npy",
        "--output=@b.npy",
    )
    expect_error(proc, "returns 1 result(s) but 2 --output given")


def test_unavailable_backend(files: dict[str, Path]) -> None:
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}", "--backend=cuda")
    expect_error(proc, "backend 'cuda' is not available")


def test_unknown_entry(files: dict[str, Path]) -> None:
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}", "--entry=main")
    expect_error(proc, "no function named @main")


def test_missing_model(files: dict[str, Path]) -> None:
    proc = run(files["dir"] / "absent.mlir", f"--input=@{files['x']}")
    expect_error(proc, "absent.mlir")


def test_unused_weights_warn(files: dict[str, Path], rng: np.random.Generator) -> None:
    save_file(
        {
            "conv.weight": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
            "conv.bias": rng.standard_normal(4).astype(np.float32),
            "extra.weight": rng.standard_normal(2).astype(np.float32),
        },
        str(files["weights"]),
    )
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}")
    assert proc.returncode == 0, proc.stderr
    assert "'extra.weight'" in proc.stderr


def test_integer_parameter(files: dict[str, Path], rng: np.random.Generator) -> None:
    save_file(
        {
            "conv.weight": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
            "conv.bias": np.arange(4, dtype=np.int64),
        },
        str(files["weights"]),
    )
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}")
    expect_error(proc, f"{files['model']}:3:", "parameter 'conv.bias' is I64")


def test_full_state_dict_loads(files: dict[str, Path], tmp_path: Path) -> None:
    """A BatchNorm state_dict holds int64 num_batches_tracked: it loads, unused."""
    import torch
    from safetensors.torch import save_file as save_torch

    bn = torch.nn.BatchNorm2d(3)
    save_torch({f"bn.{k}": v for k, v in bn.state_dict().items()}, str(tmp_path / "bn.safetensors"))
    files["model"].write_text(BN_GRAPH)
    proc = run(files["model"], f"--weights={tmp_path / 'bn.safetensors'}", f"--input=@{files['x']}")
    assert proc.returncode == 0, proc.stderr
    # BatchNorm's counter is training bookkeeping: never reported as unused.
    assert "num_batches_tracked" not in proc.stderr


def test_strict_weights_accepts_a_batch_norm_state_dict(files: dict[str, Path], tmp_path: Path) -> None:
    """--strict-weights with a real nn.BatchNorm2d state_dict (random statistics): runs, matches PyTorch;
    a tensor that really is unused is still rejected."""
    import torch
    from safetensors.torch import save_file as save_torch

    gen = torch.Generator().manual_seed(7)
    bn = torch.nn.BatchNorm2d(3).eval()
    with torch.no_grad():
        for t in (bn.weight, bn.bias, bn.running_mean):
            t.copy_(torch.randn(3, generator=gen))
        bn.running_var.copy_(torch.rand(3, generator=gen) + 0.5)
    bn.num_batches_tracked.fill_(17)
    state = {f"bn.{k}": v for k, v in bn.state_dict().items()}
    assert "bn.num_batches_tracked" in state
    save_torch(state, str(tmp_path / "bn.safetensors"))
    files["model"].write_text(BN_GRAPH)
    for backend in ("reference", "cpu"):
        y = tmp_path / f"y-{backend}.npy"
        proc = run(
            files["model"],
            f"--weights={tmp_path / 'bn.safetensors'}",
            f"--input=@{files['x']}",
            f"--output=@{y}",
            f"--backend={backend}",
            "--strict-weights",
        )
        assert proc.returncode == 0, proc.stderr
        assert "not used" not in proc.stderr
        with torch.no_grad():
            expected = bn(torch.from_numpy(np.load(files["x"]))).numpy()
        np.testing.assert_allclose(np.load(y), expected, rtol=1e-5, atol=1e-5)
    state["bn.extra"] = torch.randn(2, generator=gen)
    save_torch(state, str(tmp_path / "bn.safetensors"))
    proc = run(
        files["model"],
        f"--weights={tmp_path / 'bn.safetensors'}",
        f"--input=@{files['x']}",
        "--strict-weights",
    )
    expect_error(proc, "1 tensor(s)", "'bn.extra'", "--strict-weights rejects them")


def test_torch_checkpoint_is_refused_with_the_convert_command(files: dict[str, Path], tmp_path: Path) -> None:
    """A torch.save'd state_dict (zip, or the legacy pickle) given as --weights: one line naming the converter."""
    import torch

    state = {"conv.weight": torch.randn(4, 3, 3, 3), "conv.bias": torch.randn(4)}
    for name, zipfile in (("w.pth", True), ("w.pt", False)):
        torch.save(state, tmp_path / name, _use_new_zipfile_serialization=zipfile)
        for backend in ("reference", "cpu"):
            proc = run(
                files["model"],
                f"--weights={tmp_path / name}",
                f"--input=@{files['x']}",
                f"--backend={backend}",
            )
            expect_error(
                proc,
                f"{tmp_path / name}: a PyTorch checkpoint (torch.save), not safetensors; convert it with: "
                f"python -m gpuopt.weights convert {tmp_path / name} OUT.safetensors",
            )
            assert len(proc.stderr.splitlines()) == 1, proc.stderr


def test_safetensors_header_like_a_pickle_mark_loads(files: dict[str, Path], tmp_path: Path) -> None:
    """A safetensors header of 896 bytes (0x380) begins its length with
    0x80 0x03, the mark of a protocol-3 pickle: it is still safetensors (its
    JSON header follows), and gives the same output as the original file."""
    data = files["weights"].read_bytes()
    length = int.from_bytes(data[:8], "little")
    assert length < 896
    header = data[8 : 8 + length].rstrip(b" ") + b" " * (896 - len(data[8 : 8 + length].rstrip(b" ")))
    padded = tmp_path / "padded.safetensors"
    padded.write_bytes((896).to_bytes(8, "little") + header + data[8 + length :])
    outputs = []
    for weights in (files["weights"], padded):
        y = tmp_path / f"y-{weights.stem}.npy"
        proc = run(files["model"], f"--weights={weights}", f"--input=@{files['x']}", f"--output=@{y}")
        assert proc.returncode == 0, proc.stderr
        outputs.append(np.load(y))
    assert np.array_equal(outputs[0], outputs[1])


@pytest.mark.parametrize("backend", ["reference", "cpu"])
def test_diagnostic_is_not_followed_by_the_function(files: dict[str, Path], backend: str) -> None:
    """A wrong input shape: the located message (with its source line and caret), not the function in generic form."""
    np.save(files["x"], np.ones((1, 3, 8, 9), dtype=np.float32))
    proc = run(
        files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}", f"--backend={backend}"
    )
    expect_error(proc, f"{files['model']}:1:1: error: ", "input 0 has shape [1, 3, 8, 9]")
    lines = proc.stderr.splitlines()
    assert len(lines) <= 3, proc.stderr  # message, the source line, the caret
    assert "see current operation" not in proc.stderr
    assert "seg.conv2d" not in proc.stderr


@pytest.mark.parametrize("backend", ["reference", "cpu"])
def test_one_run_reports_the_first_call(files: dict[str, Path], backend: str) -> None:
    args = [files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}", f"--backend={backend}"]
    proc = run(*args, "--runs=1")
    assert proc.returncode == 0, proc.stderr
    assert "first call (includes warm-up)" in proc.stdout and "median" not in proc.stdout, proc.stdout
    proc = run(*args, "--runs=3")
    assert proc.returncode == 0, proc.stderr
    assert "median of 3" in proc.stdout and "first call" not in proc.stdout, proc.stdout


def test_cpu_backend_wrong_input_shape(files: dict[str, Path]) -> None:
    np.save(files["x"], np.ones((1, 3, 8, 9), dtype=np.float32))
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}", "--backend=cpu")
    expect_error(proc, "input 0 has shape [1, 3, 8, 9]", "tensor<1x3x8x8xf32>")


def test_cpu_backend_missing_parameter(files: dict[str, Path], rng: np.random.Generator) -> None:
    save_file({"conv.weight": rng.standard_normal((4, 3, 3, 3)).astype(np.float32)}, str(files["weights"]))
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}", "--backend=cpu")
    expect_error(proc, f"{files['model']}:1:", "parameter 'conv.bias' is not in the weights file")


def test_cpu_backend_non_f32_weights(files: dict[str, Path], rng: np.random.Generator) -> None:
    save_file(
        {
            "conv.weight": rng.standard_normal((4, 3, 3, 3)).astype(np.float16),
            "conv.bias": rng.standard_normal(4).astype(np.float32),
        },
        str(files["weights"]),
    )
    proc = run(files["model"], f"--weights={files['weights']}", f"--input=@{files['x']}", "--backend=cpu")
    expect_error(proc, "parameter 'conv.weight' is F16; the CPU backend takes F32")
