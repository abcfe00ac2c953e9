"""Compile time against op count: gpuopt-compile (cpu, cuda) and gpuopt-run --backend=cpu.

Exports ``opmix.py:OpMix`` at each requested op count (and, with ``--zoo``,
Rolling-UNet-L unoptimized, 16,590 ops), then times, one process at a time:

- ``gpuopt-opt --gpuopt-cpu-lowering --mlir-timing`` (the passes alone; the
  three slowest are listed),
- ``gpuopt-compile --target=cpu`` and ``--target=cuda`` end to end,
- ``gpuopt-run --backend=cpu`` (JIT compile and one inference),

and prints a Markdown table with wall seconds, CPU seconds and peak RSS of each step, the
machine's CPU model and its load average. Every command gets ``--timeout``
seconds; a step that runs out is reported as such, not as a number.

    .venv/bin/python benchmarks/compile_time/compile_time.py --ops 1000 10000 100000 --zoo
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPMIX = Path(__file__).resolve().parent / "opmix.py"


def cpu_model() -> str:
    for line in subprocess.run(["lscpu"], check=False, capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def run(cmd: list[str], timeout: float) -> tuple[float | None, float, float, str]:
    """Runs ``cmd``; returns (wall seconds, or None if it failed or timed out; its CPU seconds, user
    plus system, which a loaded machine inflates less than wall time; its peak RSS in MiB; its
    stderr)."""
    start = time.monotonic()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, text=True)
        # wait4 gives this child's own peak RSS.
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout:
                proc.kill()
                os.wait4(proc.pid, 0)
                return None, 0.0, 0.0, f"timed out after {timeout:.0f} s"
            time.sleep(0.05)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
    peak = usage.ru_maxrss / 1024
    cpu = usage.ru_utime + usage.ru_stime
    if proc.returncode != 0:
        lines = stderr.strip().splitlines()
        return None, cpu, peak, lines[-1] if lines else f"exit {proc.returncode}"
    return wall, cpu, peak, stderr


def count_ops(mlir: Path) -> int:
    text = mlir.read_text()
    return len(re.findall(r"^\s*(?:%\S+ = )?(?:seg\.|return)", text, re.MULTILINE))


def slowest_passes(timing: str, n: int = 3) -> str:
    rows = []
    for line in timing.splitlines():
        m = re.match(r"\s*([\d.]+) \(\s*[\d.]+%\)\s+([\d.]+) \(\s*[\d.]+%\)\s+(\S.*)$", line)
        if m and m.group(3) not in ("Total", "Output", "Parser", "Rest"):
            rows.append((float(m.group(2)), m.group(3).strip()))
    rows.sort(reverse=True)
    return ", ".join(f"{name} {secs:.1f}" for secs, name in rows[:n])


def export(spec: str, kwargs: str | None, shape: str, out: Path, timeout: float) -> tuple[float | None, str]:
    cmd = [
        sys.executable,
        "-m",
        "gpuopt.export",
        spec,
        "-o",
        str(out),
        "--weights",
        str(out.with_suffix(".safetensors")),
        "--input-shape",
        shape,
        "--reference-dir",
        str(out.with_suffix(".ref")),
        "-q",
    ]
    if kwargs:
        cmd += ["--kwargs", kwargs]
    wall, _, _, err = run(cmd, timeout)
    return wall, err


def fmt(wall: float | None, cpu: float, peak: float, err: str) -> str:
    if wall is None:
        return f"— ({err[:60]})"
    return f"{wall:.1f} s ({cpu:.1f} s CPU) / {peak:.0f} MiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--zoo", action="store_true", help="also Rolling-UNet-L, unoptimized")
    parser.add_argument(
        "--build", type=Path, default=Path(os.environ.get("GPUOPT_BUILD_DIR", ROOT / "build"))
    )
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--no-cuda", action="store_true", help="skip --target=cuda")
    args = parser.parse_args()
    bin_dir = args.build / "bin"

    cases: list[tuple[str, str, str | None, str]] = [
        (f"op mix {n}", f"{OPMIX}:OpMix", f'{{"ops": {n}}}', "1,8,8,8") for n in args.ops
    ]
    if args.zoo:
        cases.append(("Rolling-UNet-L", "zoo:rolling_unet_l", None, "1,3,256,256"))

    print(
        f"CPU: {cpu_model()}, {os.cpu_count()} cores; load average at start "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    print()
    print(
        "| graph | ops | export | passes (cpu lowering) | slowest passes (s) | compile cpu | "
        "compile cuda | run --backend=cpu |"
    )
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, spec, kwargs, shape in cases:
            mlir = Path(tmp) / (re.sub(r"\W+", "_", name) + ".mlir")
            wall, err = export(spec, kwargs, shape, mlir, args.timeout)
            if wall is None:
                print(f"| {name} | — | failed: {err} | | | | | |", flush=True)
                continue
            ops = count_ops(mlir)
            exp = f"{wall:.1f} s"
            pw, pc, pp, perr = run(
                [
                    str(bin_dir / "gpuopt-opt"),
                    str(mlir),
                    "--gpuopt-cpu-lowering",
                    "--mlir-timing",
                    "-o",
                    os.devnull,
                ],
                args.timeout,
            )
            passes = fmt(pw, pc, pp, perr)
            slow = slowest_passes(perr) if pw is not None else ""
            cpu = fmt(
                *run(
                    [
                        str(bin_dir / "gpuopt-compile"),
                        str(mlir),
                        "--target=cpu",
                        "-o",
                        str(mlir.with_suffix(".so")),
                    ],
                    args.timeout,
                )
            )
            cuda = "skipped"
            if not args.no_cuda:
                cuda = fmt(
                    *run(
                        [
                            str(bin_dir / "gpuopt-compile"),
                            str(mlir),
                            "--target=cuda",
                            "-o",
                            str(mlir.with_suffix(".gpuopt")),
                        ],
                        args.timeout,
                    )
                )
            jit = fmt(
                *run(
                    [
                        str(bin_dir / "gpuopt-run"),
                        str(mlir),
                        "--weights",
                        str(mlir.with_suffix(".safetensors")),
                        f"--input=@{mlir.with_suffix('.ref') / 'input.npy'}",
                        f"--output=@{Path(tmp) / 'y.npy'}",
                        "--backend=cpu",
                    ],
                    args.timeout,
                )
            )
            print(f"| {name} | {ops} | {exp} | {passes} | {slow} | {cpu} | {cuda} | {jit} |", flush=True)
    print()
    print(f"load average at end {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
