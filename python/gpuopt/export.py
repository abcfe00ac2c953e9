"""Export a PyTorch model to a `seg` graph and a safetensors weights file.

Command line::

    python -m gpuopt.export SPEC -o OUT.mlir --weights OUT.safetensors \\
        --input-shape 1,3,256,256 [--kwargs JSON] [--seed N] [--reference-dir DIR]

SPEC is ``zoo:NAME`` (see ``gpuopt.models.names()``) or ``path/to/file.py:NAME``
where NAME is an ``nn.Module`` class (constructed with ``--kwargs``) or a
function returning a module. The model is put in eval mode; its parameters
and buffers are written under their ``state_dict`` names.

Python::

    import gpuopt
    gpuopt.export(module, (x,), "model.mlir", "model.safetensors")
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import re
import resource
import sys
import time
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from gpuopt._atomic import OutputPathError, atomic_output, check_outputs
from gpuopt.capture import Captured, CaptureError, capture


class ExportError(Exception):
    """Bad SPEC, kwargs or input shape: reported without a traceback."""


def export(
    module: nn.Module,
    example_inputs: Sequence[torch.Tensor] | torch.Tensor,
    output: str | Path | None = None,
    weights: str | Path | None = None,
    progress: bool = False,
    header: str = "",
) -> Captured:
    """Captures ``module`` (put in eval mode) and writes the graph and weights.

    Returns the capture (graph text, parameters by name, PyTorch's outputs).
    ``output``/``weights`` may be None to only capture. Both files are written
    beside their targets and renamed over them only once both are complete, so
    a failure leaves the old files as they were. Raises OutputPathError when
    ``output`` and ``weights`` are one file.
    """
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    targets = {k: v for k, v in (("output", output), ("weights", weights)) if v is not None}
    check_outputs(targets, {})
    module.eval()
    captured = capture(module, example_inputs, header=header, progress=progress)
    with contextlib.ExitStack() as stack:
        if output is not None:
            stack.enter_context(atomic_output(output)).write_text(captured.mlir)
        if weights is not None:
            from safetensors.torch import save_file

            tmp = stack.enter_context(atomic_output(weights))
            save_file({k: v.detach().contiguous() for k, v in captured.params.items()}, str(tmp))
    return captured


_REFERENCE_FILE = re.compile(r"(input|output)\d*\.npy")


def check_cli_paths(spec: str, output: str, weights: str, reference_dir: str | None) -> None:
    """Refuses an output of the command line that is an input or another output."""
    inputs = {}
    path_text, sep, _ = spec.rpartition(":")
    if sep and not spec.startswith("zoo:"):
        inputs["the SPEC file"] = path_text
    check_outputs({"-o": output, "--weights": weights}, inputs)
    if reference_dir is not None:
        for label, path in (("-o", output), ("--weights", weights)):
            p = Path(path)
            if _REFERENCE_FILE.fullmatch(p.name) and Path(reference_dir).resolve() == p.resolve().parent:
                raise OutputPathError(f"{label} {path} is a file --reference-dir {reference_dir} writes")


def load_spec(spec: str, kwargs: dict[str, Any]) -> nn.Module:
    """Builds the module named by SPEC (``zoo:NAME`` or ``file.py:NAME``)."""
    if spec.startswith("zoo:"):
        from gpuopt import models

        name = spec[4:]
        if name not in models.names():
            raise ExportError(f"unknown zoo model '{name}'; available: {', '.join(models.names())}")
        return models.build(name, **kwargs)
    path_text, sep, name = spec.rpartition(":")
    if not sep or not path_text or not name:
        raise ExportError(f"SPEC '{spec}' is neither zoo:NAME nor path/to/file.py:NAME")
    path = Path(path_text)
    if not path.is_file():
        raise ExportError(f"SPEC '{spec}': no such file {path}")
    mod_spec = importlib.util.spec_from_file_location(f"gpuopt_user_model_{path.stem}", path)
    if mod_spec is None or mod_spec.loader is None:
        raise ExportError(f"SPEC '{spec}': cannot import {path}")
    user = importlib.util.module_from_spec(mod_spec)
    sys.path.insert(0, str(path.resolve().parent))
    try:
        mod_spec.loader.exec_module(user)
    finally:
        sys.path.pop(0)
    factory = getattr(user, name, None)
    if factory is None:
        raise ExportError(f"SPEC '{spec}': {path} defines no '{name}'")
    model = factory(**kwargs)
    if not isinstance(model, nn.Module):
        raise ExportError(
            f"SPEC '{spec}': {name}(**kwargs) returned {type(model).__name__}, not an nn.Module"
        )
    return model


def parse_shape(text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(d) for d in text.split(","))
    except ValueError:
        raise ExportError(f"--input-shape '{text}': expected comma-separated integers") from None
    if not shape or any(d < 1 for d in shape):
        raise ExportError(f"--input-shape '{text}': every dimension must be positive")
    return shape


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuopt.export", description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", help="zoo:NAME or path/to/file.py:NAME")
    parser.add_argument("-o", "--output", required=True, help="the seg graph (.mlir) to write")
    parser.add_argument("--weights", required=True, help="the safetensors file to write")
    parser.add_argument(
        "--input-shape",
        required=True,
        action="append",
        help="comma-separated shape of the (next) input, e.g. 1,3,256,256",
    )
    parser.add_argument("--kwargs", default="{}", help="JSON object of constructor keyword arguments")
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the weights' initialization and of the reference input"
    )
    parser.add_argument("--reference-dir", help="write input.npy and PyTorch's output.npy here")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)

    def log(msg: str) -> None:
        if not args.quiet:
            print(f"export: {msg}", file=sys.stderr)

    try:
        kwargs = json.loads(args.kwargs)
        if not isinstance(kwargs, dict):
            raise ExportError("--kwargs must be a JSON object")
    except json.JSONDecodeError as e:
        print(f"export: error: --kwargs is not valid JSON: {e}", file=sys.stderr)
        return 2
    except ExportError as e:
        print(f"export: error: {e}", file=sys.stderr)
        return 2

    start = time.perf_counter()
    try:
        check_cli_paths(args.spec, args.output, args.weights, args.reference_dir)
        shapes = [parse_shape(s) for s in args.input_shape]
        torch.manual_seed(args.seed)
        model = load_spec(args.spec, kwargs).eval()
        log(f"built {args.spec} ({sum(p.numel() for p in model.parameters()):,} parameters)")
        gen = torch.Generator().manual_seed(args.seed)
        inputs = [torch.randn(*s, generator=gen) for s in shapes]
        header = (
            f"// Exported by gpuopt.export from {args.spec} "
            f"with input shape(s) {' '.join('x'.join(map(str, s)) for s in shapes)}."
        )
        try:
            captured = export(
                model, inputs, args.output, args.weights, progress=not args.quiet, header=header
            )
        except RuntimeError as e:  # PyTorch rejected the input (wrong shape for the model)
            raise ExportError(
                f"running {args.spec} on input shape(s) {shapes} failed: {str(e).splitlines()[0]}"
            ) from None
    # OSError: an output could not be written (the old files are left as they were).
    except (ExportError, CaptureError, OutputPathError, OSError) as e:
        print(f"export: error: {e}", file=sys.stderr)
        return 1
    except TypeError as e:
        print(f"export: error: constructing {args.spec}: {e}", file=sys.stderr)
        return 1

    counts = ", ".join(f"{n} {op}" for op, n in sorted(captured.op_counts.items()))
    log(f"captured {sum(captured.op_counts.values())} ops in {captured.seconds:.1f} s: {counts}")
    log(f"wrote {args.output} and {args.weights} ({len(captured.params)} tensors)")
    if args.reference_dir:
        ref = Path(args.reference_dir)
        arrays = {f"input{i or ''}.npy": x.numpy() for i, x in enumerate(inputs)}
        arrays |= {f"output{i or ''}.npy": y.detach().numpy() for i, y in enumerate(captured.outputs)}
        try:
            ref.mkdir(parents=True, exist_ok=True)
            for name, array in arrays.items():
                with atomic_output(ref / name) as tmp:
                    np.save(tmp, array)
        except OSError as e:
            print(f"export: error: --reference-dir: {e}", file=sys.stderr)
            return 1
        log(f"wrote PyTorch's reference input/output to {ref}")
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    log(f"done in {time.perf_counter() - start:.1f} s, peak memory {peak_mib:.0f} MiB")
    return 0


class _CallableModule(types.ModuleType):
    """Lets ``gpuopt.export(...)`` call :func:`export` while ``gpuopt.export``
    stays the module behind ``python -m gpuopt.export``."""

    def __call__(self, *args: Any, **kwargs: Any) -> Captured:
        return export(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":
    sys.exit(main())
