"""Export a PyTorch model to a `seg` graph and a safetensors weights file.

Command line::

    python -m gpuopt.export SPEC -o OUT.mlir --weights OUT.safetensors \\
        --input-shape 1,3,256,256 [--kwargs JSON] [--seed N] [--reference-dir DIR] \\
        [--path DIR] [--traceback]

SPEC is ``zoo:NAME`` (see ``gpuopt.models.names()``), ``path/to/file.py:NAME``,
``path/to/pkg:NAME`` or ``path/to/pkg/module.py:NAME`` (a package, imported
as one so that its relative imports work) or ``pkg.module:NAME`` (imported
from sys.path, ``--path DIR`` first), where NAME is an ``nn.Module`` class
(constructed with ``--kwargs``) or a function returning a module. The model
is put in eval mode; its parameters and buffers are written under their
``state_dict`` names. A failure in the model's code is one line naming the
file and line (``--traceback`` adds the traceback).

Python::

    import gpuopt
    gpuopt.export(module, (x,), "model.mlir", "model.safetensors")
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import math
import os
import re
import resource
import sys
import sysconfig
import time
import traceback
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from gpuopt._atomic import OutputPathError, atomic_output, check_outputs
from gpuopt.capture import Captured, CaptureError, capture

#: The name of the command in its messages.
PROG = "gpuopt.export"
#: Largest example input (elements) --input-shape may ask for: 16 GiB of f32.
MAX_INPUT_ELEMENTS = 1 << 32


class ExportError(Exception):
    """Bad SPEC, kwargs or input shape, or a failure in the model's code:
    reported as one line, without a traceback."""


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
    source = parse_spec(spec).source_file
    if source is not None:
        inputs["the SPEC file"] = source
    check_outputs({"-o": output, "--weights": weights}, inputs)
    if reference_dir is not None:
        for label, path in (("-o", output), ("--weights", weights)):
            p = Path(path)
            if _REFERENCE_FILE.fullmatch(p.name) and Path(reference_dir).resolve() == p.resolve().parent:
                raise OutputPathError(f"{label} {path} is a file --reference-dir {reference_dir} writes")


# ---------------------------------------------------------------------------
# SPEC: the module to export.
# ---------------------------------------------------------------------------

SPEC_FORMS = "zoo:NAME, path/to/file.py:NAME, path/to/pkg:NAME or pkg.module:NAME"

# A failure in the user's code is reported at the deepest frame outside these
# directories; frames in installed packages are the second choice (for a
# SPEC naming an installed package).
_LIBRARY_DIRS = tuple(
    {str(Path(torch.__file__).resolve().parent) + os.sep, str(Path(__file__).resolve().parent) + os.sep}
    | {str(Path(sysconfig.get_paths()[k]).resolve()) + os.sep for k in ("stdlib", "platstdlib")}
)
_SITE_DIRS = tuple({str(Path(sysconfig.get_paths()[k]).resolve()) + os.sep for k in ("purelib", "platlib")})

# Top-level packages imported for a SPEC from the user's directories. They are
# dropped from sys.modules before the next SPEC loads, so that a package of the
# same name elsewhere (another checkout, another test's directory) is its own.
_USER_PACKAGES: set[str] = set()


@dataclass(frozen=True)
class Spec:
    """A parsed SPEC. ``kind`` is ``zoo``; ``file`` (a module file outside any
    package, at ``path``); ``package`` (``module``, the dotted name of a
    package or of a module in one, imported with the parent of the outermost
    package directory ``root`` on sys.path); or ``module`` (a dotted name
    found on sys.path)."""

    text: str
    kind: str
    name: str
    module: str = ""
    path: Path | None = None
    root: Path | None = None

    @property
    def source_file(self) -> Path | None:
        """The file SPEC names, when it names one (None for zoo and dotted SPECs)."""
        if self.path is None:
            return None
        return self.path / "__init__.py" if self.path.is_dir() else self.path


def _display(filename: str) -> str:
    """``filename`` relative to the working directory when inside it."""
    with contextlib.suppress(ValueError, OSError):
        return str(Path(filename).resolve().relative_to(Path.cwd().resolve()))
    return filename


def user_location(exc: BaseException) -> str:
    """``file:line`` of the deepest frame of ``exc`` in the user's code, or ""."""
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return f"{_display(exc.filename)}:{exc.lineno}"
    frames = [
        (f.filename, f.lineno, os.path.realpath(f.filename))
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith("<")  # <frozen importlib._bootstrap>, <string>
    ]
    for excluded in (_LIBRARY_DIRS + _SITE_DIRS, _LIBRARY_DIRS):
        mine = [(f, n) for f, n, real in frames if not real.startswith(excluded)]
        if mine:
            return f"{_display(mine[-1][0])}:{mine[-1][1]}"
    return ""


