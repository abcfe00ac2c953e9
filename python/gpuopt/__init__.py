"""gpuopt: a graph compiler for segmentation networks.

The Python side holds what is pure Python over torch: helpers to drive the
compiled tools (``gpuopt.tools``) and, in later milestones, the exporter,
the model zoo and the benchmark front end.
"""

__version__ = "0.1.0"

# `gpuopt.export(module, inputs, ...)` calls the exporter; `gpuopt.export` is
# also the module behind `python -m gpuopt.export` (it is callable).
from gpuopt import capture, export  # noqa: E402,F401
