"""Kernel benchmark: gpuopt's CPU conv/linear kernels against oneDNN and the FMA peak.

Command line::

    python -m gpuopt.kernelbench [--models all|rolling_unet_s,unet,...] [--threads 2]
        [--isa avx512,avx2,generic] [--runs 10] [--budget-s 900] [--json OUT.json]

Every distinct conv2d / fused_conv2d / conv_transpose2d / linear of the zoo
models, as it appears in the graph after ``gpuopt-opt --gpuopt-optimize``
(exported at 224², batch 1), with how often it occurs in each model. For each
shape and each ISA path: gpuopt's kernel called directly (the
``_mlir_ciface_gpuopt_cpu_*`` functions, through the small C library
``libGpuoptKernelBench.so``), and the same operation through PyTorch's bundled
oneDNN (``torch.ops.mkldnn`` primitives, the bias and activation as oneDNN
post-ops), both on the same inputs, checked equal (relative L2) before they are
timed, interleaved (the two alternate every repetition). GFLOP/s and the
fraction of this machine's multiply-add peak of that ISA, measured with an FMA
loop on the same number of threads.

Each ISA path runs in its own process with ``GPUOPT_CPU_ISA`` set (and oneDNN
capped to the same ISA with ``ONEDNN_MAX_CPU_ISA``). Kernels that do not say
which path they dispatched to (no ``gpuopt_cpu_kernel_isa``) are measured once,
as the path "dispatched".
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gpuopt._atomic import write_text
from gpuopt.timing import settle
from gpuopt.tools import REPO_ROOT, build_dir, run_tool

ISAS = ("avx512", "avx2", "generic")
# The CPU flags each ISA path needs (as /proc/cpuinfo spells them).
ISA_FLAGS = {"avx512": ("avx512f", "avx512vl", "fma"), "avx2": ("avx2", "fma"), "generic": ()}
# oneDNN's cap for the same ISA (ONEDNN_MAX_CPU_ISA); None: its default (all).
ONEDNN_CAP = {"avx512": None, "avx2": "AVX2", "generic": "SSE41"}
SLOW_RATIO = 0.9  # gpuopt below this fraction of oneDNN's speed is flagged.


class KernelBenchError(Exception):
    """Bad command-line input: reported in one line, exit status 2."""


# ----------------------------------------------------------------------------
# Shapes of the optimized graphs
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """One conv/linear call as gpuopt's kernels see it (batch included)."""

    kind: str  # conv2d | conv_transpose2d | linear
    n: int
    c: int
    h: int
    w: int
    oc: int
    kh: int = 1
    kw: int = 1
    stride: tuple[int, int] = (1, 1)
    pad: tuple[int, int] = (0, 0)
    dil: tuple[int, int] = (1, 1)
    groups: int = 1
    oh: int = 1
    ow: int = 1
    bias: bool = False
    residual: bool = False
    activation: str = "none"
    shift: str = ""  # "" (none) or the seg.channel_shift mode: cyclic | zero
    # Linear: n = rows (product of the leading dims), c = K, oc = N.

    def key(self) -> str:
        if self.kind == "linear":
            s = f"linear {self.n}x{self.c} -> {self.oc}"
        else:
            s = (
                f"{self.kind} {self.n}x{self.c}x{self.h}x{self.w} -> {self.oc} k{self.kh}x{self.kw}"
                f" s{self.stride[0]},{self.stride[1]} p{self.pad[0]},{self.pad[1]}"
            )
            if self.dil != (1, 1):
                s += f" d{self.dil[0]},{self.dil[1]}"
            if self.groups != 1:
                s += f" g{self.groups}"
        epilogue = [
            e
            for e in (
                "bias" if self.bias else "",
                self.activation if self.activation != "none" else "",
                "+res" if self.residual else "",
                f"shift:{self.shift}" if self.shift else "",
            )
            if e
        ]
        return s + (" [" + ",".join(epilogue) + "]" if epilogue else "")

    def shape_class(self) -> str:
        """The routing class: kind, kernel size, depthwise/grouped, strided."""
        if self.kind == "linear":
            return "linear"
        if self.kind == "conv_transpose2d":
            return f"conv_transpose2d {self.kh}x{self.kw}"
        cls = f"conv {self.kh}x{self.kw}"
        if self.groups == self.c and self.oc == self.c and self.c > 1:
            cls += " depthwise"
        elif self.groups != 1:
            cls += " grouped"
        if self.stride != (1, 1):
            cls += " strided"
        if self.dil != (1, 1):
            cls += " dilated"
        return cls

    def flops(self) -> int:
        """2 x true MACs."""
        if self.kind == "linear":
            return 2 * self.n * self.c * self.oc
        if self.kind == "conv_transpose2d":
            return 2 * self.n * self.c * self.h * self.w * self.oc * self.kh * self.kw // self.groups
        return 2 * self.n * self.oc * self.oh * self.ow * (self.c // self.groups) * self.kh * self.kw

    def gpuopt_kernel(self) -> bool:
        """Whether --convert-seg-to-cpu-kernels calls a kernel for it (else: linalg loops)."""
        if self.kind != "conv_transpose2d":
            return True
        return (
            self.groups == 1
            and self.stride == (self.kh, self.kw)
            and self.pad == (0, 0)
            and self.dil == (1, 1)
        )


_TENSOR = re.compile(r"tensor<([0-9x]+)xf32>")


def _dims(text: str) -> list[list[int]]:
    return [[int(d) for d in m.split("x")] for m in _TENSOR.findall(text)]


def _array(attr: str, line: str) -> list[int]:
    m = re.search(rf"\b{attr} = \[([^\]]*)\]", line)
    if not m:
        raise ValueError(f"no {attr} in: {line.strip()[:200]}")
    return [int(v) for v in m.group(1).split(",") if v.strip()]


def _int(attr: str, line: str) -> int:
    m = re.search(rf"\b{attr} = (-?\d+)", line)
    if not m:
        raise ValueError(f"no {attr} in: {line.strip()[:200]}")
    return int(m.group(1))


def _keyword(attr: str, line: str) -> str:
    """The case of an enum attribute (``mode = cyclic``, ``activation = relu``).

    The printer writes a bare keyword; the parser also takes the string form
    (``mode = "cyclic"``), so this reads both.
    """
    m = re.search(rf'\b{attr} = (?:"([A-Za-z_][\w.$-]*)"|([A-Za-z_][\w.$-]*))', line)
    if not m:
        raise ValueError(f"no {attr} in: {line.strip()[:200]}")
    return m.group(1) or m.group(2)


@dataclass
class ParsedOp:
    shape: Shape
    offsets_h: list[int] = field(default_factory=list)
    offsets_w: list[int] = field(default_factory=list)


def parse_ops(mlir: str) -> list[ParsedOp]:
    """The conv/linear ops of a seg graph in custom form, in program order."""
    ops: list[ParsedOp] = []
    op_re = re.compile(r"=\s*seg\.(conv2d|fused_conv2d|conv_transpose2d|linear)\s+(.*)$")
    for line in mlir.splitlines():
        m = op_re.search(line)
        if not m:
            continue
        name, rest = m.groups()
        operands, _, types = rest.rpartition(" : ")
        types_in, _, type_out = types.rpartition("->")
        ins, out = _dims(types_in), _dims(type_out)[0]
        if name == "linear":
            x, wt = ins[0], ins[1]
            rows = int(np.prod(x[:-1]))
            ops.append(ParsedOp(Shape("linear", rows, x[-1], 1, 1, wt[0], bias=len(ins) > 2)))
            continue
        x, wt = ins[0], ins[1]
        stride, pad, dil = _array("stride", rest), _array("padding", rest), _array("dilation", rest)
        common = {
            "n": x[0],
            "c": x[1],
            "h": x[2],
            "w": x[3],
            "kh": wt[2],
            "kw": wt[3],
            "stride": tuple(stride),
            "pad": tuple(pad),
            "dil": tuple(dil),
            "groups": _int("groups", rest),
            "oh": out[2],
            "ow": out[3],
        }
        if name == "conv_transpose2d":
            oc = wt[1] * common["groups"]
            ops.append(ParsedOp(Shape("conv_transpose2d", oc=oc, bias=len(ins) > 2, **common)))
            continue
        oh_, ow_ = [], []
        residual = False
        activation, shift = "none", ""
        head = operands.split(" offsets_h")[0] if name == "fused_conv2d" else operands.split(" stride")[0]
        if name == "fused_conv2d":
            residual = " residual " in f" {head} "
            oh_, ow_ = _array("offsets_h", rest), _array("offsets_w", rest)
            activation = _keyword("activation", rest)
            if oh_ or ow_:
                shift = _keyword("mode", rest)
        n_plain = len(head.split(" residual ")[0].split(","))
        ops.append(
            ParsedOp(
                Shape(
                    "conv2d",
                    oc=wt[0],
                    bias=n_plain > 2,
                    residual=residual,
                    activation=activation,
                    shift=shift,
                    **common,
                ),
                oh_,
                ow_,
            )
        )
    return ops


def optimized_graph(model: str, size: int, workdir: Path) -> str:
    """Exports zoo model ``model`` at size x size, batch 1, and returns the --gpuopt-optimize graph."""
    import torch

    from gpuopt import models
    from gpuopt.export import export

    torch.manual_seed(0)
    module = models.build(model).eval()
    exported, optimized = workdir / f"{model}.mlir", workdir / f"{model}.opt.mlir"
    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(0))
    export(module, (x,), exported, None)
    run_tool(["gpuopt-opt", exported, "--gpuopt-optimize", "-o", optimized])
    return optimized.read_text()


