#!/usr/bin/env python3
"""Classifies the launches of a CUDA artifact's plan by what their kernels do.

    gpuopt-compile M.mlir --target=cuda --cuda-arch=sm_90 \
        --cuda-write-kernels=M.kernels.mlir -o M.gpuopt
    utils/cuda_plan_summary.py M.gpuopt M.kernels.mlir [--source M.mlir] [--plan run]

Prints one row per kind of launch of the plan (`run` per forward by default)
and the total. A kernel's kind comes from its body (the gpu.module that
--cuda-write-kernels writes): a reduction loop (`scf.for`) makes it a
"conv/matmul" (a multiply-accumulate in the loop), "pool" (a max in the loop)
or "reduction"; a body without loops is a "fill" (stores, no loads), a "copy"
(as many loads as stores and no float arithmetic; "copy (batched)" when
several), a "gather" (no float arithmetic, a modulo or select: a roll or
shift) or "elementwise". A fill, copy or gather whose written buffer the
next launch reading it reads without writing, when that launch is a
conv/matmul, is "conv padding/gather" (an operand of a convolution; a
batched copy, a concat, is not). With --source (the MLIR compiled, whose
locations the plan records), each row also names the seg ops the launches
came from; --steps prints each launch. A Library step of --gpu-conv=library
(a cuDNN/cuBLASLt call, no kernel) is its own row, "library ROUTINE".
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SCHEMA = Path(__file__).resolve().parents[1] / "runtime" / "include" / "gpuopt" / "Runtime" / "Artifact.fbs"


def read_plan(artifact: Path) -> dict:
    flatc = shutil.which("flatc")
    if not flatc:
        sys.exit("cuda_plan_summary: error: flatc not found (utils/bootstrap.sh installs it)")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [flatc, "--json", "--strict-json", "--defaults-json", "-o", tmp, SCHEMA, "--", artifact],
            check=True,
            capture_output=True,
        )
        model = json.loads((Path(tmp) / f"{artifact.stem}.json").read_text())
    if model.get("program_type") != "CudaProgram":
        sys.exit(f"cuda_plan_summary: error: {artifact}: not a CUDA artifact")
    return model["program"]


def kernel_bodies(kernels: Path) -> dict[str, str]:
    bodies: dict[str, str] = {}
    name = None
    lines: list[str] = []
    for line in kernels.read_text().splitlines():
        m = re.match(r"\s*gpu\.func @(\w+)\(", line)
        if m:
            name, lines = m.group(1), []
            continue
        if name is None:
            continue
        if re.match(r"\s*gpu\.return", line):
            bodies[name] = "\n".join(lines)
            name = None
            continue
        lines.append(line)
    return bodies


FLOAT_ARITH = re.compile(
    r"= (arith\.(add|sub|mul|div|max|min|neg|rem)f|arith\.maxnumf|arith\.minnumf|math\.\w+|arith\.cmpf)"
)


def body_kind(body: str) -> str:
    loads = body.count("memref.load ")
    stores = body.count("memref.store ")
    if "scf.for" in body:
        loop = body[body.index("scf.for") :]
        if ("arith.mulf" in loop or "math.fma" in loop) and loads >= 2:
            return "conv/matmul"
        if "arith.maximumf" in loop or "arith.maxnumf" in loop or "arith.cmpf" in loop:
            return "pool"
        return "reduction"
    if loads == 0:
        return "fill"
    if not FLOAT_ARITH.search(body) and ("arith.remsi" in body or "arith.select" in body):
        return "gather"
    if not FLOAT_ARITH.search(body) and loads == stores:
        return "copy (batched)" if loads > 1 else "copy"
    return "elementwise"


def op_at(source_lines: list[str] | None, loc: str) -> str:
    if source_lines is None:
        return ""
    m = re.search(r":(\d+):\d+$", loc)
    if not m or int(m.group(1)) > len(source_lines):
        return "?"
    op = re.search(r"\b(seg\.\w+|linalg\.\w+|tensor\.\w+)", source_lines[int(m.group(1)) - 1])
    return op.group(1) if op else "?"


def summarize(
    plan: dict, bodies: dict[str, str], which: str, source: Path | None, show_steps: bool = False
) -> list[tuple[str, int, str]]:
    source_lines = source.read_text().splitlines() if source else None
    steps = plan[which]
    kernels = plan["kernels"]
    kinds = []
    for step in steps:
        if step["kind"] == "Library":
            kinds.append(f"library {step['library']}")
            continue
        name = kernels[step["kernel"]]["name"]
        if name not in bodies:
            sys.exit(f"cuda_plan_summary: error: kernel '{name}' is not in the kernels file")
        kinds.append(body_kind(bodies[name]))

    def touches(step: dict, buf: int) -> tuple[bool, bool] | None:
        if step["kind"] == "Library":
            # Operand 0 is written, the others are read (empty ones name no buffer).
            ops = [o for o in step["operands"] if 0 not in o["sizes"]]
            reads = any(o["buffer"] == buf for o in ops[1:])
            writes = bool(ops) and ops[0]["buffer"] == buf
            return (reads, writes) if reads or writes else None
        params = kernels[step["kernel"]]["args"]
        rw = [(p["reads"], p["writes"]) for a, p in zip(step["args"], params) if a == buf]
        if not rw:
            return None
        return any(r for r, _ in rw), any(w for _, w in rw)

    rows: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for i, step in enumerate(steps):
        kind = kinds[i]
        if kind in ("fill", "copy", "gather"):
            params = kernels[step["kernel"]]["args"]
            written = [a for a, p in zip(step["args"], params) if p["writes"]]
            for buf in written:
                for j in range(i + 1, len(steps)):
                    t = touches(steps[j], buf)
                    if t is None or not t[0]:
                        continue
                    if t == (True, False) and (kinds[j] == "conv/matmul" or kinds[j].startswith("library")):
                        kind = "conv padding/gather"
                    break
                if kind == "conv padding/gather":
                    break
        rows[kind][op_at(source_lines, step["loc"])] += 1
        if show_steps:
            name = step["library"] if step["kind"] == "Library" else kernels[step["kernel"]]["name"]
            print(f"{which}[{i}] {name} {kind} {op_at(source_lines, step['loc'])} {step['loc']}")
    return [
        (k, sum(c.values()), ", ".join(f"{op} {n}" for op, n in c.most_common() if op))
        for k, c in rows.items()
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("artifact", type=Path)
    ap.add_argument("kernels", type=Path, help="the file of gpuopt-compile --cuda-write-kernels")
    ap.add_argument("--source", type=Path, help="the MLIR compiled (names the seg ops of each row)")
    ap.add_argument("--plan", choices=["run", "init"], default="run")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--steps", action="store_true", help="also print each launch")
    args = ap.parse_args()
    plan = read_plan(args.artifact)
    rows = sorted(summarize(plan, kernel_bodies(args.kernels), args.plan, args.source, args.steps))
    total = sum(n for _, n, _ in rows)
    if args.json:
        print(json.dumps({"total": total, "rows": {k: n for k, n, _ in rows}}))
        return
    for kind, n, ops in rows:
        print(f"{kind:24} {n:4}  {ops}")
    print(f"{'total':24} {total:4}")


if __name__ == "__main__":
    main()
