"""Op counts of a model before and after gpuopt's passes.

    python -m gpuopt.optreport [SPEC ...] [--models unet,rolling_unet_s,...] [--size 256]
                               [--input-shape 1,3,H,W ...] [--kwargs JSON] [--path DIR] [--traceback]

Each SPEC is any SPEC of ``python -m gpuopt.export`` (``zoo:NAME``,
``path/to/file.py:NAME``, ``path/to/pkg:NAME``, ``pkg.module:NAME``);
``--models`` names zoo models (default, with no SPEC: all of them). Each model
is exported on a random input of ``--input-shape`` (default 1,3,SIZE,SIZE),
`gpuopt-opt` runs each pipeline (reporting the passes' statistics as
remarks), and one table per model gives the count of every seg op in the
exported graph and after each pipeline.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpuopt import models
from gpuopt.capture import CaptureError
from gpuopt.export import (
    ExportError,
    add_spec_arguments,
    capture_spec,
    parse_kwargs,
    parse_shape,
    print_error,
)
from gpuopt.tools import tool

PROG = "gpuopt.optreport"

PIPELINES = {
    "--fuse-roll": ["--fuse-roll=report=true"],
    "--roll-to-deform-conv": ["--roll-to-deform-conv"],
    "--gpuopt-optimize": ["--gpuopt-optimize=report=true"],
}


def op_counts(mlir: str) -> collections.Counter:
    """Counts of seg ops (results of `%x = seg.op` lines)."""
    return collections.Counter(re.findall(r"=\s+seg\.(\w+)", mlir))


def report(
    spec: str,
    size: int = 256,
    input_shapes: Sequence[tuple[int, ...]] | None = None,
    kwargs: dict[str, Any] | None = None,
    search_path: Sequence[str | Path] = (),
) -> str:
    """The op-count table of SPEC (a bare zoo name means ``zoo:NAME``).

    Raises ExportError (or CaptureError) for a SPEC the exporter refuses, and
    RuntimeError when a pipeline fails.
    """
    if ":" not in spec and spec in models.names():
        spec = f"zoo:{spec}"
    shapes = list(input_shapes or [(1, 3, size, size)])
    _, captured = capture_spec(spec, shapes, kwargs, search_path)
    graph = captured.mlir
    columns = {"exported": op_counts(graph)}
    remarks = []
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "m.mlir"
        src.write_text(graph)
        for label, args in PIPELINES.items():
            proc = subprocess.run(
                [str(tool("gpuopt-opt")), str(src), *args], capture_output=True, text=True, check=False
            )
            if proc.returncode != 0:
                raise RuntimeError(f"{label} failed on {spec}:\n{proc.stderr}")
            columns[label] = op_counts(proc.stdout)
            remarks += [f"  {label}: {m}" for m in re.findall(r"remark: (.*)", proc.stderr)]
    ops = sorted(set().union(*columns.values()) - {"param"})
    width = max([len("total"), *(len(op) for op in ops)])
    what = spec.removeprefix("zoo:")
    lines = [f"{what} at {' '.join('x'.join(map(str, s)) for s in shapes)} (seg ops; parameters not counted)"]
    lines.append(f"  {'op':<{width}}" + "".join(f"{c:>24}" for c in columns))
    for op in ops:
        lines.append(f"  {op:<{width}}" + "".join(f"{col.get(op, 0):>24}" for col in columns.values()))
    total = {c: sum(v for k, v in col.items() if k != "param") for c, col in columns.items()}
    lines.append(f"  {'total':<{width}}" + "".join(f"{total[c]:>24}" for c in columns))
    return "\n".join(lines + remarks)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuopt.optreport", description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", metavar="SPEC", help="a SPEC of gpuopt.export")
    parser.add_argument("--models", help="comma-separated zoo models (default without SPEC: all)")
    parser.add_argument("--size", type=int, default=256, help="input side of the default input shape")
    parser.add_argument(
        "--input-shape",
        action="append",
        help="comma-separated shape of the (next) input (default 1,3,SIZE,SIZE)",
    )
    add_spec_arguments(parser)
    args = parser.parse_args(argv)
    specs = list(args.specs)
    if args.models or not specs:
        # A name with a colon is a SPEC already (--models net.py:Net works too).
        names = (args.models or ",".join(models.names())).split(",")
        specs += [name if ":" in name else f"zoo:{name}" for name in names]
    try:
        kwargs = parse_kwargs(args.kwargs)
    except ExportError as e:  # unparsable arguments: exit status 2, as gpuopt.export
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    try:
        shapes = [parse_shape(s) for s in args.input_shape] if args.input_shape else None
        if args.size < 1:
            raise ExportError("--size must be positive")
    except ExportError as e:
        return print_error(PROG, e, False)
    for spec in specs:
        try:
            text = report(spec, args.size, shapes, kwargs, args.path)
        except (ExportError, CaptureError, RuntimeError, OSError) as e:
            return print_error(PROG, e, args.traceback)
        print(text)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
