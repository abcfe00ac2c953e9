"""Drive gpuopt's command-line tools from Python.

The compiled tools live in ``build/bin`` of the source tree (override with the
``GPUOPT_BUILD_DIR`` environment variable). These helpers write inputs and
weights to a scratch directory, run the tool and read the results back; they
are what the tests, the demo and the benchmarks use.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[2]
# The device file the cost model and calibration read by default.
DEFAULT_DEVICES = REPO_ROOT / "data" / "devices.json"


def build_dir() -> Path:
    """The CMake build directory holding ``bin/gpuopt-opt`` and ``bin/gpuopt-run``."""
    return Path(os.environ.get("GPUOPT_BUILD_DIR", REPO_ROOT / "build"))


def tool(name: str) -> Path:
    """Path of a built gpuopt tool; raises FileNotFoundError when it is not built."""
    path = build_dir() / "bin" / name
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: run `make build` first")
    return path


class ToolError(RuntimeError):
    """A gpuopt tool exited with a non-zero status; ``stderr`` holds its message."""

    def __init__(self, cmd: list[str], returncode: int, stderr: str) -> None:
        super().__init__(f"{Path(cmd[0]).name} exited with {returncode}:\n{stderr}")
        self.returncode = returncode
        self.stderr = stderr


def run_tool(args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    """Runs ``args`` (first element a tool name) and raises ToolError on failure."""
    cmd = [str(tool(args[0]))] + [str(a) for a in args[1:]]
    # A tool's messages quote the input, which need not be UTF-8.
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, errors="replace", check=False)
    if proc.returncode != 0:
        raise ToolError(cmd, proc.returncode, proc.stderr)
    return proc


def save_weights(path: Path, weights: dict[str, np.ndarray]) -> None:
    """Writes ``weights`` as a safetensors file (float32 unless given otherwise)."""
    from safetensors.numpy import save_file

    save_file({k: np.ascontiguousarray(v) for k, v in weights.items()}, str(path))


@dataclass
class RunResult:
    outputs: list[np.ndarray]
    stdout: str
    stderr: str


def run_graph(
    mlir: str | Path,
    inputs: list[np.ndarray],
    weights: dict[str, np.ndarray] | None = None,
    backend: str = "reference",
    num_outputs: int = 1,
    extra_args: list[str] | None = None,
) -> RunResult:
    """Runs a seg graph (text or a path) with gpuopt-run and returns its outputs.

    ``num_outputs`` is the number of results of the entry function.
    """
    with tempfile.TemporaryDirectory(prefix="gpuopt-") as tmp:
        tmpdir = Path(tmp)
        if isinstance(mlir, Path):
            model = mlir
        else:
            model = tmpdir / "model.mlir"
            model.write_text(mlir)
        args: list[str] = ["gpuopt-run", str(model), f"--backend={backend}"]
        if weights is not None:
            wpath = tmpdir / "weights.safetensors"
            save_weights(wpath, weights)
            args.append(f"--weights={wpath}")
        for i, x in enumerate(inputs):
            p = tmpdir / f"input{i}.npy"
            np.save(p, np.ascontiguousarray(x, dtype=np.float32))
            args.append(f"--input=@{p}")
        outs = [tmpdir / f"output{i}.npy" for i in range(num_outputs)]
        args += [f"--output=@{p}" for p in outs]
        args += extra_args or []
        proc = run_tool(args)
        return RunResult([np.load(p) for p in outs], proc.stdout, proc.stderr)
