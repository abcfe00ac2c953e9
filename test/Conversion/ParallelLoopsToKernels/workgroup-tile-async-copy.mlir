// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-async-copy=true" | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-async-copy=true workgroup-tile-prefetch=false" | FileCheck %s --check-prefix=NOPREFETCH
// Where the copies would write the buffer being multiplied from (one
// buffer, loads a step ahead), the operands go through registers.
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-async-copy=true workgroup-tile-double-buffer=false" | FileCheck %s --check-prefix=REGS
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-async-copy=true workgroup-tile-tensor-cores=true" | FileCheck %s --check-prefix=TC
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-async-copy=true workgroup-tile-stages=3" | FileCheck %s --check-prefix=STAGES
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-async-copy=true workgroup-tile-stages=3 workgroup-tile-tensor-cores=true" | FileCheck %s --check-prefix=TCSTAGES
// The output parses back (a group that names no copy names a poison token:
// the op's custom form prints an empty list that would swallow the next
// line's result).
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-async-copy=true workgroup-tile-stages=3" | gpuopt-opt -split-input-file -o /dev/null
// Off by default (the pass does not know the chips; cp.async is sm_80's).
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true" | FileCheck %s --check-prefix=REGS

// A 1x1 convolution (workgroup-tile.mlir's): both operands are plain loads
// of plan buffers. The input, contiguous along the pixels, is one 16-byte
// copy per thread and step (cp.async.cg: bypassL1), zero-filled (0 source
// elements) past N; the weight, contiguous along k but stored transposed
// (k-major tile), is 4 copies of one element. Step 0's copies are one
// group, waited for before the first barrier; in the loop step t + 1's
// copies into buffer (t + 1) % 2 are issued before step t multiplies from
// buffer t % 2 and waited for after it, before the step's one barrier.
// Nothing but the accumulators is carried, and no operand is stored into
// the tiles by the threads.
// CHECK-LABEL: func.func @matmul_like
// CHECK: gpu.func @matmul_like_kernel0(%[[IN:[^:]*]]: memref<32x8x8xf32>, %[[WT:[^:]*]]: memref<64x32xf32>
// CHECK-SAME: workgroup(%[[XS:.*]] : memref<2x16x68xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[YS:.*]] : memref<2x16x64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: %[[INF:.*]] = memref.collapse_shape %[[IN]]
// CHECK-NOT: vector.load {{.*}} : memref<{{[0-9x]*}}xf32>, vector<
// CHECK-NOT: memref.store %{{.*}}, %[[XS]]
// CHECK-COUNT-4: nvgpu.device_async_copy %[[WT]][%{{.*}}, %{{.*}}], %[[XS]][%c0{{[_0-9]*}}, %{{.*}}, %{{.*}}], 1, %{{.*}} : memref<64x32xf32> to memref<2x16x68xf32, #gpu.address_space<workgroup>>
// CHECK: %[[N:.*]] = arith.select %{{.*}}, %c4{{[_0-9]*}}, %c0{{[_0-9]*}} : index
// CHECK-NEXT: nvgpu.device_async_copy %[[INF]][%{{.*}}, %{{.*}}], %[[YS]][%c0{{[_0-9]*}}, %{{.*}}, %{{.*}}], 4, %[[N]] {bypassL1} : memref<32x64xf32> to memref<2x16x64xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: %[[G0:.*]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[G0]]
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %[[T:.*]] = %c0{{[_0-9]*}} to %c1{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// CHECK-SAME: -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: %[[T1:.*]] = arith.addi %[[T]], %c1
// CHECK: %[[NEXT:.*]] = arith.remui %[[T1]], %c2
// CHECK-COUNT-4: nvgpu.device_async_copy %[[WT]]{{.*}}, %[[XS]][%[[NEXT]],
// CHECK: nvgpu.device_async_copy %[[INF]]{{.*}}, %[[YS]][%[[NEXT]],
// CHECK-NEXT: %[[G:.*]] = nvgpu.device_async_create_group
// CHECK: %[[BUF:.*]] = arith.remui %[[T]], %c2
// CHECK: scf.for
// CHECK: vector.load %[[XS]][%[[BUF]],
// CHECK-COUNT-16: arith.addf
// CHECK: scf.yield
// CHECK-NOT: memref.store
// CHECK: nvgpu.device_async_wait %[[G]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.yield
// The last step multiplies from buffer 1: no copy, wait or barrier.
// CHECK-NOT: nvgpu.
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
// Without prefetch: step t's copies into buffer t % 2, then the wait and
// the barrier, then its multiply-adds.
// NOPREFETCH-LABEL: func.func @matmul_like
// NOPREFETCH: scf.for %[[T:.*]] = %c0{{[_0-9]*}} to %c1{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// NOPREFETCH: %[[BUF:.*]] = arith.remui %[[T]], %c2
// NOPREFETCH: nvgpu.device_async_copy %{{.*}}, %{{.*}}[%[[BUF]],
// NOPREFETCH: %[[G:.*]] = nvgpu.device_async_create_group
// NOPREFETCH-NEXT: nvgpu.device_async_wait %[[G]]
// NOPREFETCH-NEXT: gpu.barrier
// NOPREFETCH: scf.for
// NOPREFETCH: vector.load %{{.*}}[%[[BUF]],
// Two steps: no use for a third buffer.
// STAGES-LABEL: func.func @matmul_like
// STAGES: workgroup(%{{.*}} : memref<2x16x68xf32
// TF32 tensor cores: the copies write the fragment-ordered layouts (x
// tile rows interleaved in 16s, rows of BM + 8; y tile [k / 8 * 4 + k % 4,
// column, k % 8 / 4]), 4 bytes each (the input's 4 consecutive pixels are
// not adjacent there: no 16-byte copy); once its copies are complete each
// thread rounds the 8 elements it copied to TF32 in place (cvt.rna's rule:
// + 0x1000, & ~0x1FFF where finite), then the barrier publishes them.
// TC-LABEL: func.func @matmul_like
// TC: gpu.func @matmul_like_kernel0
// TC-SAME: workgroup(%[[XS:.*]] : memref<2x16x72xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[YS:.*]] : memref<2x8x68x2xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// TC-COUNT-4: nvgpu.device_async_copy %{{.*}}, %[[XS]][%c0{{[_0-9]*}}, %{{.*}}, %{{.*}}], 1, %{{.*}} : memref<64x32xf32> to memref<2x16x72xf32, #gpu.address_space<workgroup>>
// TC-COUNT-4: nvgpu.device_async_copy %{{.*}}, %[[YS]][%c0{{[_0-9]*}}, %{{.*}}, %{{.*}}, %{{.*}}], 1, %{{.*}} : memref<32x64xf32> to memref<2x8x68x2xf32, #gpu.address_space<workgroup>>
// TC-NEXT: %[[G0:.*]] = nvgpu.device_async_create_group
// TC-NEXT: nvgpu.device_async_wait %[[G0]]
// TC-NOT: gpu.barrier
// TC: %[[X0:.*]] = memref.load %[[XS]][%c0{{[_0-9]*}}, %[[XK:[a-z0-9_]+]], %[[XR:[a-z0-9_]+]]]
// TC-NEXT: %[[XB:.*]] = arith.bitcast %[[X0]] : f32 to i32
// TC: %[[XP:.*]] = arith.addi %[[XB]], %c4096_i32
// TC-NEXT: %[[XM:.*]] = arith.andi %[[XP]], %c-8192_i32
// TC-NEXT: %[[XS2:.*]] = arith.select %{{.*}}, %[[XM]], %[[XB]]
// TC-NEXT: %[[XF:.*]] = arith.bitcast %[[XS2]] : i32 to f32
// TC-NEXT: memref.store %[[XF]], %[[XS]][%c0{{[_0-9]*}}, %[[XK]], %[[XR]]]
// TC-COUNT-3: memref.store %{{.*}}, %[[XS]][%c0
// TC-COUNT-4: memref.store %{{.*}}, %[[YS]][%c0
// TC-NEXT: gpu.barrier
// In the loop, step t + 1's copies into buffer (t + 1) % 2, rounded there
// after step t's multiply-adds and their wait, before the barrier.
// TC: scf.for %[[T:.*]] = %c0{{[_0-9]*}} to %c1{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// TC: %[[T1:.*]] = arith.addi %[[T]], %c1
// TC: %[[NB:.*]] = arith.remui %[[T1]], %c2
// TC: nvgpu.device_async_copy %{{.*}}, %[[XS]][%[[NB]],
// TC: nvgpu.mma.sync
// TC: nvgpu.device_async_wait
// TC-NOT: gpu.barrier
// TC-COUNT-4: memref.store %{{.*}}, %[[XS]][%[[NB]],
// TC-NOT: gpu.barrier
// TC-COUNT-4: memref.store %{{.*}}, %[[YS]][%[[NB]],
// TC-NEXT: gpu.barrier
// REGS-LABEL: func.func @matmul_like
// REGS-NOT: nvgpu.device_async
// REGS: gpu.barrier
// REGS-NOT: nvgpu.device_async
// REGS: gpu.return
func.func @matmul_like(%in: memref<32x8x8xf32>, %wt: memref<64x32xf32>, %bias: memref<64xf32>, %out: memref<64x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %h, %w) = (%c0, %c0, %c0) to (%c64, %c8, %c8) step (%c1, %c1, %c1) {
    memref.store %zero, %out[%o, %h, %w] : memref<64x8x8xf32>
    scf.for %c = %c0 to %c32 step %c1 {
      %a = memref.load %out[%o, %h, %w] : memref<64x8x8xf32>
      %x = memref.load %in[%c, %h, %w] : memref<32x8x8xf32>
      %f = memref.load %wt[%o, %c] : memref<64x32xf32>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out[%o, %h, %w] : memref<64x8x8xf32>
    }
    %r = memref.load %out[%o, %h, %w] : memref<64x8x8xf32>
    %b = memref.load %bias[%o] : memref<64xf32>
    %t = arith.addf %r, %b : f32
    %y = arith.maximumf %t, %zero : f32
    memref.store %y, %out[%o, %h, %w] : memref<64x8x8xf32>
    scf.reduce
  }
  return
}

