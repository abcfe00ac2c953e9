"""Measure this machine's CPU and write it into the cost model's device file.

    python -m gpuopt.calibrate [--devices data/devices.json] [--name cpu] [--dry-run]

Measures, with PyTorch on the CPU (all of its intra-op threads):

- memory bandwidth: the best of several copies of a large tensor (bytes read
  plus bytes written, over the time), as STREAM reports its copy kernel;
- peak FLOP/s by precision: the best of several large matrix products
  (2·n³ FLOPs each) in fp32, fp64 and bf16;
- the eager dispatch cost: the median time of a tiny op (`torch.add` of two
  one-element tensors) called from Python — PyTorch's per-op overhead, the
  ``eager_launch_s`` of the device model.

The entry (``kind: cpu``, efficiencies 1 because the peaks are measured) is
written under ``--name`` into the device file, keeping the other entries;
``--dry-run`` prints it instead. ``launch_s`` (a call into gpuopt's compiled
code) is not measured: it is set to 1 µs (docs/CostModel.md).
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from gpuopt._atomic import write_text
from gpuopt.tools import DEFAULT_DEVICES

#: Seconds per kernel launch in gpuopt's compiled CPU code (assumed, not measured).
COMPILED_LAUNCH_S = 1e-6


def _best_time(fn: Callable[[], Any], repeats: int) -> float:
    fn()  # warm-up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def measure_bandwidth(megabytes: int = 64, repeats: int = 10) -> float:
    """Bytes/s of the best copy of a ``megabytes`` float32 tensor (read + write)."""
    n = megabytes * 2**20 // 4
    src = torch.rand(n)
    dst = torch.empty(n)
    seconds = _best_time(lambda: dst.copy_(src), repeats)
    return 2 * n * 4 / seconds


def measure_flops(dtype: torch.dtype, n: int, repeats: int = 5) -> float:
    """FLOP/s of the best ``n x n`` matrix product in ``dtype``."""
    a = torch.rand(n, n).to(dtype)
    b = torch.rand(n, n).to(dtype)
    c = torch.empty(n, n, dtype=dtype)
    seconds = _best_time(lambda: torch.mm(a, b, out=c), repeats)
    return 2 * n**3 / seconds


def measure_dispatch(calls: int = 20000, rounds: int = 7) -> float:
    """Median seconds per call of a tiny eager op from Python."""
    a, b = torch.rand(1), torch.rand(1)
    per_call = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            torch.add(a, b)
        per_call.append((time.perf_counter() - start) / calls)
    return statistics.median(per_call)


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def calibrate() -> dict[str, Any]:
    """Measures this machine and returns its device-file entry."""
    threads = torch.get_num_threads()
    peaks = {
        "fp32": measure_flops(torch.float32, 2048),
        "fp64": measure_flops(torch.float64, 1024),
        "bf16": measure_flops(torch.bfloat16, 1024),
    }
    return {
        "name": f"{_cpu_name()}, {threads} threads (measured)",
        "kind": "cpu",
        "peak_flops": {k: float(f"{v:.4g}") for k, v in peaks.items()},
        "bandwidth": float(f"{measure_bandwidth():.4g}"),
        "compute_efficiency": 1.0,
        "memory_efficiency": 1.0,
        "units": threads,
        "launch_s": COMPILED_LAUNCH_S,
        "eager_launch_s": float(f"{measure_dispatch():.4g}"),
        "source": (
            f"python -m gpuopt.calibrate on {datetime.date.today().isoformat()}, "
            f"torch {torch.__version__}: best 64 MiB copy, best matmul (fp32 n=2048, fp64/bf16 n=1024), "
            "median torch.add of one-element tensors; launch_s assumed"
        ),
    }


def _json(value: Any) -> str:
    """Compact JSON with floats in short scientific form (``2.977e+13``)."""
    if isinstance(value, float):
        return format(value, ".6g")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_json(v) for v in value) + "]"
    return json.dumps(value)


def format_devices(document: dict[str, Any]) -> str:
    """The device file as JSON, one line per field of an entry."""
    lines = ["{"]
    top = [(k, v) for k, v in document.items() if k != "devices"]
    for key, value in top:
        lines.append(f"  {json.dumps(key)}: {_json(value)},")
    lines.append('  "devices": {')
    devices = list(document.get("devices", {}).items())
    for i, (name, entry) in enumerate(devices):
        lines.append(f"    {json.dumps(name)}: {{")
        fields = list(entry.items())
        for j, (key, value) in enumerate(fields):
            comma = "," if j + 1 < len(fields) else ""
            lines.append(f"      {json.dumps(key)}: {_json(value)}{comma}")
        lines.append("    }" + ("," if i + 1 < len(devices) else ""))
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def write_entry(path: Path, name: str, entry: dict[str, Any]) -> None:
    """Sets ``devices[name]`` of the device file at ``path`` (created if missing)."""
    document = json.loads(path.read_text()) if path.exists() else {"devices": {}}
    document.setdefault("devices", {})[name] = entry
    write_text(path, format_devices(document))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=Path, default=DEFAULT_DEVICES, help="device file to update")
    parser.add_argument("--name", default="cpu", help="key of the entry to write")
    parser.add_argument("--dry-run", action="store_true", help="print the entry, do not write it")
    args = parser.parse_args(argv)
    entry = calibrate()
    print(json.dumps({args.name: entry}, indent=2))
    if not args.dry_run:
        write_entry(args.devices, args.name, entry)
        print(f"wrote '{args.name}' to {args.devices}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
