"""The limits of gpuopt-run's readers, and each message they give.

Complements test_gpuopt_run_errors.py (which checks that bad input fails
cleanly) by pinning the wording of every limit and format error: the
safetensors header size, tensor count and rank limits (defaults and the
--max-* flags), the .npy dtype, layout, version and size checks, weights
missing from or extra to the graph (--strict-weights), and weight shapes.
"""

from __future__ import annotations

import io
import json
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from gpuopt.tools import tool

GRAPH = """\
func.func @forward(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %w = seg.param "conv.weight" : tensor<3x2x1x1xf32>
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1
       : tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32> -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}
"""


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.mlir"
    path.write_text(GRAPH)
    return path


@pytest.fixture
def x(tmp_path: Path, rng: np.random.Generator) -> Path:
    path = tmp_path / "x.npy"
    np.save(path, rng.standard_normal((1, 2, 4, 4)).astype(np.float32))
    return path


@pytest.fixture
def weights(tmp_path: Path, rng: np.random.Generator) -> Path:
    path = tmp_path / "w.safetensors"
    save_file({"conv.weight": rng.standard_normal((3, 2, 1, 1)).astype(np.float32)}, str(path))
    return path


def run(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(tool("gpuopt-run")), *[str(a) for a in args]], capture_output=True, text=True, check=False
    )


def expect_error(proc: subprocess.CompletedProcess, message: str) -> None:
    """Exit status 1 and exactly one error line, which ends with `message`."""
    assert proc.returncode == 1, f"exit {proc.returncode}\nstderr:\n{proc.stderr}"
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, proc.stderr
    assert errors[0].endswith(message), f"{message!r} does not end:\n{errors[0]}"


def safetensors_image(entries: dict[str, dict], data: bytes = b"", pad_to: int = 0) -> bytes:
    """A safetensors file from raw header entries, the header padded with spaces to `pad_to` bytes."""
    header = json.dumps(entries, separators=(",", ":")).encode()
    header += b" " * max(0, pad_to - len(header))
    return struct.pack("<Q", len(header)) + header + data


# --- safetensors limits ------------------------------------------------------------------------------------


def test_header_size_default_limit(model: Path, x: Path, tmp_path: Path) -> None:
    w = tmp_path / "big.safetensors"
    w.write_bytes(safetensors_image({}, pad_to=(8 << 20) + 1))
    expect_error(
        run(model, f"--weights={w}", f"--input=@{x}"),
        f"{w}: header length 8388609 exceeds the limit of 8388608 bytes",
    )


def test_header_size_flag(model: Path, x: Path, weights: Path) -> None:
    size = struct.unpack("<Q", weights.read_bytes()[:8])[0]
    expect_error(
        run(model, f"--weights={weights}", f"--input=@{x}", "--max-header-bytes=16"),
        f"{weights}: header length {size} exceeds the limit of 16 bytes",
    )
    proc = run(model, f"--weights={weights}", f"--input=@{x}", f"--max-header-bytes={size}")
    assert proc.returncode == 0, proc.stderr


def test_header_length_beyond_file(model: Path, x: Path, weights: Path) -> None:
    data = weights.read_bytes()
    weights.write_bytes(struct.pack("<Q", 2**63) + data[8:])
    expect_error(
        run(model, f"--weights={weights}", f"--input=@{x}"),
        f"{weights}: header length {2**63} exceeds the file ({len(data)} bytes)",
    )


def test_tensor_count_default_limit(model: Path, x: Path, tmp_path: Path) -> None:
    empty = {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}
    w = tmp_path / "many.safetensors"
    w.write_bytes(safetensors_image({f"t{i}": empty for i in range(65537)}))
    expect_error(
        run(model, f"--weights={w}", f"--input=@{x}"),
        f"{w}: 65537 tensors exceed the limit of 65536",
    )


def test_tensor_count_flag(model: Path, x: Path, tmp_path: Path, rng: np.random.Generator) -> None:
    w = tmp_path / "two.safetensors"
    save_file(
        {
            "conv.weight": rng.standard_normal((3, 2, 1, 1)).astype(np.float32),
            "other": np.zeros(1, dtype=np.float32),
        },
        str(w),
    )
    expect_error(
        run(model, f"--weights={w}", f"--input=@{x}", "--max-tensors=1"),
        f"{w}: 2 tensors exceed the limit of 1",
    )