// -----

// A padded 3x3 convolution (K = 27: scalar operands). The input is the
// remapped read `select(inside, load(clamped), 0.0)`: one 4-byte copy of
// the clamped element with 1 source element where the tap is inside the
// map and the slot inside the tile, 0 (zero fill) elsewhere; outside the
// tile the position and step are 0 (a valid address). The weight is a
// plain load: copies too. The last step's copies, issued during the first,
// are guarded by k < 27 as well.
// CHECK-LABEL: func.func @conv_remainder
// CHECK: gpu.func @conv_remainder_kernel0(%[[WT:[^:]*]]: memref<20x3x3x3xf32>, %[[IN:[^:]*]]: memref<1x3x6x6xf32>
// CHECK-NOT: arith.select %{{.*}} : f32
// CHECK-COUNT-2: nvgpu.device_async_copy %[[WT]]
// CHECK: arith.select %[[OK:[^,]*]], %{{.*}}, %c0{{[_0-9]*}} : index
// CHECK: arith.minsi
// CHECK: %[[READ:.*]] = arith.andi %[[OK]], %{{.*}} : i1
// CHECK: %[[N:.*]] = arith.select %[[READ]], %c1{{[_0-9]*}}, %c0{{[_0-9]*}} : index
// CHECK-NEXT: nvgpu.device_async_copy %[[IN]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}}, 1, %[[N]] : memref<1x3x6x6xf32> to memref<2x16x64xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_wait
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK: arith.cmpi ult, %{{.*}}, %c27
// CHECK: nvgpu.device_async_copy %[[WT]]
// CHECK: nvgpu.device_async_wait
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: arith.select %{{.*}} : f32
// CHECK: gpu.return
func.func @conv_remainder(%in: memref<1x3x6x6xf32>, %wt: memref<20x3x3x3xf32>, %out: memref<1x20x6x6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c20 = arith.constant 20 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%n, %o, %h, %w) = (%c0, %c0, %c0, %c0) to (%c1, %c20, %c6, %c6) step (%c1, %c1, %c1, %c1) {
    memref.store %zero, %out[%n, %o, %h, %w] : memref<1x20x6x6xf32>
    scf.for %c = %c0 to %c3 step %c1 {
      scf.for %kh = %c0 to %c3 step %c1 {
        scf.for %kw = %c0 to %c3 step %c1 {
          %a = memref.load %out[%n, %o, %h, %w] : memref<1x20x6x6xf32>
          %hh = arith.addi %h, %kh : index
          %ih = arith.subi %hh, %c1 : index
          %ww = arith.addi %w, %kw : index
          %iw = arith.subi %ww, %c1 : index
          %h0 = arith.cmpi sge, %ih, %c0 : index
          %h1 = arith.cmpi slt, %ih, %c6 : index
          %w0 = arith.cmpi sge, %iw, %c0 : index
          %w1 = arith.cmpi slt, %iw, %c6 : index
          %g0 = arith.andi %h0, %h1 : i1
          %g1 = arith.andi %w0, %w1 : i1
          %ok = arith.andi %g0, %g1 : i1
          %ch0 = arith.maxsi %ih, %c0 : index
          %ch = arith.minsi %ch0, %c5 : index
          %cw0 = arith.maxsi %iw, %c0 : index
          %cw = arith.minsi %cw0, %c5 : index
          %v = memref.load %in[%n, %c, %ch, %cw] : memref<1x3x6x6xf32>
          %x = arith.select %ok, %v, %zero : f32
          %f = memref.load %wt[%o, %c, %kh, %kw] : memref<20x3x3x3xf32>
          %p = arith.mulf %f, %x : f32
          %s = arith.addf %p, %a : f32
          memref.store %s, %out[%n, %o, %h, %w] : memref<1x20x6x6xf32>
        }
      }
    }
    scf.reduce
  }
  return
}