@dataclass
class ShapeEntry:
    shape: Shape
    counts: dict[str, int]  # model -> occurrences
    offsets_h: list[int]
    offsets_w: list[int]


def collect_shapes(model_names: Sequence[str], size: int, log: Callable[[str], None]) -> list[ShapeEntry]:
    """Distinct shapes over ``model_names`` (first occurrence's shifts kept), with counts per model."""
    entries: dict[Shape, ShapeEntry] = {}
    with tempfile.TemporaryDirectory(prefix="gpuopt-kernelbench-") as tmp:
        for model in model_names:
            start = time.perf_counter()
            ops = parse_ops(optimized_graph(model, size, Path(tmp)))
            for op in ops:
                e = entries.setdefault(op.shape, ShapeEntry(op.shape, {}, op.offsets_h, op.offsets_w))
                e.counts[model] = e.counts.get(model, 0) + 1
            distinct = len({op.shape for op in ops})
            log(
                f"{model}: {len(ops)} conv/linear ops, {distinct} distinct, in {time.perf_counter() - start:.1f} s"
            )
    return list(entries.values())


# ----------------------------------------------------------------------------
# The C library
# ----------------------------------------------------------------------------


def library_path() -> Path:
    return build_dir() / "lib" / "libGpuoptKernelBench.so"


