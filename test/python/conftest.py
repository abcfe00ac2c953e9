"""Shared fixtures of gpuopt's Python tests, and the slow tier.

A test marked ``@pytest.mark.slow`` is deselected unless GPUOPT_SLOW_TESTS=1
(``make check`` runs without it; ``make check-slow`` runs the slow tier,
docs/Testing.md).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: minutes on 2 cores; deselected unless GPUOPT_SLOW_TESTS=1 (make check-slow)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("GPUOPT_SLOW_TESTS") == "1":
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


# A one-conv graph whose parameters and input the `files` fixture writes.
CONV_GRAPH = """\
func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = seg.param "conv.weight" : tensor<4x3x3x3xf32>
  %b = seg.param "conv.bias" : tensor<4xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1
       : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}
"""


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator: random (never zero) test data, reproducible runs."""
    return np.random.default_rng(1234)


@pytest.fixture
def files(tmp_path: Path, rng: np.random.Generator) -> dict[str, Path]:
    """CONV_GRAPH, its weights and an input, valid; each test breaks or reuses one of them."""
    model = tmp_path / "model.mlir"
    model.write_text(CONV_GRAPH)
    weights = tmp_path / "w.safetensors"
    save_file(
        {
            "conv.weight": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
            "conv.bias": rng.standard_normal(4).astype(np.float32),
        },
        str(weights),
    )
    x = tmp_path / "x.npy"
    np.save(x, rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
    return {"model": model, "weights": weights, "x": x, "dir": tmp_path}


def rel_l2(actual: np.ndarray, expected: np.ndarray) -> float:
    """Relative L2 error ||a - e|| / ||e||."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))
