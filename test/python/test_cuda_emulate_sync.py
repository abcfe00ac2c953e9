"""Kernels whose threads communicate, emulated exactly.

The emulator runs each thread of a block of a kernel with gpu.barrier or
gpu.shuffle as a fiber: a barrier suspends it until every thread of the
block has arrived, a shuffle until every lane of its warp has; a block's
workgroup memory is NaN at its start (docs/CUDABackend.md, "Emulation on the
host"). No kernel the compiler makes synchronizes yet, so these tests take
a compiled Linear (16x24 -> 20: one launch of 2 blocks of 256 threads, one
thread per output), write its kernels (--cuda-write-kernels), replace the
kernel by a hand-written cooperative one of the same name and signature and
build the host image from it (--cuda-host-kernels): the real plan runs the
cooperative kernel, in the three orders, against PyTorch. Each kernel's
mutation that a GPU would get wrong must be caught: a missing barrier (its
reads of the workgroup tile come out NaN), a barrier only some threads reach
(a divergence error naming them), a wrong lane mask of a shuffle (a
mismatch), a shuffle only some lanes reach (an error), a read past the tile
(the out-of-bounds report names the workgroup attribution), a TF32 mma.sync
fed the wrong fragment layout (a mismatch) or run by part of a warp (an
error), a vector load off its alignment, from a kernel argument or a
workgroup attribution (reported); an asynchronous copy (cp.async) waited
for after the barrier or only in part (NaN: its destination is poisoned
until the wait), never waited for (an error) or off its alignment
(reported).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import rel_l2
from cuda_artifact import program, to_json
from test_cuda_emulate import COMPILE, CUDA_RUN, ORDERS, REL_L2, check_orders, needs_cuda_run
from torch import nn

import gpuopt
from gpuopt.compiled import CompiledModel, CompiledModelError
from gpuopt.randomize import randomize

pytestmark = needs_cuda_run

ROWS, K, N = 16, 24, 20
SIGNATURE = (
    f"(%arg0: memref<{ROWS}x{K}xf32>, %arg1: memref<{N}x{K}xf32>, "
    f"%arg2: memref<{N}xf32>, %arg3: memref<{ROWS}x{N}xf32>)"
)

# The Linear's buffers as the compiled kernel takes them: %x, %w (the
# weight, N x K), %bias, %out (its accumulator stays in registers:
# --eliminate-private-kernel-buffers). Each block stages
# the whole weight into a workgroup tile (thread t copies elements t and
# t + 256 of the 480), waits at the barrier, and thread g computes output
# (g / N, g % N) from the tile.
TILE_KERNEL = """gpu.module @kernels {
  gpu.func @NAME(%x: memref<16x24xf32>, %w: memref<20x24xf32>,
                 %bias: memref<20xf32>, %out: memref<16x20xf32>)
      workgroup(%tile: memref<20x24xf32, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c20 = arith.constant 20 : index
    %c24 = arith.constant 24 : index
    %c256 = arith.constant 256 : index
    %c320 = arith.constant 320 : index
    %c480 = arith.constant 480 : index
    %zero = arith.constant 0.0 : f32
    %b = gpu.block_id x
    %t = gpu.thread_id x
    scf.for %s = %c0 to %c480 step %c256 {
      %e = arith.addi %t, %s : index
      %in = arith.cmpi ult, %e, %c480 : index
      scf.if %in {
        %r = arith.divui %e, %c24 : index
        %k = arith.remui %e, %c24 : index
        %v = memref.load %w[%r, %k] : memref<20x24xf32>
        memref.store %v, %tile[%r, %k] : memref<20x24xf32, #gpu.address_space<workgroup>>
      }
    }
    gpu.barrier // STAGED
    %base = arith.muli %b, %c256 : index
    %g = arith.addi %base, %t : index
    %live = arith.cmpi ult, %g, %c320 : index
    scf.if %live {
      // INSIDE
      %j = arith.remui %g, %c20 : index
      %i = arith.divui %g, %c20 : index
      %sum = scf.for %k = %c0 to %c24 step %c1 iter_args(%a = %zero) -> (f32) { // REDUCTION
        %wv = memref.load %tile[%j, %k] : memref<20x24xf32, #gpu.address_space<workgroup>>
        %xv = memref.load %x[%i, %k] : memref<16x24xf32>
        %m = arith.mulf %xv, %wv : f32
        %n = arith.addf %a, %m : f32
        scf.yield %n : f32
      }
      %bv = memref.load %bias[%j] : memref<20xf32>
      %y = arith.addf %sum, %bv : f32
      memref.store %y, %out[%i, %j] : memref<16x20xf32>
    }
    gpu.return
  }
}
"""

# Warp-cooperative: the 32 lanes of a warp compute its 32 outputs one after
# another, lane l multiplying element l of the row of x and of w (K = 24
# lanes, the others 0), a butterfly (xor 16, 8, 4, 2, 1) summing the
# products into every lane; lane o keeps output o's sum.
SHUFFLE_KERNEL = """gpu.module @kernels {
  gpu.func @NAME(%x: memref<16x24xf32>, %w: memref<20x24xf32>,
                 %bias: memref<20xf32>, %out: memref<16x20xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c20 = arith.constant 20 : index
    %c24 = arith.constant 24 : index
    %c32 = arith.constant 32 : index
    %c256 = arith.constant 256 : index
    %c320 = arith.constant 320 : index
    %zero = arith.constant 0.0 : f32
    %m16 = arith.constant 16 : i32 // MASK16
    %m8 = arith.constant 8 : i32
    %m4 = arith.constant 4 : i32
    %m2 = arith.constant 2 : i32
    %m1 = arith.constant 1 : i32
    %width = arith.constant 32 : i32
    %b = gpu.block_id x
    %t = gpu.thread_id x
    %lane = gpu.lane_id
    %base = arith.muli %b, %c256 : index
    %g = arith.addi %base, %t : index
    %first = arith.subi %g, %lane : index
    %kin = arith.cmpi ult, %lane, %c24 : index
    %res = scf.for %o = %c0 to %c32 step %c1 iter_args(%acc_o = %zero) -> (f32) {
      %go = arith.addi %first, %o : index
      %inside = arith.cmpi ult, %go, %c320 : index
      %ok = arith.andi %inside, %kin : i1
      %p = scf.if %ok -> (f32) {
        %i = arith.divui %go, %c20 : index
        %j = arith.remui %go, %c20 : index
        %xv = memref.load %x[%i, %lane] : memref<16x24xf32>
        %wv = memref.load %w[%j, %lane] : memref<20x24xf32>
        %pr = arith.mulf %xv, %wv : f32
        scf.yield %pr : f32
      } else {
        scf.yield %zero : f32
      }
      %s16, %v16 = gpu.shuffle xor %p, %m16, %width : f32 // SHUFFLE16
      %p16 = arith.addf %p, %s16 : f32
      %s8, %v8 = gpu.shuffle xor %p16, %m8, %width : f32
      %p8 = arith.addf %p16, %s8 : f32
      %s4, %v4 = gpu.shuffle xor %p8, %m4, %width : f32
      %p4 = arith.addf %p8, %s4 : f32
      %s2, %v2 = gpu.shuffle xor %p4, %m2, %width : f32
      %p2 = arith.addf %p4, %s2 : f32
      %s1, %v1 = gpu.shuffle xor %p2, %m1, %width : f32
      %p1 = arith.addf %p2, %s1 : f32
      %mine = arith.cmpi eq, %o, %lane : index
      %next = arith.select %mine, %p1, %acc_o : f32
      scf.yield %next : f32
    }
    %live = arith.cmpi ult, %g, %c320 : index
    scf.if %live {
      %j = arith.remui %g, %c20 : index
      %i = arith.divui %g, %c20 : index
      %bv = memref.load %bias[%j] : memref<20xf32>
      %y = arith.addf %res, %bv : f32
      memref.store %y, %out[%i, %j] : memref<16x20xf32>
    }
    gpu.return
  }
}
"""


# Tensor cores: warps 0..2 of block 0 each compute an 8-column tile of the
# 16 x 20 output (the third one's last 4 columns masked) with three TF32
# nvgpu.mma.sync m16n8k8 over K = 24, lane l (g = l / 4, t = l % 4) loading
# its fragments in PTX's layout (CudaArtifact.h, kCudaMma*): A = x (row
# major) at [g][t], [g+8][t], [g][t+4], [g+8][t+4]; B = w^T at [t][g],
# [t+4][g] (w[n0+g][k0+t], w[n0+g][k0+t+4]); D at [g][2t], [g][2t+1],
# [g+8][2t], [g+8][2t+1]. The other warps do nothing.
MMA_KERNEL = """gpu.module @kernels {
  gpu.func @NAME(%x: memref<16x24xf32>, %w: memref<20x24xf32>,
                 %bias: memref<20xf32>, %out: memref<16x20xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c20 = arith.constant 20 : index
    %c24 = arith.constant 24 : index
    %zero = arith.constant 0.0 : f32
    %b = gpu.block_id x
    %tid = gpu.thread_id x
    %c32 = arith.constant 32 : index
    %warp = arith.divui %tid, %c32 : index
    %lane = arith.remui %tid, %c32 : index
    %isb0 = arith.cmpi eq, %b, %c0 : index
    %few = arith.cmpi ult, %warp, %c3 : index
    %mine = arith.andi %isb0, %few : i1
    scf.if %mine {
      %g = arith.divui %lane, %c4 : index
      %t = arith.remui %lane, %c4 : index
      %g8 = arith.addi %g, %c8 : index
      %n0 = arith.muli %warp, %c8 : index
      %ng = arith.addi %n0, %g : index
      %nin = arith.cmpi ult, %ng, %c20 : index
      %acc0 = vector.broadcast %zero : f32 to vector<2x2xf32>
      %acc = scf.for %k0 = %c0 to %c24 step %c8 iter_args(%c = %acc0) -> (vector<2x2xf32>) {
        %kt = arith.addi %k0, %t : index
        %kt4 = arith.addi %kt, %c4 : index
        %a0 = memref.load %x[%g, %kt] : memref<16x24xf32>
        %a1 = memref.load %x[%g8, %kt] : memref<16x24xf32>
        %a2 = memref.load %x[%g, %kt4] : memref<16x24xf32>
        %a3 = memref.load %x[%g8, %kt4] : memref<16x24xf32>
        %av = vector.from_elements %a0, %a1, %a2, %a3 : vector<4x1xf32>
        %bv = scf.if %nin -> (vector<2x1xf32>) {
          %b0 = memref.load %w[%ng, %kt] : memref<20x24xf32>
          %b1 = memref.load %w[%ng, %kt4] : memref<20x24xf32>
          %v = vector.from_elements %b0, %b1 : vector<2x1xf32>
          scf.yield %v : vector<2x1xf32>
        } else {
          %v = vector.broadcast %zero : f32 to vector<2x1xf32>
          scf.yield %v : vector<2x1xf32>
        }
        %d = nvgpu.mma.sync (%av, %bv, %c) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
        scf.yield %d : vector<2x2xf32>
      }
      %t2 = arith.muli %t, %c2 : index
      %col0 = arith.addi %n0, %t2 : index
      %col1 = arith.addi %col0, %c1 : index
      %in0 = arith.cmpi ult, %col0, %c20 : index
      %in1 = arith.cmpi ult, %col1, %c20 : index
      %d00 = vector.extract %acc[0, 0] : f32 from vector<2x2xf32>
      %d01 = vector.extract %acc[0, 1] : f32 from vector<2x2xf32>
      %d10 = vector.extract %acc[1, 0] : f32 from vector<2x2xf32>
      %d11 = vector.extract %acc[1, 1] : f32 from vector<2x2xf32>
      scf.if %in0 {
        %bb = memref.load %bias[%col0] : memref<20xf32>
        %y0 = arith.addf %d00, %bb : f32
        memref.store %y0, %out[%g, %col0] : memref<16x20xf32>
        %y1 = arith.addf %d10, %bb : f32
        memref.store %y1, %out[%g8, %col0] : memref<16x20xf32>
      }
      scf.if %in1 {
        %bb = memref.load %bias[%col1] : memref<20xf32>
        %y0 = arith.addf %d01, %bb : f32
        memref.store %y0, %out[%g, %col1] : memref<16x20xf32>
        %y1 = arith.addf %d11, %bb : f32
        memref.store %y1, %out[%g8, %col1] : memref<16x20xf32>
      }
    }
    gpu.return
  }
}
"""


class Linear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(K, N)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


@pytest.fixture(scope="module")
def linear(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    d = tmp_path_factory.mktemp("sync")
    model = randomize(Linear().eval(), seed=5)
    x = torch.randn(ROWS, K, generator=torch.Generator().manual_seed(6))
    gpuopt.export(model, (x,), d / "m.mlir", d / "m.safetensors")
    np.save(d / "x.npy", x.numpy())
    with torch.no_grad():
        expected = model(x).numpy()
    kernels = d / "kernels.mlir"
    compile_with(d, d / "compiled.gpuopt", f"--cuda-write-kernels={kernels}")
    text = kernels.read_text()
    name = re.findall(r"gpu\.func @(\w+)" + re.escape(SIGNATURE) + " kernel", text)
    assert len(name) == 1 and text.count("gpu.func") == 1, (
        f"expected the Linear to be one kernel {SIGNATURE}; the kernels are:\n{text}"
    )
    return {"dir": d, "expected": expected, "name": name[0], "x": x.numpy()}


def compile_with(d: Path, out: Path, *extra: object) -> Path:
    """The Linear compiled one output per thread (--cuda-register-tile=1):
    the hand-written kernels replace its kernel under that launch (2 blocks
    of 256 threads for the 320 outputs)."""
    proc = subprocess.run(
        [
            COMPILE,
            d / "m.mlir",
            "--target=cuda",
            "--cuda-format=ptx",
            "--cuda-host-image",
            "--cuda-register-tile=1",
            "--cuda-workgroup-tile=false",
            *extra,
            "-o",
            out,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def with_kernel(linear: dict, label: str, kernel: str, *edits: tuple[str, str]) -> Path:
    """The Linear's artifact whose host image is built from `kernel` (with
    `edits`, each an exact replacement of one occurrence, applied)."""
    d: Path = linear["dir"]
    text = kernel.replace("@NAME", "@" + linear["name"])
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    source = d / f"{label}.mlir"
    source.write_text(text)
    artifact = compile_with(d, d / f"{label}.gpuopt", f"--cuda-host-kernels={source}")
    prog = program(to_json(artifact))
    assert len(prog["run"]) == 1, prog["run"]
    step = prog["run"][0]
    assert (step["grid"]["x"], step["block"]["x"]) == (2, 256), step
    return artifact


def run_emulated(linear: dict, artifact: Path, order: str) -> subprocess.CompletedProcess:
    d: Path = linear["dir"]
    return subprocess.run(
        [
            CUDA_RUN,
            artifact,
            f"--emulate={order}",
            f"--weights={d / 'm.safetensors'}",
            f"--input=@{d / 'x.npy'}",
            f"--output=@{d / 'y.npy'}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def failure(linear: dict, artifact: Path, order: str) -> str:
    """The error line of an emulation that must fail (exit 1)."""
    proc = run_emulated(linear, artifact, order)
    assert proc.returncode == 1, proc.stderr
    line = proc.stderr.splitlines()[-1]
    prefix = f"gpuopt-cuda-run: error: run[0] (kernel '{linear['name']}'"
    assert line.startswith(prefix), line
    return line


def output(linear: dict, artifact: Path, order: str) -> np.ndarray:
    proc = run_emulated(linear, artifact, order)
    assert proc.returncode == 0, proc.stderr
    return np.load(linear["dir"] / "y.npy")


def test_workgroup_tile_with_barrier(linear: dict) -> None:
    artifact = with_kernel(linear, "tile", TILE_KERNEL)
    d: Path = linear["dir"]
    check_orders(artifact, d / "m.safetensors", [d / "x.npy"], linear["expected"], "tiled Linear")
    # Through the API too.
    with CompiledModel(artifact, d / "m.safetensors", device="emulate") as compiled:
        got = compiled.run(linear["x"])[0]
    assert rel_l2(got, linear["expected"]) <= REL_L2


def test_missing_barrier_reads_nan(linear: dict) -> None:
    """Without the barrier a thread reads tile elements other threads have
    not written yet: NaN in every order (the tile is NaN at each block's
    start)."""
    artifact = with_kernel(linear, "no-barrier", TILE_KERNEL, ("gpu.barrier // STAGED", ""))
    for order in ORDERS:
        y = output(linear, artifact, order)
        assert np.isnan(y).any(), f"{order}: the missing barrier went unnoticed"


def test_divergent_barrier_is_an_error(linear: dict) -> None:
    """The barrier inside `if g < 320`: in block 1 threads 0..63 wait at it
    while threads 64..255 return (undefined in CUDA, a hang or worse)."""
    artifact = with_kernel(
        linear, "divergent", TILE_KERNEL, ("gpu.barrier // STAGED", ""), ("// INSIDE", "gpu.barrier")
    )
    tail = (
        ": in block (1,0,0), barrier divergence (undefined in CUDA): threads (0,0,0), (1,0,0), (2,0,0) and "
        "61 more wait at gpu.barrier #0 of the kernel, while threads (64,0,0), (65,0,0), (66,0,0) and 189 more "
        "have returned"
    )
    for order in ("forward", "reversed"):
        line = failure(linear, artifact, order)
        assert line.endswith(tail), line
    with (
        CompiledModel(artifact, linear["dir"] / "m.safetensors", device="emulate") as compiled,
        pytest.raises(CompiledModelError) as e,
    ):
        compiled.run(linear["x"])
    assert str(e.value).endswith(tail), str(e.value)


def test_tile_read_past_its_row_is_reported(linear: dict) -> None:
    """The reduction runs to k = 24 inclusive: thread (0,0,0) of block 0
    reads tile[0, 24], element 24 of the 480 but outside its row; each of
    the 320 live threads reads one tile and one x element out of bounds."""
    artifact = with_kernel(
        linear,
        "past-row",
        TILE_KERNEL,
        ("scf.for %k = %c0 to %c24 step %c1 iter_args", "scf.for %k = %c0 to %c25 step %c1 iter_args"),
        (
            "%c24 = arith.constant 24 : index",
            "%c24 = arith.constant 24 : index\n    %c25 = arith.constant 25 : index",
        ),
    )
    line = failure(linear, artifact, "forward")
    assert line.endswith(
        ": thread (0,0,0) of block (0,0,0) loads out of bounds of workgroup attribution 0 of the kernel: "
        f"element 24 of 480 (index [0, 24] of shape [20, 24]); {2 * ROWS * N} out-of-bounds accesses in the launch"
    ), line


# The staging of TILE_KERNEL with 16-byte vector loads: thread t < 120
# loads weight elements 4t .. 4t + 3 (a row of 24 holds 6 vectors) with one
# aligned vector.load and stores them into the tile.
VECTOR_STAGING = (
    TILE_KERNEL[TILE_KERNEL.index("    scf.for %s") : TILE_KERNEL.index("\n    gpu.barrier // STAGED")],
    """    %c4 = arith.constant 4 : index
    %c120 = arith.constant 120 : index
    %vin = arith.cmpi ult, %t, %c120 : index
    scf.if %vin {
      %e = arith.muli %t, %c4 : index // VECTOR
      %r = arith.divui %e, %c24 : index
      %k = arith.remui %e, %c24 : index
      %v = vector.load %w[%r, %k] {alignment = 16 : i64} : memref<20x24xf32>, vector<4xf32>
      scf.for %j = %c0 to %c4 step %c1 {
        %kj = arith.addi %k, %j : index
        %vj = vector.extract %v[%j] : f32 from vector<4xf32>
        memref.store %vj, %tile[%r, %kj] : memref<20x24xf32, #gpu.address_space<workgroup>>
      }
    }""",
)


def test_vector_load_staging(linear: dict) -> None:
    """The tile staged with aligned 16-byte vector loads (as the workgroup
    tiles stage their weights) computes the Linear."""
    artifact = with_kernel(linear, "vector", TILE_KERNEL, VECTOR_STAGING)
    d: Path = linear["dir"]
    check_orders(artifact, d / "m.safetensors", [d / "x.npy"], linear["expected"], "vector-staged Linear")


def test_misaligned_vector_load_is_reported(linear: dict) -> None:
    """Each vector one element later: 4 bytes past a 16-byte boundary, which
    faults on a GPU; the emulator reports the first and counts all 240
    (120 threads, 2 blocks), and the 40 tile stores past a row's end of
    the last vector of each row (k = 21 .. 24)."""
    artifact = with_kernel(
        linear,
        "misaligned",
        TILE_KERNEL,
        VECTOR_STAGING,
        (
            "%e = arith.muli %t, %c4 : index // VECTOR",
            "%e4 = arith.muli %t, %c4 : index\n      %e = arith.addi %e4, %c1 : index",
        ),
    )
    line = failure(linear, artifact, "forward")
    assert re.search(
        r": thread \(0,0,0\) of block \(0,0,0\) loads a vector misaligned for its alignment of 16 bytes from "
        r"argument 1, .*: at element 1 \(index \[0, 1\] of shape \[20, 24\]\); 280 misaligned or "
        r"out-of-bounds accesses in the launch$",
        line,
    ), line


# The reduction of TILE_KERNEL reading the tile 4 elements at a time with
# 16-byte vector loads from workgroup memory (as the workgroup tiles read
# their operand tiles): the attribution carries llvm.align = 16, its rows of
# 24 words keep each vector aligned, and the 4 terms are added in k order.
VECTOR_READS = (
    (
        "workgroup(%tile: memref<20x24xf32, #gpu.address_space<workgroup>>)",
        "workgroup(%tile: memref<20x24xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})",
    ),
    (
        TILE_KERNEL[
            TILE_KERNEL.index("      %sum = scf.for %k") : TILE_KERNEL.index("\n      %bv = memref.load")
        ],
        """      %c4 = arith.constant 4 : index
      %sum = scf.for %k = %c0 to %c24 step %c4 iter_args(%a = %zero) -> (f32) {
        %k0 = arith.addi %k, %c0 : index // FIRST
        %wv = vector.load %tile[%j, %k0] {alignment = 16 : i64} : memref<20x24xf32, #gpu.address_space<workgroup>>, vector<4xf32>
        %s4 = scf.for %e = %c0 to %c4 step %c1 iter_args(%b4 = %a) -> (f32) {
          %ke = arith.addi %k, %e : index
          %we = vector.extract %wv[%e] : f32 from vector<4xf32>
          %xv = memref.load %x[%i, %ke] : memref<16x24xf32>
          %m = arith.mulf %xv, %we : f32
          %n = arith.addf %b4, %m : f32
          scf.yield %n : f32
        }
        scf.yield %s4 : f32
      }""",
    ),
)


def test_workgroup_vector_reads(linear: dict) -> None:
    """The tile read as aligned 16-byte vectors from workgroup memory
    computes the Linear in every order."""
    artifact = with_kernel(linear, "wg-vector", TILE_KERNEL, *VECTOR_READS)
    d: Path = linear["dir"]
    check_orders(artifact, d / "m.safetensors", [d / "x.npy"], linear["expected"], "vector-read Linear")


def test_misaligned_workgroup_vector_read_is_reported(linear: dict) -> None:
    """Each vector read one element later (4 bytes past a 16-byte boundary
    of the attribution, which faults on a GPU) is reported, naming the
    workgroup attribution; the last vector of each output's row also reads
    past the tile (6 reads per output, 320 outputs)."""
    artifact = with_kernel(
        linear,
        "wg-misaligned",
        TILE_KERNEL,
        *VECTOR_READS,
        ("%k0 = arith.addi %k, %c0 : index // FIRST", "%k0 = arith.addi %k, %c1 : index"),
    )
    line = failure(linear, artifact, "forward")
    assert re.search(
        r": thread \(0,0,0\) of block \(0,0,0\) loads a vector misaligned for its alignment of 16 bytes from "
        r"workgroup attribution 0 of the kernel: at element 1 \(index \[0, 1\] of shape \[20, 24\]\); "
        r"[0-9]+ misaligned or out-of-bounds accesses in the launch$",
        line,
    ), line


def test_warp_shuffle_reduction(linear: dict) -> None:
    artifact = with_kernel(linear, "shuffle", SHUFFLE_KERNEL)
    d: Path = linear["dir"]
    check_orders(artifact, d / "m.safetensors", [d / "x.npy"], linear["expected"], "warp-shuffle Linear")


def test_wrong_lane_mask_is_a_mismatch(linear: dict) -> None:
    """xor 15 instead of 16: the butterfly sums the wrong lanes."""
    artifact = with_kernel(
        linear, "mask15", SHUFFLE_KERNEL, ("%m16 = arith.constant 16 : i32", "%m16 = arith.constant 15 : i32")
    )
    for order in ORDERS:
        y = output(linear, artifact, order)
        assert not np.isnan(y).any()
        err = rel_l2(y, linear["expected"])
        assert err > REL_L2, f"{order}: the wrong lane mask went unnoticed (relative L2 error {err:.3e})"


def test_shuffle_of_a_returned_lane_is_an_error(linear: dict) -> None:
    """The butterfly only in lanes 0..23 (inside `if lane < 24`): lanes
    24..31 skip every shuffle and return while the others wait at the
    first, where lane 8 reads lane 24 (8 xor 16)."""
    start = "      %s16, %v16 = gpu.shuffle xor %p, %m16, %width : f32 // SHUFFLE16\n"
    end = "      %p1 = arith.addf %p2, %s1 : f32\n"
    body = SHUFFLE_KERNEL[SHUFFLE_KERNEL.index(start) : SHUFFLE_KERNEL.index(end) + len(end)]
    guarded = (
        "      %q1 = scf.if %kin -> (f32) {\n"
        + body.replace("      ", "        ")
        + "        scf.yield %p1 : f32\n      } else {\n        scf.yield %zero : f32\n      }\n"
    )
    artifact = with_kernel(
        linear,
        "returned-lane",
        SHUFFLE_KERNEL,
        (body, guarded),
        ("arith.select %mine, %p1, %acc_o", "arith.select %mine, %q1, %acc_o"),
    )
    for order in ORDERS:
        line = failure(linear, artifact, order)
        assert re.search(
            r": in block \([01],0,0\), warp 0: lane 8 \(thread \(8,0,0\)\) reads lane 24 in gpu.shuffle #0, "
            r"which has returned or is elsewhere \(undefined in CUDA\)$",
            line,
        ), line


def test_divergent_shuffle_is_an_error(linear: dict) -> None:
    """Only the first shuffle inside `if lane < 24`: lanes 24..31 go on to
    the second while lanes 0..23 wait at the first."""
    artifact = with_kernel(
        linear,
        "divergent-shuffle",
        SHUFFLE_KERNEL,
        (
            "      %s16, %v16 = gpu.shuffle xor %p, %m16, %width : f32 // SHUFFLE16\n",
            (
                "      %s16 = scf.if %kin -> (f32) {\n"
                "        %r16, %v16 = gpu.shuffle xor %p, %m16, %width : f32\n"
                "        scf.yield %r16 : f32\n"
                "      } else {\n"
                "        scf.yield %zero : f32\n"
                "      }\n"
            ),
        ),
    )
    for order in ORDERS:
        line = failure(linear, artifact, order)
        assert re.search(
            r": in block \([01],0,0\), warp 0: lane 24 \(thread \(24,0,0\)\) waits at gpu.shuffle #1 of width 32 "
            r"while lanes of its warp wait at gpu.shuffle #0 of width 32 \(undefined in CUDA\)$",
            line,
        ), line


# ---------------------------------------------------------------------------
# nvgpu.mma.sync (TF32 tensor cores)
# ---------------------------------------------------------------------------

TF32_REL_L2 = 5e-3  # the TF32 tolerance of issue 17 (and test_cuda_library.py)


def tf32(a: np.ndarray) -> np.ndarray:
    """FP32 values with the low 13 mantissa bits cleared: what the tensor
    cores read of an FP32 register in a .tf32 mma."""
    return (a.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def mma_k4_kernel() -> str:
    """MMA_KERNEL with m16n8k4 (6 steps of K = 4; A fragments [g][t],
    [g+8][t], B [t][g])."""
    text = MMA_KERNEL
    for old, new in (
        ("step %c8 iter_args", "step %c4 iter_args"),
        ("        %a2 = memref.load %x[%g, %kt4] : memref<16x24xf32>\n", ""),
        ("        %a3 = memref.load %x[%g8, %kt4] : memref<16x24xf32>\n", ""),
        ("          %b1 = memref.load %w[%ng, %kt4] : memref<20x24xf32>\n", ""),
        ("%a0, %a1, %a2, %a3 : vector<4x1xf32>", "%a0, %a1 : vector<2x1xf32>"),
        ("%b0, %b1 : vector<2x1xf32>", "%b0 : vector<1x1xf32>"),
        ("mmaShape = [16, 8, 8]", "mmaShape = [16, 8, 4]"),
        (
            "(vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>)",
            "(vector<2x1xf32>, vector<1x1xf32>, vector<2x2xf32>)",
        ),
    ):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    # B's branch types (the if's result, its yields and the zero fill).
    return (
        text.replace("vector<2x1xf32>) {", "vector<1x1xf32>) {")
        .replace("scf.yield %v : vector<2x1xf32>", "scf.yield %v : vector<1x1xf32>")
        .replace("%zero : f32 to vector<2x1xf32>", "%zero : f32 to vector<1x1xf32>")
    )


@pytest.mark.parametrize("shape", ["m16n8k8", "m16n8k4"])
def test_tf32_mma_sync(linear: dict, shape: str) -> None:
    kernel = MMA_KERNEL if shape == "m16n8k8" else mma_k4_kernel()
    artifact = with_kernel(linear, f"mma-{shape}", kernel)
    d: Path = linear["dir"]
    outputs = {order: output(linear, artifact, order) for order in ORDERS}
    first = outputs[ORDERS[0]]
    for order, got in outputs.items():
        assert np.array_equal(got.view(np.uint32), first.view(np.uint32)), order
    err = rel_l2(first, linear["expected"])
    assert err <= TF32_REL_L2, f"TF32 mma Linear: relative L2 error {err:.3e} vs PyTorch FP32"
    assert err > 1e-6, "the mma's operands were not rounded to TF32"
    # Exactly the TF32 product: the operands truncated, the sums in FP32.
    from safetensors.numpy import load_file

    params = load_file(d / "m.safetensors")
    w, bias = params["fc.weight"], params["fc.bias"]
    want = tf32(linear["x"]).astype(np.float64) @ tf32(w).astype(np.float64).T + bias
    assert rel_l2(first, want.astype(np.float32)) <= 1e-6


def test_wrong_fragment_layout_is_a_mismatch(linear: dict) -> None:
    """A's second and third fragments swapped (rows g+8 and columns t+4
    mixed up): a GPU computes another product, and so does the emulator."""
    artifact = with_kernel(
        linear,
        "mma-layout",
        MMA_KERNEL,
        (
            "%av = vector.from_elements %a0, %a1, %a2, %a3",
            "%av = vector.from_elements %a0, %a2, %a1, %a3",
        ),
    )
    y = output(linear, artifact, "forward")
    assert rel_l2(y, linear["expected"]) > 0.1


def test_mma_of_part_of_a_warp_is_an_error(linear: dict) -> None:
    """Lanes 16..31 skip the mma (undefined in CUDA: .aligned needs every
    lane of the warp)."""
    artifact = with_kernel(
        linear,
        "mma-half",
        MMA_KERNEL,
        (
            "%mine = arith.andi %isb0, %few : i1",
            (
                "%mine0 = arith.andi %isb0, %few : i1\n"
                "    %c16 = arith.constant 16 : index\n"
                "    %low = arith.cmpi ult, %lane, %c16 : index\n"
                "    %mine = arith.andi %mine0, %low : i1"
            ),
        ),
    )
    line = failure(linear, artifact, "forward")
    assert line.endswith(
        ": in block (0,0,0), warp 0: lane 16 (thread (16,0,0)) has returned while lanes of its warp wait "
        "at nvgpu.mma.sync #0 (undefined in CUDA: every lane must run it)"
    ), line


# TILE_KERNEL staged by asynchronous copies (PTX cp.async), as the workgroup
# tiles stage plain operand reads: thread t copies weight element t into the
# tile (group 0), then element t + 256 if there is one (group 1), waits for
# both groups and meets the barrier.
ASYNC_STAGING = (
    TILE_KERNEL[
        TILE_KERNEL.index("    scf.for %s = %c0 to %c480") : TILE_KERNEL.index("    gpu.barrier // STAGED")
    ],
    """    %r0 = arith.divui %t, %c24 : index
    %k0 = arith.remui %t, %c24 : index
    %cp0 = nvgpu.device_async_copy %w[%r0, %k0], %tile[%r0, %k0], 1 : memref<20x24xf32> to memref<20x24xf32, #gpu.address_space<workgroup>>
    %g0 = nvgpu.device_async_create_group %cp0
    %e1 = arith.addi %t, %c256 : index
    %in1 = arith.cmpi ult, %e1, %c480 : index
    scf.if %in1 {
      %r1 = arith.divui %e1, %c24 : index
      %k1 = arith.remui %e1, %c24 : index
      %cp1 = nvgpu.device_async_copy %w[%r1, %k1], %tile[%r1, %k1], 1 : memref<20x24xf32> to memref<20x24xf32, #gpu.address_space<workgroup>>
    }
    %g1 = nvgpu.device_async_create_group
    nvgpu.device_async_wait %g1 {numGroups = 0 : i32} // WAIT