def load_library() -> ctypes.CDLL:
    path = library_path()
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: build the GpuoptKernelBench target")
    lib = ctypes.CDLL(str(path))
    i64, ptr, dbl = ctypes.c_int64, ctypes.c_void_p, ctypes.c_double
    lib.gpuopt_kb_set_num_threads.argtypes = [ctypes.c_int]
    lib.gpuopt_kb_kernel_isa.restype = ctypes.c_char_p
    lib.gpuopt_kb_fma_peak.argtypes = [ctypes.c_char_p, ctypes.c_int, dbl, ctypes.c_int]
    lib.gpuopt_kb_fma_peak.restype = dbl
    lib.gpuopt_kb_conv2d.argtypes = [ptr] * 7 + [i64] * 22
    lib.gpuopt_kb_conv2d.restype = dbl
    lib.gpuopt_kb_conv_transpose2d.argtypes = [ptr] * 4 + [i64] * 10
    lib.gpuopt_kb_conv_transpose2d.restype = dbl
    lib.gpuopt_kb_linear.argtypes = [ptr] * 4 + [i64] * 4
    lib.gpuopt_kb_linear.restype = dbl
    lib.gpuopt_kb_activation_code.argtypes = [ctypes.c_char_p]
    lib.gpuopt_kb_activation_code.restype = i64
    return lib


def activation_code(lib: ctypes.CDLL, activation: str) -> int:
    """The kernels' code of a seg activation (runtime/include/gpuopt/Runtime/CpuKernelAbi.h)."""
    code = int(lib.gpuopt_kb_activation_code(activation.encode()))
    if code < 0:
        raise ValueError(f"the CPU kernels have no activation {activation!r}")
    return code


def _ptr(a: np.ndarray | None) -> int | None:
    return None if a is None else a.ctypes.data


# ----------------------------------------------------------------------------
# Timing one shape (in a worker process, one ISA path)
# ----------------------------------------------------------------------------


