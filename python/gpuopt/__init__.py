"""gpuopt: a graph compiler for segmentation networks.

The Python side holds what is pure Python over torch: helpers to drive the
compiled tools (``gpuopt.tools``) and, in later milestones, the exporter,
the model zoo and the benchmark front end.
"""

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """Lazy submodules: ``gpuopt.export(module, inputs, ...)`` calls the exporter
    (the module behind ``python -m gpuopt.export`` is callable), imported on
    first use so that ``python -m gpuopt.export`` does not import it twice;
    ``gpuopt.compile(module, inputs, ...)`` compiles a module into a callable
    (docs/PythonAPI.md), and importing it registers the torch.compile
    backend "gpuopt"."""
    if name in ("export", "capture", "compile", "models", "tools"):
        import importlib

        return importlib.import_module(f"gpuopt.{name}")
    raise AttributeError(f"module 'gpuopt' has no attribute '{name}'")
