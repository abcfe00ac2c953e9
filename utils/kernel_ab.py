#!/usr/bin/env python3
"""A/B of two builds of gpuopt's CPU kernels on UNet's and Rolling-UNet-S's conv/linear shapes.

    utils/kernel_ab.py BASE/libGpuoptKernelBench.so NEW/libGpuoptKernelBench.so \
        [--model unet|rolling_unet_s] [--reps 3] [--threads 1] [--shapes 0,4,8]

Both libraries are loaded into one process (RTLD_LOCAL: each calls its own
kernels) and called on the same inputs, alternating (the order flips every
repetition); the outputs must agree (relative L2 printed as ``diff``). Each
repetition is a batch of calls of ~20 ms; the minimum per call is reported.
With ``--threads 1`` (the default) the time is the calling thread's CPU time
(``time.thread_time``), which a machine shared with other jobs inflates far
less than wall time (a descheduled thread is not charged); with more threads,
wall time. ``GPUOPT_CPU_ISA`` selects the kernels' path as for any caller.
The shapes are 3x3 convolutions (bias, ReLU; pad 1, stride 1, or 2 for UNeXt's
patch embeddings: ``--model unext``), 2x2 stride-2
transposed convolutions and linear layers as the kernels see them at 224²,
one call per distinct shape (unweighted sum in ``total``).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import sys
import time

import numpy as np

P = ctypes.c_void_p
I64 = ctypes.c_int64

# (kind, c | rows, h = w | K, oc | N): c = conv 3x3, s = conv 3x3 stride 2,
# t = convT 2x2, l = linear.
SHAPES = {
    "unet": [
        ("c", 64, 224, 64),
        ("c", 128, 112, 128),
        ("c", 256, 56, 256),
        ("c", 512, 28, 512),
        ("c", 1024, 28, 512),
        ("c", 512, 56, 256),
        ("c", 256, 112, 128),
        ("c", 128, 224, 64),
        ("c", 1024, 14, 1024),
        ("c", 64, 112, 128),
        ("c", 128, 56, 256),
        ("c", 256, 28, 512),
        ("c", 512, 14, 1024),
        ("c", 3, 224, 64),
        ("t", 1024, 14, 512),
        ("t", 512, 28, 256),
        ("t", 256, 56, 128),
        ("t", 128, 112, 64),
    ],
    "rolling_unet_s": [
        ("c", 16, 224, 16),
        ("c", 32, 112, 32),
        ("c", 64, 56, 64),
        ("c", 64, 28, 128),
        ("c", 128, 14, 256),
        ("c", 256, 14, 128),
        ("c", 128, 28, 64),
        ("c", 32, 56, 64),
        ("c", 16, 112, 32),
        ("l", 784, 256, 128),
        ("l", 196, 512, 256),
        ("l", 196, 256, 512),
        ("l", 784, 128, 256),
        ("l", 3136, 64, 128),
    ],
    "unext": [
        ("s", 128, 28, 160),
        ("s", 160, 14, 256),
    ],
}


def load(path: str, threads: int) -> ctypes.CDLL:
    lib = ctypes.CDLL(path, mode=os.RTLD_LOCAL)
    lib.gpuopt_kb_conv2d.restype = ctypes.c_double
    lib.gpuopt_kb_conv2d.argtypes = [P] * 7 + [I64] * 22
    lib.gpuopt_kb_linear.restype = ctypes.c_double
    lib.gpuopt_kb_linear.argtypes = [P] * 4 + [I64] * 4
    lib.gpuopt_kb_conv_transpose2d.restype = ctypes.c_double
    lib.gpuopt_kb_conv_transpose2d.argtypes = [P] * 4 + [I64] * 10
    lib.gpuopt_kb_kernel_isa.restype = ctypes.c_char_p
    lib.gpuopt_kb_set_num_threads(threads)
    return lib


def ptr(a: np.ndarray) -> ctypes.c_void_p:
    return a.ctypes.data_as(P)


def case(libs, kind, c, hw, oc, reps, threads):
    rng = np.random.default_rng(0)
    stride = 2 if kind == "s" else 1
    if kind in ("c", "s"):
        x = rng.standard_normal((1, c, hw, hw), np.float32)
        w = (rng.standard_normal((oc, c, 3, 3), np.float32) / np.sqrt(9 * c)).astype(np.float32)
        ohw = (hw - 1) // stride + 1
        out_shape, flop = (1, oc, ohw, ohw), 2 * oc * c * 9 * ohw * ohw
    elif kind == "t":
        x = rng.standard_normal((1, c, hw, hw), np.float32)
        w = rng.standard_normal((c, oc, 2, 2), np.float32)
        out_shape, flop = (1, oc, 2 * hw, 2 * hw), 2 * oc * c * 4 * hw * hw
    else:
        x = rng.standard_normal((c, hw), np.float32)
        w = rng.standard_normal((oc, hw), np.float32)
        out_shape, flop = (c, oc), 2 * c * hw * oc
    b = rng.standard_normal(oc, np.float32)
    outs = [np.empty(out_shape, np.float32) for _ in libs]

    def call(lib, out, iters):
        if kind in ("c", "s"):
            return lib.gpuopt_kb_conv2d(
                ptr(out),
                ptr(x),
                ptr(w),
                ptr(b),
                None,
                None,
                None,
                0,
                0,
                1,
                c,
                hw,
                hw,
                oc,
                c,
                3,
                3,
                out_shape[2],
                out_shape[3],
                stride,
                stride,
                1,
                1,
                1,
                1,
                1,
                0,
                lib.gpuopt_kb_activation_code(b"relu"),
                iters,
            )
        if kind == "t":
            return lib.gpuopt_kb_conv_transpose2d(
                ptr(out), ptr(x), ptr(w), ptr(b), 1, c, hw, hw, oc, 2, 2, 2 * hw, 2 * hw, iters
            )
        return lib.gpuopt_kb_linear(ptr(out), ptr(x), ptr(w), ptr(b), c, hw, oc, iters)

    for lib, out in zip(libs, outs):
        call(lib, out, 1)
    diff = max(float(np.linalg.norm(o - outs[0]) / np.linalg.norm(outs[0])) for o in outs)
    clock = time.thread_time if threads == 1 else time.perf_counter
    iters = max(1, int(0.02 / (flop / 100e9)))
    times = [[] for _ in libs]
    for r in range(reps):
        for i in range(len(libs)) if r % 2 == 0 else reversed(range(len(libs))):
            start = clock()
            call(libs[i], outs[i], iters)
            times[i].append((clock() - start) / iters)
    return flop, [min(t) for t in times], diff


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--model", choices=sorted(SHAPES), default="unet")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--shapes", help="comma-separated indices into the model's list")
    args = parser.parse_args()
    if args.reps < 1 or args.threads < 1:
        parser.error("--reps and --threads must be positive")
    try:
        libs = [load(p, args.threads) for p in (args.base, args.new)]
    except (OSError, AttributeError) as e:
        print(f"error: cannot load a kernel bench library: {e}", file=sys.stderr)
        return 2
    only = {int(s) for s in args.shapes.split(",")} if args.shapes else None
    isa = libs[1].gpuopt_kb_kernel_isa()
    print(f"isa {isa.decode() if isa else '?'} threads {args.threads} load {os.getloadavg()[0]:.1f}")
    total = [0.0, 0.0]
    for i, (kind, c, hw, oc) in enumerate(SHAPES[args.model]):
        if only is not None and i not in only:
            continue
        flop, t, diff = case(libs, kind, c, hw, oc, args.reps, args.threads)
        total = [a + b for a, b in zip(total, t)]
        print(
            f"{i:2d} {kind} {c:5d}x{hw:3d} -> {oc:5d}: base {t[0] * 1e3:7.2f} ms {flop / t[0] / 1e9:6.1f} GF/s"
            f"  new {t[1] * 1e3:7.2f} ms {flop / t[1] / 1e9:6.1f} GF/s  new/base speed {t[0] / t[1]:5.3f}"
            f"  diff {diff:.1e}",
            flush=True,
        )
    if total[1] > 0:
        print(
            f"total base {total[0] * 1e3:.1f} ms new {total[1] * 1e3:.1f} ms speed-up {total[0] / total[1]:.3f}"
            f" load {os.getloadavg()[0]:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