def shifted(x: Any, offsets_h: list[int], offsets_w: list[int], mode: str) -> Any:
    """seg.channel_shift: channel c moved by (offsets_h[c], offsets_w[c]), cyclic or zero-filled."""
    import torch

    out = torch.empty_like(x) if mode == "cyclic" else torch.zeros_like(x)
    h, w = x.shape[2], x.shape[3]
    for ch in range(x.shape[1]):
        dh = offsets_h[ch] if offsets_h else 0
        dw = offsets_w[ch] if offsets_w else 0
        if mode == "cyclic":
            out[:, ch] = torch.roll(x[:, ch], shifts=(dh, dw), dims=(-2, -1))
            continue
        ys, yd = max(0, -dh), max(0, dh)
        xs, xd = max(0, -dw), max(0, dw)
        lh, lw = h - abs(dh), w - abs(dw)
        if lh > 0 and lw > 0:
            out[:, ch, yd : yd + lh, xd : xd + lw] = x[:, ch, ys : ys + lh, xs : xs + lw]
    return out


def _post_op(activation: str) -> tuple[str, str]:
    """oneDNN's unary post-op (attr, algorithm) for a seg activation."""
    return {
        "none": ("none", ""),
        "relu": ("relu", ""),
        "gelu": ("gelu", "none"),
        "gelu_tanh": ("gelu", "tanh"),
    }[activation]


@dataclass
class Prepared:
    gpuopt: Callable[[int], float]  # iters -> seconds
    onednn: Callable[[int], float]
    gpuopt_out: np.ndarray
    onednn_out: Callable[[], np.ndarray]
    torch_backend: str