def describe_user_error(exc: BaseException) -> str:
    """``Type: first line of the message (file:line)`` for an exception of the user's code."""
    text = exc.msg if isinstance(exc, SyntaxError) and exc.msg else str(exc)
    lines = text.strip().splitlines()
    what = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    where = user_location(exc)
    return f"{what} ({where})" if where else what


def _is_dotted_name(text: str) -> bool:
    return all(part.isidentifier() for part in text.split("."))


def parse_spec(spec: str) -> Spec:
    """Classifies SPEC without importing anything; ExportError if malformed."""
    if spec.startswith("zoo:"):
        return Spec(spec, "zoo", spec[4:])
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name:
        raise ExportError(f"SPEC '{spec}' is none of {SPEC_FORMS}")
    if not name.isidentifier():
        raise ExportError(f"SPEC '{spec}': '{name}' is not a Python name")
    if "/" not in target and os.sep not in target and not target.endswith(".py"):
        if not _is_dotted_name(target):
            raise ExportError(
                f"SPEC '{spec}': '{target}' is neither a path (write ./{target} for one) "
                "nor a dotted module name"
            )
        return Spec(spec, "module", name, module=target)
    path = Path(target)
    if path.is_dir():
        if not (path / "__init__.py").is_file():
            raise ExportError(f"SPEC '{spec}': {target} is a directory without __init__.py, not a package")
        package = path
    elif path.is_file():
        package = path.parent
        if not (package / "__init__.py").is_file():
            return Spec(spec, "file", name, path=path)
    elif path.exists():
        raise ExportError(f"SPEC '{spec}': {target} is neither a file nor a directory")
    else:
        raise ExportError(f"SPEC '{spec}': no such file {target}")
    # A package or a module in one: imported by its dotted name from above the
    # outermost package directory, so that its relative imports (and absolute
    # ones of its own package) resolve as when its project runs it.
    root = package.resolve()
    while root.parent != root and (root.parent / "__init__.py").is_file():
        root = root.parent
    parts = list(package.resolve().relative_to(root.parent).parts)
    if path.is_file() and path.name != "__init__.py":
        parts.append(path.stem)
    for part in parts:
        if not part.isidentifier():
            raise ExportError(
                f"SPEC '{spec}': '{part}' in {target} is not a Python name; it cannot be imported"
            )
    return Spec(spec, "package", name, module=".".join(parts), path=path, root=root)


def _forget_user_packages() -> None:
    for top in _USER_PACKAGES:
        for key in [k for k in sys.modules if k == top or k.startswith(top + ".")]:
            del sys.modules[key]
    _USER_PACKAGES.clear()


def _is_user_file(path: str | None, dirs: Sequence[str]) -> bool:
    """Whether ``path`` is in one of ``dirs`` and not in an installed library."""
    if not path:
        return False
    real = os.path.realpath(path)
    return real.startswith(tuple(d + os.sep for d in dirs)) and not real.startswith(
        _LIBRARY_DIRS + _SITE_DIRS
    )