""",
)


def test_async_copy_staging(linear: dict) -> None:
    """The tile staged by asynchronous copies, waited for before the
    barrier, computes the Linear in every order."""
    artifact = with_kernel(linear, "async", TILE_KERNEL, ASYNC_STAGING)
    d: Path = linear["dir"]
    check_orders(artifact, d / "m.safetensors", [d / "x.npy"], linear["expected"], "cp.async-staged Linear")


def test_async_copy_wait_after_barrier_reads_nan(linear: dict) -> None:
    """Waiting after the barrier (the race the wait must close): other
    threads read tile elements still in flight, NaN (the poison) in every
    order."""
    artifact = with_kernel(
        linear,
        "async-late",
        TILE_KERNEL,
        ASYNC_STAGING,
        ("    nvgpu.device_async_wait %g1 {numGroups = 0 : i32} // WAIT\n", ""),
        ("gpu.barrier // STAGED", "gpu.barrier\n    nvgpu.device_async_wait %g1"),
    )
    for order in ORDERS:
        y = output(linear, artifact, order)
        assert np.isnan(y).any(), f"{order}: the wait after the barrier went unnoticed"


def test_async_copy_partial_wait(linear: dict) -> None:
    """A wait that leaves the last group pending (numGroups = 1): weight
    elements 256 on (tile rows 10 to 19, output columns 10 on) are poison
    when read before their copier's last wait (before the thread returns):
    NaN in those columns in every order (some of them; which ones depends
    on the order, as on a GPU on timing), PyTorch's values in the others."""
    artifact = with_kernel(
        linear,
        "async-partial",
        TILE_KERNEL,
        ASYNC_STAGING,
        ("{numGroups = 0 : i32} // WAIT", "{numGroups = 1 : i32}"),
        ("    gpu.return", "    nvgpu.device_async_wait %g1\n    gpu.return"),
    )
    for order in ORDERS:
        y = output(linear, artifact, order)
        assert np.isnan(y[:, 10:]).any(), f"{order}: the pending group went unnoticed"
        assert rel_l2(y[:, :10], linear["expected"][:, :10]) <= REL_L2, order


