"""Writes PREFIX.x.npy, PREFIX.safetensors and PREFIX.wrong.safetensors (no
conv.bias) for gpuopt-run-cuda.mlir's model."""

import sys

import numpy as np
from safetensors.numpy import save_file

prefix = sys.argv[1]
rng = np.random.default_rng(0)
np.save(f"{prefix}.x.npy", rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
weight = rng.standard_normal((4, 3, 1, 1)).astype(np.float32)
bias = rng.standard_normal(4).astype(np.float32)
save_file({"conv.weight": weight, "conv.bias": bias}, f"{prefix}.safetensors")
save_file({"conv.weight": weight}, f"{prefix}.wrong.safetensors")