def prepare(lib: ctypes.CDLL, entry: ShapeEntry, seed: int) -> Prepared:
    """Random inputs and parameters for ``entry`` and the two callables."""
    import torch

    s = entry.shape
    gen = torch.Generator().manual_seed(seed)

    def rand(*shape: int, scale: float = 1.0) -> torch.Tensor:
        return (torch.randn(*shape, generator=gen) * scale).contiguous()

    mk = torch.ops.mkldnn
    if s.kind == "linear":
        x, wt = rand(s.n, s.c), rand(s.oc, s.c, scale=s.c**-0.5)
        b = rand(s.oc) if s.bias else None
        out = np.empty((s.n, s.oc), np.float32)
        xn, wn = x.numpy(), wt.numpy()
        bn = None if b is None else b.numpy()

        def g(iters: int) -> float:
            return lib.gpuopt_kb_linear(_ptr(out), _ptr(xn), _ptr(wn), _ptr(bn), s.n, s.c, s.oc, iters)

        def o() -> torch.Tensor:
            return mk._linear_pointwise(x, wt, b, "none", [], "")

        backend = "oneDNN matmul (torch.ops.mkldnn._linear_pointwise); F.linear uses BLAS"
    elif s.kind == "conv_transpose2d":
        x = rand(s.n, s.c, s.h, s.w)
        wt = rand(s.c, s.oc // s.groups, s.kh, s.kw, scale=(s.c * s.kh * s.kw) ** -0.5)
        b = rand(s.oc) if s.bias else None
        out = np.empty((s.n, s.oc, s.oh, s.ow), np.float32)
        xn, wn = x.numpy(), wt.numpy()
        bn = None if b is None else b.numpy()
        opad = [
            s.oh - ((s.h - 1) * s.stride[0] - 2 * s.pad[0] + s.dil[0] * (s.kh - 1) + 1),
            s.ow - ((s.w - 1) * s.stride[1] - 2 * s.pad[1] + s.dil[1] * (s.kw - 1) + 1),
        ]

        def g(iters: int) -> float:
            return lib.gpuopt_kb_conv_transpose2d(
                _ptr(out),
                _ptr(xn),
                _ptr(wn),
                _ptr(bn),
                s.n,
                s.c,
                s.h,
                s.w,
                s.oc,
                s.kh,
                s.kw,
                s.oh,
                s.ow,
                iters,
            )

        def o() -> torch.Tensor:
            return mk._convolution_transpose_pointwise(
                x, wt, b, list(s.pad), opad, list(s.stride), list(s.dil), s.groups, "none", [], ""
            )

        backend = str(
            torch._C._select_conv_backend(
                x, wt, b, list(s.stride), list(s.pad), list(s.dil), True, opad, s.groups
            )
        )
    else:
        x = rand(s.n, s.c, s.h, s.w)
        wt = rand(s.oc, s.c // s.groups, s.kh, s.kw, scale=(s.c // s.groups * s.kh * s.kw) ** -0.5)
        b = rand(s.oc) if s.bias else None
        res = rand(s.n, s.oc, s.oh, s.ow) if s.residual else None
        out = np.empty((s.n, s.oc, s.oh, s.ow), np.float32)
        offh = np.asarray(entry.offsets_h, np.int64)
        offw = np.asarray(entry.offsets_w, np.int64)
        xn, wn = x.numpy(), wt.numpy()
        bn = None if b is None else b.numpy()
        rn = None if res is None else res.numpy()
        # oneDNN gets the shift done beforehand (routing would keep gpuopt's shifted copy in front of it).
        xs = shifted(x, entry.offsets_h, entry.offsets_w, s.shift) if s.shift else x
        attr, alg = _post_op(s.activation)
        act = activation_code(lib, s.activation)

        def g(iters: int) -> float:
            return lib.gpuopt_kb_conv2d(
                _ptr(out),
                _ptr(xn),
                _ptr(wn),
                _ptr(bn),
                _ptr(rn),
                _ptr(offh),
                _ptr(offw),
                len(offh),
                len(offw),
                s.n,
                s.c,
                s.h,
                s.w,
                s.oc,
                s.c // s.groups,
                s.kh,
                s.kw,
                s.oh,
                s.ow,
                s.stride[0],
                s.stride[1],
                s.pad[0],
                s.pad[1],
                s.dil[0],
                s.dil[1],
                s.groups,
                int(s.shift == "zero"),
                act,
                iters,
            )

        def o() -> torch.Tensor:
            y = mk._convolution_pointwise(
                xs, wt, b, list(s.pad), list(s.stride), list(s.dil), s.groups, attr, [], alg
            )
            return y.add_(res) if res is not None else y

        backend = str(
            torch._C._select_conv_backend(
                x, wt, b, list(s.stride), list(s.pad), list(s.dil), False, [0, 0], s.groups
            )
        )

    def timed(iters: int) -> float:
        start = time.perf_counter()
        for _ in range(iters):
            o()
        return time.perf_counter() - start

    g(1)
    return Prepared(g, timed, out, lambda: o().numpy(), backend.removeprefix("_ConvBackend."))


def rel_l2(a: np.ndarray, b: np.ndarray) -> float:
    den = float(np.linalg.norm(b.astype(np.float64)))
    num = float(np.linalg.norm(a.astype(np.float64) - b.astype(np.float64)))
    return num / den if den else num


def measure(p: Prepared, runs: int, rep_s: float) -> tuple[list[float], list[float]]:
    """Per-call seconds of gpuopt and oneDNN over ``runs`` interleaved repetitions of ~rep_s each.

    Each batch starts once the process is idle (gpuopt.timing.settle: PyTorch's
    OpenMP/BLAS threads spin 10-30 ms after a call, measured, and took a core
    from the gpuopt batch that followed: a 784x256 -> 128 linear 0.30 ms alone,
    0.39-0.49 ms after torch calls), then one untimed call: the first oneDNN call
    after a gpuopt batch pays for waking its OpenMP threads (measured: 0.27 ms
    calls took 7 ms after a 0.1 s pause), which is the pool switch, not the
    kernel.
    """

    def per_call(fn: Callable[[int], float]) -> float:
        fn(1)
        return min(fn(1) for _ in range(3))

    gi = max(1, int(rep_s / max(per_call(p.gpuopt), 1e-7)))
    oi = max(1, int(rep_s / max(per_call(p.onednn), 1e-7)))
    gt: list[float] = []
    ot: list[float] = []
    for r in range(runs):
        pair = [(p.gpuopt, gi, gt), (p.onednn, oi, ot)]
        for fn, iters, acc in pair if r % 2 == 0 else pair[::-1]:
            settle()
            fn(1)
            acc.append(fn(iters) / iters)
    return gt, ot


def run_worker(spec: dict[str, Any]) -> dict[str, Any]:
    """Times every shape of ``spec`` on this process's ISA path; returns the results."""
    import torch

    threads = spec["threads"]
    torch.set_num_threads(threads)
    lib = load_library()
    lib.gpuopt_kb_set_num_threads(threads)
    isa = lib.gpuopt_kb_kernel_isa()
    deadline = time.monotonic() + spec["budget_s"]
    results = []
    for i, e in enumerate(spec["shapes"]):
        entry = ShapeEntry(_shape_from(e["shape"]), e["counts"], e["offsets_h"], e["offsets_w"])
        row: dict[str, Any] = {"key": entry.shape.key()}
        results.append(row)
        if not entry.shape.gpuopt_kernel():
            row["status"] = "linalg (no kernel)"
            continue
        if time.monotonic() > deadline:
            row["status"] = "skipped (budget)"
            continue
        try:
            p = prepare(lib, entry, seed=spec["seed"] + i)
            err = rel_l2(p.gpuopt_out, p.onednn_out())
            row.update(rel_l2=err, torch_backend=p.torch_backend)
            if not np.isfinite(err) or err > spec["tol"]:
                row["status"] = "MISMATCH"
                continue
            gt, ot = measure(p, spec["runs"], spec["rep_s"])
        except Exception as ex:  # noqa: BLE001 - one broken shape is reported, the rest still measured
            row["status"] = f"error: {str(ex).splitlines()[0] if str(ex) else type(ex).__name__}"
            continue
        g, o = float(np.median(gt)), float(np.median(ot))
        row.update(
            status="ok",
            gpuopt_ms=g * 1e3,
            onednn_ms=o * 1e3,
            gpuopt_times_ms=[t * 1e3 for t in gt],
            onednn_times_ms=[t * 1e3 for t in ot],
        )
        print(
            f"kernelbench: [{spec['isa']}] {row['key']}: gpuopt {g * 1e3:.3f} ms, oneDNN {o * 1e3:.3f} ms",
            file=sys.stderr,
            flush=True,
        )
    return {"kernel_isa": isa.decode() if isa else None, "shapes": results}


def _shape_from(d: dict[str, Any]) -> Shape:
    return Shape(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})


# ----------------------------------------------------------------------------
# Machine, peaks, the table
# ----------------------------------------------------------------------------


def cpu_info() -> dict[str, Any]:
    """lscpu's model name and the ISA flags that matter here."""
    model, flags = "unknown", set()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False, timeout=10).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    wanted = ("fma", "avx2", "avx512f", "avx512vl", "avx512bw", "avx512_vnni", "avx512_bf16")
    return {"model_name": model, "flags": [f for f in wanted if f in flags], "cores": os.cpu_count()}