def test_async_copy_never_waited_is_an_error(linear: dict) -> None:
    """Without the wait every thread returns with copies in flight: an
    error naming the thread (on a GPU the copies land at some time nobody
    waits for)."""
    artifact = with_kernel(
        linear,
        "async-nowait",
        TILE_KERNEL,
        ASYNC_STAGING,
        ("    nvgpu.device_async_wait %g1 {numGroups = 0 : i32} // WAIT\n", ""),
    )
    line = failure(linear, artifact, "forward")
    assert line.endswith(
        ": in block (0,0,0), thread (0,0,0) returned with 2 element(s) of asynchronous copies to workgroup "
        "memory it never waited for (nvgpu.device_async_wait, PTX cp.async.wait_group): their destination "
        "keeps its poison"
    ), line


# 16-byte copies: thread t < 120 copies weight elements 4t .. 4t + 3 (rows
# of 24 words keep each 16-byte aligned in the plan buffer and in the tile,
# aligned to 16 by its llvm.align).
ASYNC_VECTOR_STAGING = (
    (
        "workgroup(%tile: memref<20x24xf32, #gpu.address_space<workgroup>>)",
        "workgroup(%tile: memref<20x24xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})",
    ),
    (
        ASYNC_STAGING[0],
        """    %c4 = arith.constant 4 : index
    %c120 = arith.constant 120 : index
    %few = arith.cmpi ult, %t, %c120 : index
    scf.if %few {
      %e = arith.muli %t, %c4 : index
      %e0 = arith.addi %e, %c0 : index // VECTOR
      %r = arith.divui %e0, %c24 : index
      %k = arith.remui %e0, %c24 : index
      %cp = nvgpu.device_async_copy %w[%r, %k], %tile[%r, %k], 4 {bypassL1} : memref<20x24xf32> to memref<20x24xf32, #gpu.address_space<workgroup>>
    }
    %grp = nvgpu.device_async_create_group
    nvgpu.device_async_wait %grp
""",
    ),
)


def test_async_vector_copy_staging(linear: dict) -> None:
    artifact = with_kernel(linear, "async-vector", TILE_KERNEL, *ASYNC_VECTOR_STAGING)
    d: Path = linear["dir"]
    check_orders(artifact, d / "m.safetensors", [d / "x.npy"], linear["expected"], "16-byte cp.async Linear")


def test_misaligned_async_copy_is_reported(linear: dict) -> None:
    """Each 16-byte copy one element later (a fault on a GPU): reported at
    its source, the plan buffer."""
    artifact = with_kernel(
        linear,
        "async-misaligned",
        TILE_KERNEL,
        *ASYNC_VECTOR_STAGING,
        ("%e0 = arith.addi %e, %c0 : index // VECTOR", "%e0 = arith.addi %e, %c1 : index"),
    )
    line = failure(linear, artifact, "forward")
    assert re.search(
        r": thread \(0,0,0\) of block \(0,0,0\) copies asynchronously \(cp\.async\) misaligned for its 16 bytes, "
        r"at argument 1, .*: element 1 \(index \[0, 1\] of shape \[20, 24\]\); [0-9]+ misaligned or "
        r"out-of-bounds accesses in the launch$",
        line,
    ), line
