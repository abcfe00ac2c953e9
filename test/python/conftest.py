"""Shared fixtures of gpuopt's Python tests."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator: random (never zero) test data, reproducible runs."""
    return np.random.default_rng(1234)


def rel_l2(actual: np.ndarray, expected: np.ndarray) -> float:
    """Relative L2 error ||a - e|| / ||e||."""
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    return float(np.linalg.norm(a - e) / max(np.linalg.norm(e), 1e-30))