def supported_isas(flags: Sequence[str]) -> list[str]:
    return [isa for isa in ISAS if all(f in flags for f in ISA_FLAGS[isa])]


def onednn_version() -> str | None:
    import torch

    m = re.search(r"(?:MKL-DNN|oneDNN)\s+v([\d.]+)", torch.__config__.show())
    return m.group(1) if m else None


def summarize(entries: list[ShapeEntry], run: dict[str, Any]) -> dict[str, Any]:
    """Per model: share of its conv/linear kernel time (gpuopt's) in each shape class, and the slow part."""
    by_key = {r["key"]: r for r in run["shapes"]}
    models = sorted({m for e in entries for m in e.counts})
    out: dict[str, Any] = {}
    for model in models:
        total = 0.0
        classes: dict[str, dict[str, float]] = {}
        for e in entries:
            r = by_key.get(e.shape.key(), {})
            cnt = e.counts.get(model, 0)
            if not cnt or r.get("status") != "ok":
                continue
            g, o = cnt * r["gpuopt_ms"], cnt * r["onednn_ms"]
            total += g
            c = classes.setdefault(e.shape.shape_class(), {"gpuopt_ms": 0.0, "onednn_ms": 0.0, "ops": 0})
            c["gpuopt_ms"] += g
            c["onednn_ms"] += o
            c["ops"] += cnt
        for c in classes.values():
            c["ratio"] = c["onednn_ms"] / c["gpuopt_ms"] if c["gpuopt_ms"] else None
            c["share"] = c["gpuopt_ms"] / total if total else None
        slow = sum(
            c["gpuopt_ms"] for c in classes.values() if c["ratio"] is not None and c["ratio"] < SLOW_RATIO
        )
        out[model] = {
            "kernel_ms": total,
            "onednn_ms": sum(c["onednn_ms"] for c in classes.values()),
            "classes": classes,
            "slow_share": slow / total if total else None,
        }
    return out