def _import_user_module(spec: Spec, search_path: Sequence[str | Path]) -> types.ModuleType:
    """Imports the module SPEC names. Raises ExportError; one caused by the
    user's code has the user's exception as ``__cause__``."""
    for d in search_path:
        if not Path(d).is_dir():
            raise ExportError(f"--path {d}: not a directory")
    extra = [os.path.realpath(d) for d in search_path]
    _forget_user_packages()
    saved_path, saved_modules = list(sys.path), set(sys.modules)
    homes = list(extra)
    try:
        if spec.kind == "file":
            assert spec.path is not None
            mod_spec = importlib.util.spec_from_file_location(
                f"gpuopt_user_model_{spec.path.stem}", spec.path
            )
            if mod_spec is None or mod_spec.loader is None:
                raise ExportError(f"SPEC '{spec.text}': cannot import {spec.path}")
            user = importlib.util.module_from_spec(mod_spec)
            homes.append(str(spec.path.resolve().parent))
            sys.path[:0] = homes
            mod_spec.loader.exec_module(user)
            return user
        top = spec.module.split(".")[0]
        if spec.kind == "package":
            assert spec.root is not None
            homes.append(str(spec.root.parent))
            loaded = sys.modules.get(top)
            if loaded is not None and os.path.realpath(getattr(loaded, "__file__", "") or "") != str(
                spec.root / "__init__.py"
            ):
                raise ExportError(
                    f"SPEC '{spec.text}': package '{top}' ({spec.root}) has the name of a module already "
                    f"imported from {getattr(loaded, '__file__', None) or 'the interpreter'}; rename the package"
                )
        sys.path[:0] = homes
        importlib.invalidate_caches()
        try:
            return importlib.import_module(spec.module)
        except ModuleNotFoundError as e:
            missing = e.name or ""
            if missing and (spec.module + ".").startswith(missing + ".") and not user_location(e):
                where = f" (nor in --path {' '.join(map(str, search_path))})" if extra else ""
                raise ExportError(
                    f"SPEC '{spec.text}': no module named '{missing}' on sys.path{where}; "
                    "name the directory that holds it with --path DIR"
                ) from e
            raise
    except ExportError:
        raise
    except (Exception, SystemExit) as e:  # raised by the user's code while it loaded
        raise ExportError(f"SPEC '{spec.text}': {describe_user_error(e)}") from e
    finally:
        sys.path[:] = saved_path
        # What was imported from the user's directories (also by a load that
        # failed half-way) is forgotten before the next SPEC loads.
        for key in set(sys.modules) - saved_modules:
            if _is_user_file(getattr(sys.modules[key], "__file__", None), homes):
                _USER_PACKAGES.add(key.split(".")[0])


def load_spec(spec: str, kwargs: dict[str, Any], search_path: Sequence[str | Path] = ()) -> nn.Module:
    """Builds the module named by SPEC (one of :data:`SPEC_FORMS`) with ``kwargs``.

    The directories of ``search_path`` (``--path``) come first on sys.path
    while the module loads. Every failure, one in the user's code included, is
    an ExportError with a one-line message naming the file and line; the
    user's exception is its ``__cause__``.
    """
    parsed = parse_spec(spec)
    if parsed.kind == "zoo":
        from gpuopt import models

        if parsed.name not in models.names():
            raise ExportError(f"unknown zoo model '{parsed.name}'; available: {', '.join(models.names())}")
        try:
            return models.build(parsed.name, **kwargs)
        except Exception as e:
            raise ExportError(f"constructing {spec}: {describe_user_error(e)}") from e
    user = _import_user_module(parsed, search_path)
    if getattr(user, "__file__", None):
        where = _display(user.__file__)
    else:  # a namespace package (directories without __init__.py)
        where = (
            f"namespace package {parsed.module} ({', '.join(map(_display, getattr(user, '__path__', [])))})"
        )
    if not hasattr(user, parsed.name):
        raise ExportError(f"SPEC '{spec}': {where} defines no '{parsed.name}'")
    factory = getattr(user, parsed.name)
    if not callable(factory):
        raise ExportError(
            f"SPEC '{spec}': '{parsed.name}' in {where} is a {type(factory).__name__}, "
            "not an nn.Module class or a function returning one"
        )
    try:
        model = factory(**kwargs)
    except (Exception, SystemExit) as e:
        raise ExportError(f"constructing {spec}: {describe_user_error(e)}") from e
    if not isinstance(model, nn.Module):
        raise ExportError(
            f"SPEC '{spec}': {parsed.name}(**kwargs) returned {type(model).__name__}, not an nn.Module"
        )
    return model