def test_rank_default_limit(model: Path, x: Path, tmp_path: Path) -> None:
    w = tmp_path / "rank9.safetensors"
    save_file({"deep": np.zeros((1,) * 9, dtype=np.float32)}, str(w))
    expect_error(
        run(model, f"--weights={w}", f"--input=@{x}"),
        f"{w}: tensor 'deep': rank 9 exceeds the limit of 8",
    )


def test_rank_flag(model: Path, x: Path, weights: Path) -> None:
    expect_error(
        run(model, f"--weights={weights}", f"--input=@{x}", "--max-rank=3"),
        f"{weights}: tensor 'conv.weight': rank 4 exceeds the limit of 3",
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]},
            "unsupported dtype 'F8_E4M3'; gpuopt reads F16, BF16, F32, F64, I8, I16, I32, I64, U8 and BOOL",
        ),
        (
            {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]},
            "shape entries must be non-negative integers",
        ),
        (
            {"dtype": "F32", "shape": [2**62, 4], "data_offsets": [0, 4]},
            f"shape [{2**62}, 4] is too large",
        ),
        (
            {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]},
            "data_offsets [0, 4] hold 4 bytes, but F32 [2] needs 8",
        ),
        (
            {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]},
            "data_offsets [4, 8] exceed the data section (4 bytes)",
        ),
        ({"dtype": "F32", "shape": [1]}, "missing 'data_offsets'"),
    ],
    ids=["dtype", "negative-dim", "overflow", "size", "offsets", "missing-key"],
)
def test_bad_tensor_entry(model: Path, x: Path, tmp_path: Path, entry: dict, message: str) -> None:
    w = tmp_path / "bad.safetensors"
    w.write_bytes(safetensors_image({"conv.weight": entry}, data=b"\0" * 4))
    expect_error(run(model, f"--weights={w}", f"--input=@{x}"), f"{w}: tensor 'conv.weight': {message}")


def test_unindexed_bytes(model: Path, x: Path, weights: Path) -> None:
    data = weights.read_bytes()
    weights.write_bytes(data + b"smuggled")
    expect_error(
        run(model, f"--weights={weights}", f"--input=@{x}"),
        f"{weights}: data section bytes [24, 32] belong to no tensor",
    )


# --- .npy inputs ---------------------------------------------------------------------------------------------


READS_F4 = "gpuopt reads float32 little-endian ('<f4')"


def write_npy(path: Path, array: np.ndarray, version: tuple[int, int] | None = None) -> None:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, version=version)
    path.write_bytes(buffer.getvalue())


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (np.ones((1, 2, 4, 4), dtype=">f4"), f"unsupported dtype '>f4'; {READS_F4}"),
        (np.ones((1, 2, 4, 4), dtype=np.float16), f"unsupported dtype '<f2'; {READS_F4}"),
        (np.ones((1, 2, 4, 4), dtype=np.int64), f"unsupported dtype '<i8'; {READS_F4}"),
        (
            np.zeros(2, dtype=[("a", "<f4")]),
            f"malformed .npy header: unsupported structured dtype; {READS_F4} at byte 10 of the header",
        ),
        (
            np.asfortranarray(np.ones((4, 4, 2, 1), dtype=np.float32)),
            "Fortran-order arrays are not supported; gpuopt reads C-order arrays",
        ),
    ],
    ids=["big-endian", "f16", "i64", "structured", "fortran"],
)
def test_npy_rejected(model: Path, weights: Path, tmp_path: Path, array: np.ndarray, message: str) -> None:
    x = tmp_path / "bad.npy"
    write_npy(x, array)
    expect_error(run(model, f"--weights={weights}", f"--input=@{x}"), f"{x}: {message}")


def test_npy_truncated_data(model: Path, weights: Path, x: Path) -> None:
    data = x.read_bytes()
    x.write_bytes(data[:-5])
    expect_error(
        run(model, f"--weights={weights}", f"--input=@{x}"),
        f"{x}: truncated: expected 128 bytes of data, found 123",
    )


def test_npy_trailing_data(model: Path, weights: Path, x: Path) -> None:
    x.write_bytes(x.read_bytes() + b"\0" * 4)
    expect_error(
        run(model, f"--weights={weights}", f"--input=@{x}"),
        f"{x}: expected 128 bytes of data, found 132 (trailing bytes after the array)",
    )