def format_run(
    entries: list[ShapeEntry], run: dict[str, Any], peak: float | None, models: Sequence[str]
) -> str:
    """The table of one ISA path."""
    abbrev = {m: "".join(p[0] for p in m.split("_")) for m in models}
    by_key = {r["key"]: r for r in run["shapes"]}
    lines = [
        f"ISA path {run['isa']} (kernels report: {run['kernel_isa'] or 'dispatched'}; "
        f"oneDNN cap {run['onednn_max_isa'] or 'none'}); FMA peak "
        + (f"{peak:.1f} GFLOP/s" if peak else "n/a"),
        "| shape | count ("
        + ",".join(abbrev.values())
        + ") | GFLOP | gpuopt ms | GFLOP/s | % peak | oneDNN ms "
        "| oneDNN GFLOP/s | gpuopt/oneDNN |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in sorted(entries, key=lambda e: -e.shape.flops() * sum(e.counts.values())):
        r = by_key.get(e.shape.key(), {})
        counts = ",".join(str(e.counts.get(m, 0)) for m in models)
        gf = e.shape.flops() / 1e9
        if r.get("status") != "ok":
            lines.append(f"| {e.shape.key()} | {counts} | {gf:.3f} | {r.get('status', '-')} | | | | | |")
            continue
        g, o = r["gpuopt_ms"], r["onednn_ms"]
        ratio = o / g
        flag = " **<0.9**" if ratio < SLOW_RATIO else ""
        pct = f"{100 * gf / (g / 1e3) / peak:.0f}%" if peak else "-"
        lines.append(
            f"| {e.shape.key()} | {counts} | {gf:.3f} | {g:.3f} | {gf / (g / 1e3):.1f} | {pct} | {o:.3f} "
            f"| {gf / (o / 1e3):.1f} | {ratio:.2f}×{flag} |"
        )
    lines.append("")
    lines.append("| model | class | ops | share of conv/linear time | gpuopt/oneDNN |")
    lines.append("|---|---|---|---|---|")
    for model, s in run["summary"].items():
        for cls, c in sorted(s["classes"].items(), key=lambda kv: -kv[1]["gpuopt_ms"]):
            ratio = c["ratio"]
            flag = " **<0.9**" if ratio is not None and ratio < SLOW_RATIO else ""
            lines.append(
                f"| {model} | {cls} | {c['ops']} | {100 * (c['share'] or 0):.1f}% | "
                + (f"{ratio:.2f}×{flag}" if ratio else "-")
                + " |"
            )
        if s["slow_share"] is not None:
            lines.append(
                f"| {model} | **all classes < 0.9×** | | {100 * s['slow_share']:.1f}% | "
                f"{s['onednn_ms'] / s['kernel_ms']:.2f}× overall |"
            )
    return "\n".join(lines)


# ----------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------


def _log(msg: str) -> None:
    print(f"kernelbench: {msg}", file=sys.stderr, flush=True)


def parse_list(text: str, allowed: Sequence[str], what: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise KernelBenchError(f"--{what} is empty")
    bad = [t for t in items if t not in allowed]
    if bad:
        raise KernelBenchError(f"unknown {what} '{bad[0]}'; choose from {', '.join(allowed)}")
    return items


def run_isa(isa: str, spec: dict[str, Any], honoured: bool) -> dict[str, Any]:
    """Runs the worker in a fresh process with the ISA forced; returns its results."""
    env = dict(os.environ)
    env["GPUOPT_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(spec["threads"])
    cap = ONEDNN_CAP[isa] if honoured else None
    if honoured:
        env["GPUOPT_CPU_ISA"] = isa
    if cap:
        env["ONEDNN_MAX_CPU_ISA"] = cap
    with tempfile.TemporaryDirectory(prefix="gpuopt-kernelbench-") as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec_path.write_text(json.dumps({**spec, "isa": isa if honoured else "dispatched"}))
        cmd = [sys.executable, "-m", "gpuopt.kernelbench", "--worker", str(spec_path), str(out_path)]
        proc = subprocess.run(cmd, env=env, check=False, stdout=subprocess.DEVNULL)
        if proc.returncode != 0 or not out_path.exists():
            raise RuntimeError(f"the {isa} worker exited with {proc.returncode}")
        result = json.loads(out_path.read_text())
    return {"isa": isa if honoured else "dispatched", "onednn_max_isa": cap, **result}


def kernel_isa_reported() -> bool:
    """Whether the kernels library says which ISA path it dispatched (then GPUOPT_CPU_ISA is honoured)."""
    return load_library().gpuopt_kb_kernel_isa() is not None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        spec = json.loads(Path(argv[1]).read_text())
        Path(argv[2]).write_text(json.dumps(run_worker(spec)))
        return 0
    parser = argparse.ArgumentParser(
        prog="python -m gpuopt.kernelbench", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--models", default="all", help="comma-separated zoo models, or all (the default)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--isa", help=f"comma-separated subset of {','.join(ISAS)} (default: all this CPU runs)"
    )
    parser.add_argument("--runs", type=int, default=10, help="interleaved repetitions per shape")
    parser.add_argument("--rep-ms", type=float, default=20.0, help="length of one repetition (calls batched)")
    parser.add_argument("--budget-s", type=float, default=900.0, help="timing budget per ISA path")
    parser.add_argument("--input-size", type=int, default=224, help="H = W of the models' input")
    parser.add_argument("--max-shapes", type=int, help="time only the N largest shapes (smoke runs)")
    parser.add_argument(
        "--tol", type=float, default=1e-4, help="largest relative L2 between gpuopt and oneDNN"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write every number here")
    args = parser.parse_args(argv)
    from gpuopt import models as zoo

    info = cpu_info()
    try:
        names = zoo.names() if args.models == "all" else parse_list(args.models, zoo.names(), "models")
        supported = supported_isas(info["flags"])
        isas = parse_list(args.isa, ISAS, "isa") if args.isa else supported
        lacking = [i for i in isas if i not in supported]
        if lacking:
            need = " ".join(ISA_FLAGS[lacking[0]])
            raise KernelBenchError(
                f"this CPU ({info['model_name']}) cannot run ISA path {lacking[0]} (needs {need})"
            )
        if args.threads < 1 or args.runs < 1 or args.input_size < 8 or args.budget_s <= 0:
            raise KernelBenchError("--threads and --runs must be >= 1, --input-size >= 8, --budget-s > 0")
        if args.max_shapes is not None and args.max_shapes < 1:
            raise KernelBenchError("--max-shapes must be >= 1")
    except KernelBenchError as e:
        print(f"kernelbench: error: {e}", file=sys.stderr)
        return 2

    import torch

    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    _log(f"{info['model_name']} ({' '.join(info['flags'])}), {args.threads} thread(s), {date}")
    entries = collect_shapes(names, args.input_size, _log)
    entries.sort(key=lambda e: -e.shape.flops() * sum(e.counts.values()))
    if args.max_shapes:
        entries = entries[: args.max_shapes]
    lib = load_library()
    peaks = {isa: lib.gpuopt_kb_fma_peak(isa.encode(), args.threads, 0.2, 5) for isa in isas}
    for isa, p in peaks.items():
        _log(f"FMA peak {isa} on {args.threads} thread(s): {p:.1f} GFLOP/s")
    honoured = kernel_isa_reported()
    if not honoured:
        _log(
            "the kernels do not report their ISA path (GPUOPT_CPU_ISA not known to be honoured): one run, 'dispatched'"
        )
    spec = {
        "threads": args.threads,
        "runs": args.runs,
        "rep_s": args.rep_ms / 1e3,
        "budget_s": args.budget_s,
        "tol": args.tol,
        "seed": args.seed,
        "shapes": [
            {"shape": asdict(e.shape), "counts": e.counts, "offsets_h": e.offsets_h, "offsets_w": e.offsets_w}
            for e in entries
        ],
    }
    runs = []
    for isa in isas if honoured else [supported[0] if supported else "generic"]:
        run = run_isa(isa, spec, honoured)
        run["summary"] = summarize(entries, run)
        # 'dispatched' is compared with the best peak (what the dispatcher picks).
        run["fma_peak_gflops"] = peaks.get(isa) if honoured else max(peaks.values(), default=None)
        runs.append(run)
        print(format_run(entries, run, run["fma_peak_gflops"], names), flush=True)
        print(flush=True)
    record = {
        "date": date,
        "command": "python -m gpuopt.kernelbench " + " ".join(argv),
        "machine": {**info, "threads": args.threads, "load_average": list(os.getloadavg())},
        "versions": {
            "torch": torch.__version__,
            "onednn": onednn_version(),
            "mkldnn_available": bool(torch.backends.mkldnn.is_available()),
            "gpuopt_commit": subprocess.run(
                ["git", "-C", str(REPO_ROOT), "describe", "--always", "--dirty"],
                capture_output=True,
                text=True,
                check=False,
            ).stdout.strip()
            or None,
        },
        "input_size": args.input_size,
        "models": names,
        "fma_peak_gflops": peaks,
        "shapes": [
            {
                "key": e.shape.key(),
                "class": e.shape.shape_class(),
                "shape": asdict(e.shape),
                "counts": e.counts,
                "gflop": e.shape.flops() / 1e9,
                "gpuopt_kernel": e.shape.gpuopt_kernel(),
            }
            for e in entries
        ],
        "runs": runs,
    }
    if args.json:
        write_text(args.json, json.dumps(record, indent=1))
        _log(f"wrote {args.json}")
    bad = [
        r
        for run in runs
        for r in run["shapes"]
        if r.get("status") == "MISMATCH" or str(r.get("status", "")).startswith("error")
    ]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