def add_spec_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that go with a SPEC: --kwargs, --path and --traceback."""
    parser.add_argument("--kwargs", default="{}", help="JSON object of constructor keyword arguments")
    parser.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory put first on sys.path while SPEC loads (repeatable)",
    )
    parser.add_argument(
        "--traceback", action="store_true", help="print the traceback of a failure in the model's code"
    )


def parse_kwargs(text: str) -> dict[str, Any]:
    """--kwargs: a JSON object (ExportError otherwise)."""
    try:
        kwargs = json.loads(text)
    except json.JSONDecodeError as e:
        raise ExportError(f"--kwargs is not valid JSON: {e}") from None
    if not isinstance(kwargs, dict):
        raise ExportError("--kwargs must be a JSON object")
    return kwargs


@contextlib.contextmanager
def running_model(spec: str, shapes: Sequence[tuple[int, ...]]) -> Iterator[None]:
    """Turns an exception of the model's ``forward`` into a located ExportError."""
    try:
        yield
    except (ExportError, CaptureError, OutputPathError, OSError):
        raise
    except Exception as e:
        raise ExportError(
            f"running {spec} on input shape(s) {list(shapes)} failed: {describe_user_error(e)}"
        ) from e


def capture_spec(
    spec: str,
    shapes: Sequence[tuple[int, ...]],
    kwargs: dict[str, Any] | None = None,
    search_path: Sequence[str | Path] = (),
    seed: int = 0,
) -> tuple[nn.Module, Captured]:
    """Builds SPEC and captures it on random inputs of ``shapes`` (the reports' front end)."""
    torch.manual_seed(seed)
    model = load_spec(spec, kwargs or {}, search_path).eval()
    gen = torch.Generator().manual_seed(seed)
    inputs = [torch.randn(*s, generator=gen) for s in shapes]
    with running_model(spec, shapes):
        return model, capture(model, inputs)


def print_error(prog: str, error: BaseException, show_traceback: bool) -> int:
    """Prints ``prog: error: ...`` (after the user's traceback with --traceback); returns 1."""
    if show_traceback:
        cause = error.__cause__ or error
        traceback.print_exception(type(cause), cause, cause.__traceback__)
    print(f"{prog}: error: {error}", file=sys.stderr)
    return 1


def parse_shape(text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(d) for d in text.split(","))
    except ValueError:
        raise ExportError(f"--input-shape '{text}': expected comma-separated integers") from None
    if not shape or any(d < 1 for d in shape):
        raise ExportError(f"--input-shape '{text}': every dimension must be positive")
    # (PyTorch allocates the example input: a shape past int64 or past
    # MAX_INPUT_ELEMENTS fails inside it, not as a message.)
    if math.prod(shape) > MAX_INPUT_ELEMENTS:
        raise ExportError(
            f"--input-shape '{text}': {math.prod(shape)} elements, more than the "
            f"{MAX_INPUT_ELEMENTS} an example input may have"
        )
    return shape


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuopt.export", description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", help=SPEC_FORMS)
    parser.add_argument("-o", "--output", required=True, help="the seg graph (.mlir) to write")
    parser.add_argument("--weights", required=True, help="the safetensors file to write")
    parser.add_argument(
        "--input-shape",
        required=True,
        action="append",
        help="comma-separated shape of the (next) input, e.g. 1,3,256,256",
    )
    add_spec_arguments(parser)
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
        kwargs = parse_kwargs(args.kwargs)
    except ExportError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2

    start = time.perf_counter()
    try:
        check_cli_paths(args.spec, args.output, args.weights, args.reference_dir)
        shapes = [parse_shape(s) for s in args.input_shape]
        torch.manual_seed(args.seed)
        model = load_spec(args.spec, kwargs, args.path).eval()
        log(f"built {args.spec} ({sum(p.numel() for p in model.parameters()):,} parameters)")
        gen = torch.Generator().manual_seed(args.seed)
        inputs = [torch.randn(*s, generator=gen) for s in shapes]
        header = (
            f"// Exported by gpuopt.export from {args.spec} "
            f"with input shape(s) {' '.join('x'.join(map(str, s)) for s in shapes)}."
        )
        with running_model(args.spec, shapes):
            captured = export(
                model, inputs, args.output, args.weights, progress=not args.quiet, header=header
            )
    # OSError: an output could not be written (the old files are left as they were).
    except (ExportError, CaptureError, OutputPathError, OSError) as e:
        return print_error(PROG, e, args.traceback)

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
            print(f"{PROG}: error: --reference-dir: {e}", file=sys.stderr)
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