// -----

// An operand computed from its load (a weight scaled per channel, a
// select whose other value is not +0.0) cannot be copied: it goes through
// registers while the plain one is copied.
// CHECK-LABEL: func.func @negative_computed_operand
// CHECK: gpu.func @negative_computed_operand_kernel0
// CHECK-SAME: workgroup(%[[XS:.*]] : memref<2x16x36xf32, {{.*}}>> {llvm.align = 16 : i64}, %[[YS:.*]] : memref<2x16x64xf32,
// CHECK-NOT: nvgpu.device_async_copy %{{.*}}, %[[XS]]
// CHECK: arith.mulf
// CHECK-NOT: nvgpu.device_async_copy %{{.*}}, %[[XS]]
// CHECK: nvgpu.device_async_copy %{{.*}}, %[[YS]]
// CHECK-NOT: nvgpu.device_async_copy %{{.*}}, %[[XS]]
// CHECK: memref.store %{{.*}}, %[[XS]]
// CHECK-NOT: nvgpu.device_async_copy %{{.*}}, %[[XS]]
// CHECK: gpu.return
func.func @negative_computed_operand(%in: memref<32x64xf32>, %wt: memref<32x32xf32>, %scale: memref<32xf32>, %out: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %p) = (%c0, %c0) to (%c32, %c64) step (%c1, %c1) {
    memref.store %zero, %out[%o, %p] : memref<32x64xf32>
    scf.for %k = %c0 to %c32 step %c1 {
      %a = memref.load %out[%o, %p] : memref<32x64xf32>
      %f = memref.load %wt[%o, %k] : memref<32x32xf32>
      %s = memref.load %scale[%o] : memref<32xf32>
      %fs = arith.mulf %f, %s : f32
      %x = memref.load %in[%k, %p] : memref<32x64xf32>
      %m = arith.mulf %fs, %x : f32
      %r = arith.addf %a, %m : f32
      memref.store %r, %out[%o, %p] : memref<32x64xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A select whose other value is 1.0 is no zero fill: registers.
// CHECK-LABEL: func.func @negative_select_not_zero
// CHECK: gpu.func @negative_select_not_zero_kernel0(%[[WT:[^:]*]]: memref<32x32xf32>, %[[IN:[^:]*]]: memref<32x64xf32>
// CHECK-NOT: nvgpu.device_async_copy %[[IN]]
// CHECK: nvgpu.device_async_copy %[[WT]]
// CHECK-NOT: nvgpu.device_async_copy %[[IN]]
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NOT: nvgpu.device_async_copy %[[IN]]
// CHECK: gpu.return
func.func @negative_select_not_zero(%in: memref<32x64xf32>, %wt: memref<32x32xf32>, %out: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  scf.parallel (%o, %p) = (%c0, %c0) to (%c32, %c64) step (%c1, %c1) {
    memref.store %zero, %out[%o, %p] : memref<32x64xf32>
    scf.for %k = %c0 to %c32 step %c1 {
      %a = memref.load %out[%o, %p] : memref<32x64xf32>
      %f = memref.load %wt[%o, %k] : memref<32x32xf32>
      %v = memref.load %in[%k, %p] : memref<32x64xf32>
      %lo = arith.cmpi ult, %p, %c16 : index
      %x = arith.select %lo, %v, %one : f32
      %m = arith.mulf %f, %x : f32
      %r = arith.addf %a, %m : f32
      memref.store %r, %out[%o, %p] : memref<32x64xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A select whose condition reads the loaded value (a ReLU written as a
// select) needs the value in a register: not copied (and no crash).
// CHECK-LABEL: func.func @negative_select_reads_the_load
// CHECK: gpu.func @negative_select_reads_the_load_kernel0(%[[WT:[^:]*]]: memref<32x32xf32>, %[[IN:[^:]*]]: memref<32x64xf32>
// CHECK-NOT: nvgpu.device_async_copy %[[IN]]
// CHECK: arith.cmpf ugt
// CHECK-NOT: nvgpu.device_async_copy %[[IN]]
// CHECK: gpu.return
func.func @negative_select_reads_the_load(%in: memref<32x64xf32>, %wt: memref<32x32xf32>, %out: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %p) = (%c0, %c0) to (%c32, %c64) step (%c1, %c1) {
    memref.store %zero, %out[%o, %p] : memref<32x64xf32>
    scf.for %k = %c0 to %c32 step %c1 {
      %a = memref.load %out[%o, %p] : memref<32x64xf32>
      %f = memref.load %wt[%o, %k] : memref<32x32xf32>
      %v = memref.load %in[%k, %p] : memref<32x64xf32>
      %pos = arith.cmpf ugt, %v, %zero : f32
      %x = arith.select %pos, %v, %zero : f32
      %m = arith.mulf %f, %x : f32
      %r = arith.addf %a, %m : f32
      memref.store %r, %out[%o, %p] : memref<32x64xf32>
    }
    scf.reduce
  }
  return
}

// -----

// K = 64, 4 steps, both operands copied: with workgroup-tile-stages=3
// three buffers of each tile. Steps 0 and 1 are issued before the loop,
// each its own group; the wait leaves 1 group pending (step 0 complete),
// then the barrier. Loop step t (0 .. 2) issues step t + 2 into buffer
// (t + 2) % 3 while t <= 1 (step 3 is the last), commits (an empty group
// at t = 2 keeps one group per step), multiplies from buffer t % 3, waits
// with 1 group pending (step t + 1 complete) and meets the one barrier of
// the step. The last step multiplies from buffer 0 (3 % 3).
// STAGES-LABEL: func.func @deep
// STAGES: workgroup(%[[XS:.*]] : memref<3x16x68xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[YS:.*]] : memref<3x16x64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// STAGES: nvgpu.device_async_copy %{{.*}}, %[[XS]][%c0
// STAGES: nvgpu.device_async_create_group
// STAGES: nvgpu.device_async_copy %{{.*}}, %[[XS]][%c1
// STAGES: %[[G1:.*]] = nvgpu.device_async_create_group
// STAGES-NEXT: nvgpu.device_async_wait %[[G1]] {numGroups = 1 : i32}
// STAGES-NEXT: gpu.barrier
// STAGES: scf.for %[[T:.*]] = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// STAGES: %[[ISSUE:.*]] = arith.cmpi ule, %[[T]], %c1{{[_0-9]*}} : index
// STAGES: scf.if %[[ISSUE]] {
// STAGES: %[[AHEAD:.*]] = arith.addi %[[T]], %c2
// STAGES: %[[NB:.*]] = arith.remui %[[AHEAD]], %c3
// STAGES: nvgpu.device_async_copy %{{.*}}, %[[XS]][%[[NB]],
// STAGES-NOT: nvgpu.device_async_create_group
// STAGES: nvgpu.device_async_copy %{{.*}}, %[[YS]][%[[NB]],
// STAGES-NOT: nvgpu.device_async_copy
// STAGES: %[[G:.*]] = nvgpu.device_async_create_group
// STAGES: %[[B:.*]] = arith.remui %[[T]], %c3
// STAGES: vector.load %[[XS]][%[[B]],
// STAGES: nvgpu.device_async_wait %[[G]] {numGroups = 1 : i32}
// STAGES-NEXT: gpu.barrier
// STAGES-NEXT: scf.yield
// STAGES-NOT: nvgpu.
// STAGES: vector.load %[[XS]][%c0
// STAGES-NOT: gpu.barrier
// STAGES: gpu.return
// TF32, 3 stages: the wait before the first barrier completes step 0, the
// loop's wait step t + 1; each thread rounds what it copied into that
// step's buffer, (t + 1) % 3, before the barrier that publishes it.
// TCSTAGES-LABEL: func.func @deep
// TCSTAGES: workgroup(%[[XS:.*]] : memref<3x16x72xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[YS:.*]] : memref<3x8x68x2xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// TCSTAGES: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// TCSTAGES-NOT: gpu.barrier
// TCSTAGES: %[[R0:.*]] = arith.remui %c0{{[_0-9]*}}, %c3
// TCSTAGES-COUNT-4: memref.store %{{.*}}, %[[XS]][%[[R0]],
// TCSTAGES-NOT: gpu.barrier
// TCSTAGES-COUNT-4: memref.store %{{.*}}, %[[YS]][%[[R0]],
// TCSTAGES-NOT: memref.store
// TCSTAGES: gpu.barrier
// TCSTAGES: scf.for %[[T:.*]] = %c0{{[_0-9]*}} to %c3{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// TCSTAGES: nvgpu.mma.sync
// TCSTAGES: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// TCSTAGES-NOT: gpu.barrier
// TCSTAGES: %[[T1:.*]] = arith.addi %[[T]], %c1
// TCSTAGES-NEXT: %[[RB:.*]] = arith.remui %[[T1]], %c3
// TCSTAGES-NOT: gpu.barrier
// TCSTAGES-COUNT-4: memref.store %{{.*}}, %[[XS]][%[[RB]],
// TCSTAGES-NOT: gpu.barrier
// TCSTAGES-COUNT-4: memref.store %{{.*}}, %[[YS]][%[[RB]],
// TCSTAGES-NOT: memref.store
// TCSTAGES: gpu.barrier
// TCSTAGES-NEXT: scf.yield
// Without workgroup-tile-stages, two buffers.
// CHECK-LABEL: func.func @deep
// CHECK: workgroup(%{{.*}} : memref<2x16x68xf32
func.func @deep(%in: memref<64x64xf32>, %wt: memref<64x64xf32>, %out: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %p) = (%c0, %c0) to (%c64, %c64) step (%c1, %c1) {
    memref.store %zero, %out[%o, %p] : memref<64x64xf32>
    scf.for %k = %c0 to %c64 step %c1 {
      %a = memref.load %out[%o, %p] : memref<64x64xf32>
      %f = memref.load %wt[%o, %k] : memref<64x64xf32>
      %x = memref.load %in[%k, %p] : memref<64x64xf32>
      %m = arith.mulf %f, %x : f32
      %r = arith.addf %a, %m : f32
      memref.store %r, %out[%o, %p] : memref<64x64xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A 256 x 16 tile (256 output rows, 16 pixels): three buffers would take
// 3 x 17.7 KB, past the 48 KiB of static workgroup memory: two.
// STAGES-LABEL: func.func @negative_stages_too_large
// STAGES: workgroup(%{{.*}} : memref<2x16x260xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2x16x16xf32
func.func @negative_stages_too_large(%in: memref<64x16xf32>, %wt: memref<256x64xf32>, %out: memref<256x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %p) = (%c0, %c0) to (%c256, %c16) step (%c1, %c1) {
    memref.store %zero, %out[%o, %p] : memref<256x16xf32>
    scf.for %k = %c0 to %c64 step %c1 {
      %a = memref.load %out[%o, %p] : memref<256x16xf32>
      %f = memref.load %wt[%o, %k] : memref<256x64xf32>
      %x = memref.load %in[%k, %p] : memref<64x16xf32>
      %m = arith.mulf %f, %x : f32
      %r = arith.addf %a, %m : f32
      memref.store %r, %out[%o, %p] : memref<256x16xf32>
    }
    scf.reduce
  }
  return
}