def test_npy_truncated_header(model: Path, weights: Path, x: Path) -> None:
    x.write_bytes(x.read_bytes()[:40])
    expect_error(
        run(model, f"--weights={weights}", f"--input=@{x}"),
        f"{x}: truncated: header length 118 exceeds the 30 bytes after the preamble",
    )


def test_npy_not_npy(model: Path, weights: Path, x: Path) -> None:
    x.write_bytes(b"PK\x03\x04 a zip (np.savez) is not an .npy file")
    expect_error(
        run(model, f"--weights={weights}", f"--input=@{x}"), f"{x}: not a .npy file (no \\x93NUMPY magic)"
    )


def test_npy_unsupported_version(model: Path, weights: Path, x: Path) -> None:
    data = bytearray(x.read_bytes())
    data[6] = 4
    x.write_bytes(bytes(data))
    expect_error(run(model, f"--weights={weights}", f"--input=@{x}"), f"{x}: unsupported .npy version 4.0")


@pytest.mark.parametrize("version", [(2, 0), (3, 0)])
def test_npy_versions_2_and_3_load(
    model: Path, weights: Path, tmp_path: Path, rng: np.random.Generator, version: tuple[int, int]
) -> None:
    x = tmp_path / "v.npy"
    write_npy(x, rng.standard_normal((1, 2, 4, 4)).astype(np.float32), version=version)
    proc = run(model, f"--weights={weights}", f"--input=@{x}")
    assert proc.returncode == 0, proc.stderr


# --- weights versus the graph --------------------------------------------------------------------------------


def test_missing_weight(model: Path, x: Path, tmp_path: Path) -> None:
    w = tmp_path / "none.safetensors"
    save_file({"other.weight": np.zeros(1, dtype=np.float32)}, str(w))
    proc = run(model, f"--weights={w}", f"--input=@{x}")
    assert proc.returncode == 1, proc.stderr
    assert f"{model}:2:" in proc.stderr
    assert "parameter 'conv.weight' is not in the weights file" in proc.stderr


@pytest.fixture
def extra_weights(tmp_path: Path, rng: np.random.Generator) -> Path:
    path = tmp_path / "extra.safetensors"
    save_file(
        {
            "conv.weight": rng.standard_normal((3, 2, 1, 1)).astype(np.float32),
            **{f"head.{i}.weight": np.zeros(2, dtype=np.float32) for i in range(4)},
        },
        str(path),
    )
    return path


def test_extra_weights_warn_by_default(model: Path, x: Path, extra_weights: Path) -> None:
    proc = run(model, f"--weights={extra_weights}", f"--input=@{x}")
    assert proc.returncode == 0, proc.stderr
    assert (
        f"gpuopt-run: warning: 4 tensor(s) in {extra_weights} are not used by the graph "
        "('head.0.weight', 'head.1.weight', 'head.2.weight', ...)"
    ) in proc.stderr


def test_extra_weights_strict(model: Path, x: Path, extra_weights: Path, tmp_path: Path) -> None:
    y = tmp_path / "y.npy"
    proc = run(model, f"--weights={extra_weights}", f"--input=@{x}", f"--output=@{y}", "--strict-weights")
    expect_error(
        proc,
        f"4 tensor(s) in {extra_weights} are not used by the graph "
        "('head.0.weight', 'head.1.weight', 'head.2.weight', ...); --strict-weights rejects them",
    )
    assert not y.exists()


def test_strict_weights_accepts_exact_file(model: Path, x: Path, weights: Path) -> None:
    proc = run(model, f"--weights={weights}", f"--input=@{x}", "--strict-weights")
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr


@pytest.mark.parametrize(
    ("shape", "found"),
    [((3, 2, 3, 3), "[3, 2, 3, 3]"), ((3, 2), "[3, 2]"), ((), "[]")],
    ids=["extent", "rank", "scalar"],
)
def test_weight_shape_mismatch(
    model: Path, x: Path, tmp_path: Path, shape: tuple[int, ...], found: str
) -> None:
    w = tmp_path / "shape.safetensors"
    save_file({"conv.weight": np.zeros(shape, dtype=np.float32)}, str(w))
    proc = run(model, f"--weights={w}", f"--input=@{x}")
    assert proc.returncode == 1, proc.stderr
    assert f"{model}:2:" in proc.stderr
    assert found in proc.stderr
    assert "tensor<3x2x1x1xf32>" in proc.stderr
