"""Cost report and roofline plot of a seg graph, before and after a pass pipeline.

    python -m gpuopt.costreport MODEL [--pipeline=--gpuopt-optimize] [--device rtx3080]
                                [--png roofline.png] [--json report.json] [--top 10]
                                [--size 224 | --input-shape 1,3,H,W ...] [--kwargs JSON]
                                [--path DIR] [--traceback]
    python -m gpuopt.costreport --fidelity [--models unet,...] [--device rtx3080]

MODEL is a ``.mlir`` file or any SPEC of ``python -m gpuopt.export``
(``zoo:NAME``, ``path/to/file.py:NAME``, ``path/to/pkg:NAME``,
``pkg.module:NAME``), exported on a random input of ``--input-shape``
(default 1,3,SIZE,SIZE, ``--size`` 224).
The numbers come from ``gpuopt-opt --seg-cost-report`` (the C++ analysis is the
single source of truth; this module only runs it, prints and plots). Without
``--pipeline`` the report compares PyTorch eager and gpuopt's compiled code on
the graph as given; with it, the graph as given (eager) is also compared with
the graph after the pipeline (compiled), and the PNG has one roofline panel
for each: every op that costs a kernel is a point at (FLOP/byte, attained
FLOP/s), under the device's roofs.

``--fidelity`` prints the checks of docs/CostModel.md: parameter counts of every
zoo model, FLOPs in both conventions against MODELS.md, and the predicted eager
latencies on the RTX 3080 against the seed's measurements.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuopt._atomic import OutputPathError, atomic_output, check_outputs, write_text
from gpuopt.tools import DEFAULT_DEVICES, ToolError, run_tool

PROG = "gpuopt.costreport"


class NothingToReport(RuntimeError):
    """The graph has no function (an empty file, ``module {}``)."""


class OutputError(RuntimeError):
    """--json or --png cannot be written (the OSError's message)."""


#: Plotted in place of 0 on the logarithmic axes (ops that move data only).
INTENSITY_FLOOR = 1e-3
FLOPS_FLOOR = 1e6


@dataclass(frozen=True)
class Point:
    """One op on a roofline plot."""

    index: int
    name: str
    intensity: float
    flops_per_s: float
    time_s: float
    bound: str


def report(
    mlir: str | Path,
    device: str = "rtx3080",
    pipeline: list[str] | None = None,
    devices: str | Path | None = None,
    fmt: str = "json",
    top: int = 10,
    gpu_conv: str = "model",
) -> Any:
    """Runs ``gpuopt-opt MLIR PIPELINE --seg-cost-report`` and returns the report.

    ``fmt="json"`` returns the parsed JSON document, ``"table"`` the text.
    ``gpu_conv`` is the compiled column's route of the convolutions and
    linears (``model``, or gpuopt-compile's ``generated``, ``library``,
    ``auto``; docs/CostModel.md).
    """
    with tempfile.TemporaryDirectory(prefix="gpuopt-cost-") as tmp:
        out = Path(tmp) / f"report.{fmt}"
        options = f"device={device} format={fmt} top={top} output={out} gpu-conv={gpu_conv}"
        if devices is not None:
            options += f" devices={devices}"
        run_tool(
            ["gpuopt-opt", str(mlir), *(pipeline or []), f"--seg-cost-report={options}", "-o", "/dev/null"]
        )
        # The pass reports on the module's functions: none, no report.
        if not out.exists():
            raise NothingToReport(f"{mlir}: no function to report on")
        text = out.read_text()
    return json.loads(text) if fmt == "json" else text


def roofline_points(document: dict[str, Any], mode: str, function: int = 0) -> list[Point]:
    """One point per op that costs a kernel in ``mode`` (``eager`` or ``compiled``)."""
    points = []
    for op in document["functions"][function]["ops"]:
        cost = op[mode]
        if cost["kernels"] == 0:
            continue
        points.append(
            Point(
                index=op["index"],
                name=op["name"],
                intensity=cost["flops"] / cost["bytes"] if cost["bytes"] > 0 else 0.0,
                flops_per_s=cost["flops"] / cost["time_s"] if cost["time_s"] > 0 else 0.0,
                time_s=cost["time_s"],
                bound=cost["bound"],
            )
        )
    return points


def _summary(document: dict[str, Any], mode: str) -> str:
    fn = document["functions"][0]
    s = fn[mode]
    return f"{s['kernels']} kernels, {s['latency_s'] * 1e3:.3f} ms, {s['bound']}-bound"


def plot_roofline(panels: list[tuple[str, dict[str, Any], str]], png: str | Path) -> list[list[Point]]:
    """Draws one roofline panel per ``(title, report, mode)`` into ``png``.

    Returns the points of each panel, exactly the data plotted.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"compute": "tab:blue", "memory": "tab:orange", "launch": "tab:red"}
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 5.5), squeeze=False)
    all_points = []
    for ax, (title, document, mode) in zip(axes[0], panels):
        dev = document["device"]
        precision = document["functions"][0]["precision"]
        peak = dev["peak_flops"][precision]
        bandwidth = dev["bandwidth"]
        points = roofline_points(document, mode)
        all_points.append(points)
        xs = [max(p.intensity, INTENSITY_FLOOR) for p in points]
        ys = [max(p.flops_per_s, FLOPS_FLOOR) for p in points]
        roofs = [
            (peak, bandwidth, "-", "datasheet roof"),
            (peak * dev["compute_efficiency"], bandwidth * dev["memory_efficiency"], "--", "attainable roof"),
        ]
        lo = min([INTENSITY_FLOOR, *xs]) / 2
        hi = max([2 * peak / bandwidth, *xs]) * 2
        for flops, bw, style, label in roofs:
            ax.plot([lo, flops / bw, hi], [lo * bw, flops, flops], style, color="gray", label=label)
        for bound, color in colors.items():
            for data_only in (False, True):
                sel = [
                    i for i, p in enumerate(points) if p.bound == bound and (p.intensity == 0) == data_only
                ]
                if not sel:
                    continue
                ax.scatter(
                    [xs[i] for i in sel],
                    [ys[i] for i in sel],
                    s=40 if data_only else 14,
                    color=color,
                    marker="x" if data_only else "o",
                    alpha=0.6,
                    label=f"{bound}-bound {'0-FLOP ' if data_only else ''}ops ({len(sel)})",
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(FLOPS_FLOOR / 2, peak * 3)
        ax.set_xlabel("arithmetic intensity (FLOP/byte); 0-FLOP ops in the corner")
        ax.set_ylabel(f"attained FLOP/s ({precision}, launch included)")
        ax.set_title(f"{title}\n{_summary(document, mode)}", fontsize=10)
        ax.grid(True, which="both", alpha=0.2)
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(f"{panels[0][1]['device']['name']}: one point per op", fontsize=11)
    fig.tight_layout()
    with atomic_output(png) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)
    return all_points


def comparison(before: dict[str, Any], after: dict[str, Any] | None, label: str) -> str:
    """A short before/after summary: eager as given vs compiled (after the pipeline)."""
    rows = [("PyTorch eager, as given", before, "eager"), ("gpuopt compiled, as given", before, "compiled")]
    if after is not None:
        rows.append((f"gpuopt compiled, after {label}", after, "compiled"))
    base = before["functions"][0]["eager"]["latency_s"]
    lines = [f"{'':<44}{'kernels':>9}{'MB':>10}{'latency ms':>12}{'speedup':>9}  bound"]
    for name, doc, mode in rows:
        s = doc["functions"][0][mode]
        lines.append(
            f"{name:<44}{s['kernels']:>9}{s['bytes'] / 1e6:>10.2f}{s['latency_s'] * 1e3:>12.3f}"
            f"{base / s['latency_s']:>8.1f}x  {s['bound']}"
        )
    return "\n".join(lines)


def is_mlir_file(model: str) -> bool:
    """Whether MODEL names a graph file rather than a SPEC of gpuopt.export."""
    return model.endswith(".mlir") or (":" not in model and Path(model).exists())


def export_spec(
    spec: str,
    shapes: list[tuple[int, ...]],
    path: Path,
    kwargs: dict[str, Any] | None = None,
    search_path: list[str] | tuple[str, ...] = (),
) -> int:
    """Exports SPEC (any SPEC of gpuopt.export) on inputs of ``shapes`` to ``path``.

    Returns the module's parameter count; raises ExportError or CaptureError.
    """
    from gpuopt.export import capture_spec

    model, captured = capture_spec(spec, shapes, kwargs, search_path)
    path.write_text(captured.mlir)
    return sum(p.numel() for p in model.parameters())


def export_zoo(name: str, size: int, path: Path) -> int:
    """Exports zoo model ``name`` at ``size``² to ``path``; returns its module's parameter count."""
    return export_spec(f"zoo:{name}", [(1, 3, size, size)], path)


# ---------------------------------------------------------------------------
# Fidelity: the published figures (../shared/MODELS.md) and the seed's
# measurements (RTX 3080, 224², batch 1, PyTorch eager).
# ---------------------------------------------------------------------------

#: Parameters of the published models (1 class, 3 input channels); UNeXt-Stripe's
#: is the seed's rounded figure (the zoo's model is a reconstruction).
PUBLISHED_PARAMS = {
    "unet": "31,037,633",
    "rolling_unet_s": "1,783,185",
    "rolling_unet_m": "7,098,401",
    "rolling_unet_l": "28,324,929",
    "unext": "1,471,921",
    "unext_stripe": "3.48 M",
}
#: The seed's "GFLOPs": 2 × thop MACs at 224².
SEED_GFLOPS_224 = {"unet": 83.82, "rolling_unet_s": 3.22, "unext_stripe": 1.922}
#: True GMACs at 256² (UNet also at 224²: 36.88).
TRUE_GMACS_256 = {
    "rolling_unet_s": 2.070,
    "rolling_unet_m": 8.217,
    "rolling_unet_l": 32.742,
    "unext": 0.562,
    "unet": 48.17,
}
#: thop GMACs at 256².
THOP_GMACS_256 = {"rolling_unet_s": 2.102, "rolling_unet_m": 8.282, "rolling_unet_l": 32.870, "unext": 0.573}
#: The seed's measured eager latencies (ms), RTX 3080, 224², batch 1.
SEED_MS = {"unet": 8.86, "rolling_unet_s": 32.16, "unext_stripe": 5.73}


def fidelity(names: list[str], device: str, devices: str | None) -> str:
    """The fidelity table of docs/CostModel.md."""
    from gpuopt import models

    lines = [
        f"Fidelity of the cost model (device {device} for latencies; 224² and 256², batch 1)",
        "",
        (
            f"{'model':<16}{'params module':>14}{'params graph':>14}{'published':>12}"
            f"{'2xMAC@224':>11}{'2xthop@224':>11}{'seed':>8}"
            f"{'GMAC@256':>10}{'MODELS.md':>10}{'thop@256':>10}{'MODELS.md':>10}"
        ),
    ]
    latency_rows = []
    with tempfile.TemporaryDirectory(prefix="gpuopt-fidelity-") as tmp:
        for name in names:
            if name not in models.names():
                raise SystemExit(f"unknown zoo model '{name}'")
            docs = {}
            module_params = 0
            for size in (224, 256):
                path = Path(tmp) / f"{name}_{size}.mlir"
                module_params = export_zoo(name, size, path)
                docs[size] = report(path, device=device, devices=devices)
            f224 = docs[224]["functions"][0]
            f256 = docs[256]["functions"][0]

            def ref(table: dict[str, float], fmt: str, key: str = name) -> str:
                return format(table[key], fmt) if key in table else "-"

            lines.append(
                f"{name:<16}{module_params:>14,}{f224['params']:>14,}{PUBLISHED_PARAMS.get(name, '-'):>12}"
                f"{2 * f224['macs'] / 1e9:>11.3f}{2 * f224['thop_macs'] / 1e9:>11.3f}"
                f"{ref(SEED_GFLOPS_224, '.3f'):>8}"
                f"{f256['macs'] / 1e9:>10.3f}{ref(TRUE_GMACS_256, '.3f'):>10}"
                f"{f256['thop_macs'] / 1e9:>10.3f}{ref(THOP_GMACS_256, '.3f'):>10}"
            )
            eager = f224["eager"]
            seed = SEED_MS.get(name)
            error = f"{100 * (eager['latency_s'] * 1e3 / seed - 1):+.0f}%" if seed else "-"
            latency_rows.append(
                f"{name:<16}{eager['kernels']:>9}{eager['compute_s'] * 1e3:>12.3f}"
                f"{eager['memory_s'] * 1e3:>12.3f}{eager['launch_s'] * 1e3:>12.3f}"
                f"{eager['latency_s'] * 1e3:>14.3f}{(f'{seed:.2f}' if seed else '-'):>10}{error:>8}"
                f"  {eager['bound']}"
            )
    lines += [
        "",
        f"Predicted PyTorch eager latency at 224² on {device} vs the seed's RTX 3080 measurements",
        (
            f"{'model':<16}{'kernels':>9}{'compute ms':>12}{'memory ms':>12}{'launch ms':>12}"
            f"{'predicted ms':>14}{'seed ms':>10}{'error':>8}  bound"
        ),
        *latency_rows,
    ]
    return "\n".join(lines)


def measure_cpu(names: list[str], size: int = 224, runs: int = 5, devices: str | None = None) -> str:
    """PyTorch eager on this CPU (median of ``runs`` after a warm-up) vs the ``cpu`` device model.

    The eager kernel rules are those of PyTorch on CUDA (docs/CostModel.md); on a CPU the same
    counts stand for dispatches. A shared machine is noisy: read the ratio, not the digits.
    """
    import statistics
    import time

    import torch

    from gpuopt import models

    lines = [
        (
            f"PyTorch eager on this CPU ({torch.get_num_threads()} threads) vs the 'cpu' device model, "
            f"{size}², batch 1, median of {runs}"
        ),
        f"{'model':<16}{'kernels':>9}{'predicted ms':>14}{'measured ms':>13}{'error':>8}  bound",
    ]
    with tempfile.TemporaryDirectory(prefix="gpuopt-measure-") as tmp:
        for name in names:
            path = Path(tmp) / f"{name}.mlir"
            export_zoo(name, size, path)
            eager = report(path, device="cpu", devices=devices)["functions"][0]["eager"]
            model = models.build(name).eval()
            x = torch.randn(1, 3, size, size)
            times = []
            with torch.inference_mode():
                model(x)
                for _ in range(runs):
                    start = time.perf_counter()
                    model(x)
                    times.append(time.perf_counter() - start)
            measured = statistics.median(times) * 1e3
            predicted = eager["latency_s"] * 1e3
            lines.append(
                f"{name:<16}{eager['kernels']:>9}{predicted:>14.2f}{measured:>13.2f}"
                f"{100 * (predicted / measured - 1):>+7.0f}%  {eager['bound']}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", help="a .mlir file or a SPEC of gpuopt.export")
    parser.add_argument(
        "--size", type=int, default=224, help="input side of the default input shape of a SPEC"
    )
    parser.add_argument(
        "--input-shape",
        action="append",
        help="for a SPEC: comma-separated shape of the (next) input (default 1,3,SIZE,SIZE)",
    )
    parser.add_argument(
        "--pipeline", default="", help="gpuopt-opt arguments of the 'after' graph, e.g. --gpuopt-optimize"
    )
    parser.add_argument("--device", default="rtx3080")
    parser.add_argument(
        "--gpu-conv",
        default="model",
        choices=["model", "generated", "library", "auto"],
        help="the compiled column's convolutions and linears: the generic model, or as "
        "gpuopt-compile --gpu-conv runs them (GPU devices)",
    )
    parser.add_argument("--devices", default=None, help="device file (default: data/devices.json)")
    parser.add_argument("--png", type=Path, help="write the roofline plot here")
    parser.add_argument("--json", type=Path, help="write the report(s) here")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--fidelity", action="store_true", help="print the fidelity checks")
    parser.add_argument(
        "--measure-cpu", action="store_true", help="with --fidelity: also time PyTorch eager on this CPU"
    )
    parser.add_argument(
        "--models", default="unet,rolling_unet_s,rolling_unet_m,rolling_unet_l,unext,unext_s,unext_stripe"
    )
    # The options of a SPEC, as gpuopt.export's add_spec_arguments (not imported: it imports PyTorch).
    parser.add_argument(
        "--kwargs", default="{}", help="for a SPEC: JSON object of constructor keyword arguments"
    )
    parser.add_argument(
        "--path", action="append", default=[], metavar="DIR", help="for a SPEC: a directory first on sys.path"
    )
    parser.add_argument(
        "--traceback", action="store_true", help="print the traceback of a failure in the model's code"
    )
    args = parser.parse_args(argv)
    try:
        return _run(parser, args)
    except ToolError as e:
        # The tool's own located diagnostic (file:line:col: error: ...).
        print(f"{PROG}: error: {e}".rstrip(), file=sys.stderr)
        return 1
    except (NothingToReport, OutputError, FileNotFoundError) as e:
        # No function, an output that cannot be written, a tool not built.
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """main's work after parsing; tool failures propagate as ToolError."""
    if args.fidelity and args.gpu_conv != "model":
        parser.error("--gpu-conv applies to the report of a model, not to --fidelity (eager predictions)")
    if args.fidelity:
        print(fidelity(args.models.split(","), args.device, args.devices))
        if args.measure_cpu:
            print()
            print(measure_cpu(args.models.split(","), devices=args.devices))
        return 0
    if not args.model:
        parser.error("a model (.mlir or a SPEC of gpuopt.export) or --fidelity is required")
    mlir_file = is_mlir_file(args.model)
    inputs: dict[str, Any] = {"--devices": args.devices or DEFAULT_DEVICES}
    outputs = {k: v for k, v in (("--json", args.json), ("--png", args.png)) if v is not None}
    if mlir_file:
        inputs["the model"] = args.model
        given = [flag for flag, v in (("--input-shape", args.input_shape), ("--path", args.path)) if v]
        given += ["--kwargs"] if args.kwargs != "{}" else []
        if given:
            parser.error(f"{', '.join(given)} apply to a SPEC, not to the graph file {args.model}")
    else:
        # The exporter (and PyTorch) only for a SPEC: a .mlir report starts fast.
        from gpuopt.capture import CaptureError
        from gpuopt.export import ExportError, parse_kwargs, parse_shape, parse_spec, print_error

        try:
            kwargs = parse_kwargs(args.kwargs)
        except ExportError as e:
            parser.error(str(e))
        try:
            if (source := parse_spec(args.model).source_file) is not None:
                inputs["the SPEC file"] = source
        except ExportError as e:
            return print_error(PROG, e, args.traceback)
    try:
        check_outputs(outputs, inputs)
    except OutputPathError as e:
        parser.error(str(e))
    with tempfile.TemporaryDirectory(prefix="gpuopt-costreport-") as tmp:
        path = Path(args.model)
        if not mlir_file:
            path = Path(tmp) / "model.mlir"
            try:
                shapes = [parse_shape(s) for s in args.input_shape or [f"1,3,{args.size},{args.size}"]]
                export_spec(args.model, shapes, path, kwargs, args.path)
            except (ExportError, CaptureError) as e:
                return print_error(PROG, e, args.traceback)
        pipeline = shlex.split(args.pipeline)
        route = {"gpu_conv": args.gpu_conv}
        print(report(path, args.device, None, args.devices, fmt="table", top=args.top, **route))
        before = report(path, args.device, None, args.devices, **route)
        after = None
        if pipeline:
            print(f"--- after {args.pipeline}")
            print(report(path, args.device, pipeline, args.devices, fmt="table", top=args.top, **route))
            after = report(path, args.device, pipeline, args.devices, **route)
        print(comparison(before, after, args.pipeline))
        if args.json:
            try:
                write_text(args.json, json.dumps({"before": before, "after": after}))
            except OSError as e:
                raise OutputError(str(e)) from e
        if args.png:
            panels = [("as given: PyTorch eager", before, "eager")]
            if after is not None:
                panels.append((f"after {args.pipeline}: gpuopt compiled", after, "compiled"))
            else:
                panels.append(("as given: gpuopt compiled", before, "compiled"))
            try:
                plot_roofline(panels, args.png)
            except OSError as e:
                raise OutputError(str(e)) from e
            print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
