"""Random weights *and* statistics for tests and benchmarks.

A freshly constructed model is a weak test of a compiler: BatchNorm starts
with running_mean 0 and running_var 1, LayerNorm and BatchNorm with unit
scales and zero shifts, and the zoo's token-mixing layers with zero biases,
so a wrong BatchNorm fold, a dropped bias or a bias added to the wrong
channel computes the same numbers. :func:`randomize` perturbs every float
parameter and buffer so that no op is trivially an identity. Every test and
benchmark that builds a model calls it before export (docs/Testing.md).

Pure torch: benchmarks/gpu/bench.py imports it on a GPU machine that has no
gpuopt build.
"""

from __future__ import annotations

import torch


def randomize(model: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Perturbs every float parameter and buffer of ``model`` in place
    (seeded by ``seed``) and returns it: running variances become uniform in
    [0.5, 1.5) (positive), running means and biases get N(0, 0.1²) added,
    every other float tensor (weights, norm scales) is multiplied by
    1 + N(0, 0.2²). Integer buffers (num_batches_tracked) are left alone."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if not t.is_floating_point():
                continue
            if name.endswith("running_var"):
                t.copy_(torch.rand(t.shape, generator=gen) + 0.5)
            elif name.endswith(("running_mean", "bias")):
                t.add_(0.1 * torch.randn(t.shape, generator=gen))
            else:
                t.mul_(1.0 + 0.2 * torch.randn(t.shape, generator=gen))
    return model
