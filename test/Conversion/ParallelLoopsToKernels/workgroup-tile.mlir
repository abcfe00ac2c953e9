// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true register-tile=4" | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-min-blocks=4" | FileCheck %s --check-prefix=SMALL
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-tensor-cores=true" | FileCheck %s --check-prefix=TC
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-vector-loads=false workgroup-tile-prefetch=false" | FileCheck %s --check-prefix=SCALAR
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-prefetch=false" | FileCheck %s --check-prefix=NOPREFETCH
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-double-buffer=false" | FileCheck %s --check-prefix=ONEBUF
// Off by default: register tiles only.
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="register-tile=4" | FileCheck %s --check-prefix=OFF

// A 1x1 convolution of 32 input channels into 64 output channels of an 8x8
// map (bias and ReLU after it): M = 64 channels, N = 64 pixels, K = 32. One
// block of 256 threads (no guard: every thread reaches the barriers) holds a
// 64 x 64 tile, 4 x 4 outputs per thread; two steps of 16 reduction
// iterations each store 4 weights and 4 inputs per thread into workgroup
// memory (the weight tile's rows padded to 65), then run 16 iterations of
// 4 + 4 workgroup loads and 16 multiply-adds. Both operands are plan
// buffers contiguous along their tile's fast axis: each thread loads 4
// weights (consecutive k) with one 16-byte vector.load, and 4 inputs
// (consecutive pixels of the input collapsed to 32 x 64) with another.
// Each step's operands are loaded from global memory into registers one
// step ahead: step 0's before the loop of steps, which stores them into
// buffer 0 of the double-buffered tiles; step t + 1's in the loop before
// step t multiplies from buffer t % 2, stored into the other buffer after
// it, then one barrier per step (carried: only the 16 accumulators). The
// last step multiplies from buffer 1, with no barrier after it. The zero
// fill is the accumulators' initial value (no store), and the epilogue
// stores each output once.
// CHECK-LABEL: func.func @matmul_like
// CHECK: gpu.launch_func @kernels::@matmul_like_kernel0 blocks in (%c1{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c256{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK: gpu.func @matmul_like_kernel0(%[[IN:[^:]*]]: memref<32x8x8xf32>, %[[WT:[^:]*]]: memref<64x32xf32>, %{{[^:]*}}: memref<64xf32>, %[[OUT:[^:]*]]: memref<64x8x8xf32>)
// CHECK-SAME: workgroup(%[[XS:.*]] : memref<2x16x68xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[YS:.*]] : memref<2x16x64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: gpu.block_id x
// CHECK: gpu.thread_id x
// CHECK: %[[INF:.*]] = memref.collapse_shape %[[IN]] {{\[}}[0], [1, 2]] : memref<32x8x8xf32> into memref<32x64xf32>
// CHECK-NOT: memref.store %{{.*}}, %[[OUT]]
// CHECK-NOT: memref.load %[[WT]]
// CHECK: vector.load %[[WT]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x32xf32>, vector<4xf32>
// CHECK: vector.load %[[INF]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<32x64xf32>, vector<4xf32>
// CHECK: vector.extract %{{.*}}[0] : f32 from vector<4xf32>
// CHECK-COUNT-4: memref.store %{{.*}}, %[[XS]][%c0
// CHECK-COUNT-4: memref.store %{{.*}}, %[[YS]][%c0
// CHECK: gpu.barrier
// CHECK: scf.for %[[T:.*]] = %c0{{[_0-9]*}} to %c1{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// CHECK-SAME: -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: %[[T1:.*]] = arith.addi %[[T]], %c1
// CHECK: %[[NEXT:.*]] = arith.remui %[[T1]], %c2
// CHECK: vector.load %[[WT]]
// CHECK: vector.load %[[INF]]
// CHECK-NOT: gpu.barrier
// CHECK: %[[BUF:.*]] = arith.remui %[[T]], %c2
// CHECK: scf.for %[[K:.*]] = %c0{{[_0-9]*}} to %c16{{[_0-9]*}} step
// CHECK: vector.load %[[XS]][%[[BUF]], %[[K]], %{{.*}}] {alignment = 16 : i64} : memref<2x16x68xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-2: vector.load %[[YS]][%[[BUF]], %[[K]], %{{.*}}] {alignment = 8 : i64} : memref<2x16x64xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-COUNT-16: arith.addf
// CHECK: scf.yield
// CHECK-NOT: nvgpu.
// CHECK-COUNT-4: memref.store %{{.*}}, %[[XS]][%[[NEXT]],
// CHECK-COUNT-4: memref.store %{{.*}}, %[[YS]][%[[NEXT]],
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// The last step, from buffer 1.
// CHECK-NOT: vector.load {{.*}}xf32>, vector<
// CHECK-NOT: memref.store
// CHECK: scf.for %[[K:.*]] = %c0{{[_0-9]*}} to %c16{{[_0-9]*}} step
// CHECK: vector.load %[[XS]][%c1{{[_0-9]*}}, %[[K]], %{{.*}}]
// CHECK-COUNT-16: arith.addf
// CHECK-NOT: gpu.barrier
// CHECK-NOT: memref.load %[[OUT]]
// CHECK-COUNT-16: memref.store %{{.*}}, %[[OUT]]
// CHECK-NOT: memref.store
// CHECK: gpu.return
// At least 4 blocks: 32 x 32 tiles of 2 x 2 outputs per thread.
// SMALL-LABEL: func.func @matmul_like
// SMALL: blocks in (%c4{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c256
// SMALL: workgroup(%{{.*}} : memref<2x16x36xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2x16x32xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// SMALL: -> (f32, f32, f32, f32)
// With tensor cores the 8 warps are 2 x 4 of 32 x 16 outputs: per 8
// reduction steps 2 A and 2 B fragments from workgroup memory and 4 TF32
// m16n8k8 products; no scalar multiply-add is left. The x tile's rows
// (padded to 72) are interleaved in 16s (row g + 8h at 2g + h) and the y
// tile is [k / 8 * 4 + k % 4, column (padded to 68), k % 8 / 4]: each A
// fragment is two 8-byte reads (rows g, g + 8 at k and at k + 4), each B
// fragment one (k and k + 4 of column g).
// The operands are rounded to TF32 (nearest, ties away: + 0x1000, then the
// low 13 bits cleared, but for infinities and NaNs) as they are staged: the
// tensor cores would truncate them.
// TC-LABEL: gpu.func @matmul_like_kernel0
// TC-SAME: workgroup(%[[XS:.*]] : memref<2x16x72xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[YS:.*]] : memref<2x8x68x2xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// TC: %[[BITS:.*]] = arith.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// TC: %[[EXP:.*]] = arith.andi %[[BITS]], %{{.*}} : vector<4xi32>
// TC: %[[FINITE:.*]] = arith.cmpi ne, %[[EXP]], %{{.*}} : vector<4xi32>
// TC-DAG: %[[MASK:.*]] = arith.constant dense<-8192> : vector<4xi32>
// TC-DAG: %[[HALF:.*]] = arith.constant dense<4096> : vector<4xi32>
// TC: %[[UP:.*]] = arith.addi %[[BITS]], %[[HALF]] : vector<4xi32>
// TC: %[[CUT:.*]] = arith.andi %[[UP]], %[[MASK]] : vector<4xi32>
// TC: %[[KEPT:.*]] = arith.select %[[FINITE]], %[[CUT]], %[[BITS]]
// TC: %[[R:.*]] = arith.bitcast %[[KEPT]] : vector<4xi32> to vector<4xf32>
// TC: %[[R0:.*]] = vector.extract %[[R]][0]
// TC-NEXT: memref.store %[[R0]], %[[XS]]
// TC: gpu.barrier
// TC: scf.for %{{.*}} = %c0{{[_0-9]*}} to %c16{{[_0-9]*}} step %c8
// TC-COUNT-4: vector.load %[[XS]][%{{[^]]*}}] {alignment = 8 : i64} : memref<2x16x72xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// TC-COUNT-2: vector.load %[[YS]][%{{.*}}, %{{.*}}, %{{.*}}, %c0{{[_0-9]*}}] {alignment = 8 : i64} : memref<2x8x68x2xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// TC-NOT: arith.mulf
// TC-COUNT-4: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// TC: gpu.barrier
// TC-COUNT-16: memref.store %{{.*}} : memref<64x8x8xf32>
// TC: gpu.return
// Scalar loads at the start of each step: nothing carried but the
// accumulators, 4 weights and 4 inputs loaded in the loop of steps.
// SCALAR-LABEL: func.func @matmul_like
// SCALAR: gpu.func @matmul_like_kernel0(%[[WT:[^:]*]]: memref<64x32xf32>, %[[IN:[^:]*]]: memref<32x8x8xf32>
// SCALAR-NOT: vector.load {{.*}}xf32>, vector<
// SCALAR: scf.for %{{.*}} = %c0{{[_0-9]*}} to %c1{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// SCALAR-SAME: -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// SCALAR-COUNT-4: memref.load %[[WT]]
// SCALAR-COUNT-4: memref.load %[[IN]]
// SCALAR: gpu.barrier
// SCALAR: gpu.barrier
// SCALAR: scf.yield
// SCALAR-COUNT-4: memref.load %[[WT]]
// SCALAR-NOT: vector.load {{.*}}xf32>, vector<
// SCALAR: gpu.return
// Vector loads without prefetch: step t loaded at its start, stored into
// buffer t % 2, one barrier, multiplied; nothing carried but the
// accumulators, no barrier after the multiply-adds.
// NOPREFETCH-LABEL: func.func @matmul_like
// NOPREFETCH: scf.for %[[T:.*]] = %c0{{[_0-9]*}} to %c1{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// NOPREFETCH-SAME: -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// NOPREFETCH: %[[BUF:.*]] = arith.remui %[[T]], %c2
// NOPREFETCH: vector.load
// NOPREFETCH: vector.load
// NOPREFETCH: memref.store %{{.*}}, %{{.*}}[%[[BUF]],
// NOPREFETCH: gpu.barrier
// NOPREFETCH: scf.for
// NOPREFETCH: vector.load %{{.*}}[%[[BUF]],
// NOPREFETCH: scf.yield
// NOPREFETCH-NOT: gpu.barrier
// NOPREFETCH: scf.yield
// The last step: loaded, stored into buffer 1, one barrier.
// NOPREFETCH: vector.load
// NOPREFETCH: vector.load
// NOPREFETCH: memref.store %{{.*}}, %{{.*}}[%c1
// NOPREFETCH: gpu.barrier
// NOPREFETCH-NOT: gpu.barrier
// NOPREFETCH: gpu.return
// One buffer (prefetch on): 2-D tiles; the loop of steps carries the
// accumulators and the next step's two vectors; each step stores them,
// synchronises, multiplies and synchronises again before the next stores.
// The last step stores, synchronises and multiplies.
// ONEBUF-LABEL: func.func @matmul_like
// ONEBUF: workgroup(%[[XS:.*]] : memref<16x68xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[YS:.*]] : memref<16x64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// ONEBUF: vector.load
// ONEBUF: vector.load
// ONEBUF-NOT: memref.store %{{.*}}, %[[XS]]
// ONEBUF: scf.for %{{.*}} = %c0{{[_0-9]*}} to %c1{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// ONEBUF-SAME: -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, vector<4xf32>, vector<4xf32>)
// ONEBUF: vector.load
// ONEBUF: vector.load
// ONEBUF-COUNT-4: memref.store %{{.*}}, %[[XS]][%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}] :
// ONEBUF: gpu.barrier
// ONEBUF: scf.for %[[K:.*]] = %c0{{[_0-9]*}} to %c16{{[_0-9]*}} step
// ONEBUF: vector.load %[[XS]][%[[K]], %{{.*}}] {alignment = 16 : i64}
// ONEBUF: gpu.barrier
// ONEBUF-NEXT: scf.yield
// ONEBUF-NOT: vector.load {{.*}}xf32>, vector<
// ONEBUF-COUNT-4: memref.store %{{.*}}, %[[XS]]
// ONEBUF: gpu.barrier
// ONEBUF: scf.for
// ONEBUF-NOT: gpu.barrier
// ONEBUF: gpu.return
// OFF-LABEL: gpu.func @matmul_like_kernel0
// OFF-NOT: workgroup
// OFF-NOT: gpu.barrier
// OFF: gpu.return
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

// A padded 3x3 convolution (the remapped input: clamped indices, a select
// for the padding) of 3 into 20 channels of a 6x6 map: K = 27 = 16 + 11,
// M = 20 and N = 36 fill no tile. 32 x 32 and 32 x 64 tiles pad alike; the
// larger thread tile wins: one block of 32 x 64, 2 x 4 per thread. The
// last step covers the 11 remaining iterations: its operands, loaded during
// the first step, are guarded by `k < 27` too, and its loop runs 11 times
// (from buffer 1 of the double-buffered tiles, stored during the first).
// CHECK-LABEL: func.func @conv_remainder
// CHECK: blocks in (%c1{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c256
// CHECK: gpu.func @conv_remainder_kernel0(%[[WT:[^:]*]]: memref<20x3x3x3xf32>, %[[IN:[^:]*]]: memref<1x3x6x6xf32>, %{{.*}}: memref<1x20x6x6xf32>)
// CHECK-SAME: workgroup(%{{.*}} : memref<2x16x36xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2x16x64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// K = 27 is no multiple of 4: scalar weight loads.
// CHECK-NOT: vector.load {{.*}}xf32>, vector<
// CHECK-NOT: arith.cmpi ult, %{{.*}}, %c27
// CHECK: memref.load %[[WT]]
// CHECK: memref.load %[[IN]]
// CHECK: arith.select
// CHECK: gpu.barrier
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: arith.cmpi ult, %{{.*}}, %c27
// CHECK: memref.load %[[WT]]
// CHECK: memref.load %[[IN]]
// CHECK-NOT: gpu.barrier
// CHECK: scf.for {{.*}} to %c16
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK-NOT: memref.load %[[WT]]
// CHECK-NOT: gpu.barrier
// CHECK: scf.for {{.*}} to %c11{{[_0-9]*}} step
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-8: memref.store {{.*}} : memref<1x20x6x6xf32>
// CHECK-NOT: memref.store
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

// A 3x3 convolution of 16 into 32 channels: K = 144, a multiple of 4, and
// the weight's last indices are the nest's (c, kh, kw) over whole
// dimensions: the weight, collapsed to 32 x 144, is read 4 steps per
// vector.load. With M = 32, BM = 32: 128 vectors per step, so only threads
// below 128 load and store them.
// CHECK-LABEL: func.func @conv3x3_vector
// CHECK: gpu.func @conv3x3_vector_kernel0(%[[WT:[^:]*]]: memref<32x16x3x3xf32>
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[WT]] {{\[}}[0], [1, 2, 3]] : memref<32x16x3x3xf32> into memref<32x144xf32>
// CHECK: %[[ACTIVE:.*]] = arith.cmpi ult, %{{.*}}, %c128{{[_0-9]*}} : index
// CHECK: %[[OK:.*]] = arith.andi %{{.*}}, %[[ACTIVE]] : i1
// CHECK: scf.if %[[OK]] -> (vector<4xf32>)
// CHECK: vector.load %[[FLAT]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<32x144xf32>, vector<4xf32>
// CHECK-NOT: memref.load %[[WT]]
// CHECK: scf.if %[[ACTIVE]] {
// CHECK-COUNT-4: memref.store
// CHECK: gpu.barrier
func.func @conv3x3_vector(%in: memref<16x10x10xf32>, %wt: memref<32x16x3x3xf32>, %out: memref<32x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %h, %w) = (%c0, %c0, %c0) to (%c32, %c8, %c8) step (%c1, %c1, %c1) {
    memref.store %zero, %out[%o, %h, %w] : memref<32x8x8xf32>
    scf.for %c = %c0 to %c16 step %c1 {
      scf.for %kh = %c0 to %c3 step %c1 {
        scf.for %kw = %c0 to %c3 step %c1 {
          %a = memref.load %out[%o, %h, %w] : memref<32x8x8xf32>
          %ih = arith.addi %h, %kh : index
          %iw = arith.addi %w, %kw : index
          %x = memref.load %in[%c, %ih, %iw] : memref<16x10x10xf32>
          %f = memref.load %wt[%o, %c, %kh, %kw] : memref<32x16x3x3xf32>
          %p = arith.mulf %f, %x : f32
          %s = arith.addf %a, %p : f32
          memref.store %s, %out[%o, %h, %w] : memref<32x8x8xf32>
        }
      }
    }
    scf.reduce
  }
  return
}

// -----

// Both operands transposed: the weight stored K x M (a transposed
// convolution's [Cin, Cout]) is contiguous along M, the input stored N x K
// (a linear's rows) along k: the weight tile is staged 4 consecutive
// output rows per vector.load (stored along a tile row), the input tile 4
// consecutive k per vector.load (stored down a tile column). The weight is
// read through a reshape of the argument, which keeps its alignment.
// CHECK-LABEL: func.func @transposed_operands
// CHECK: gpu.func @transposed_operands_kernel0(%[[WT:[^:]*]]: memref<32x64xf32>, %[[IN:[^:]*]]: memref<64x32xf32>
// CHECK-SAME: workgroup(%[[XS:.*]] : memref<2x16x68xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[YS:.*]] : memref<2x16x64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-NOT: memref.load %[[WT]]
// CHECK-NOT: memref.load %[[IN]]
// CHECK: %[[WV:.*]] = memref.expand_shape %[[WT]]
// CHECK: vector.load %[[WV]][%{{.*}}, %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<1x32x64xf32>, vector<4xf32>
// CHECK: vector.load %[[IN]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x32xf32>, vector<4xf32>
// Step 0's stores into buffer 0. Weight: [kk, pos], [kk, pos + 1], ...;
// input: [kk, pos], [kk + 1, pos], ...
// CHECK: %[[X0:.*]] = vector.extract %{{.*}}[0] : f32 from vector<4xf32>
// CHECK-NEXT: memref.store %[[X0]], %[[XS]][%[[B:[a-z0-9_]+]], %[[XK:[a-z0-9_]+]], %[[XP:[a-z0-9_]+]]] :
// CHECK: %[[XP1:.*]] = arith.addi %[[XP]], %c1
// CHECK-NEXT: %[[X1:.*]] = vector.extract %{{.*}}[1] : f32 from vector<4xf32>
// CHECK-NEXT: memref.store %[[X1]], %[[XS]][%[[B]], %[[XK]], %[[XP1]]] :
// CHECK: %[[Y0:.*]] = vector.extract %{{.*}}[0] : f32 from vector<4xf32>
// CHECK-NEXT: memref.store %[[Y0]], %[[YS]][%[[B]], %[[YK:[a-z0-9_]+]], %[[YP:[a-z0-9_]+]]] :
// CHECK: %[[YK1:.*]] = arith.addi %[[YK]], %c1
// CHECK-NEXT: %[[Y1:.*]] = vector.extract %{{.*}}[1] : f32 from vector<4xf32>
// CHECK-NEXT: memref.store %[[Y1]], %[[YS]][%[[B]], %[[YK1]], %[[YP]]] :
func.func @transposed_operands(%in: memref<64x32xf32>, %wt: memref<32x64xf32>, %out: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %wv = memref.expand_shape %wt [[0, 1], [2]] output_shape [1, 32, 64] : memref<32x64xf32> into memref<1x32x64xf32>
  scf.parallel (%o, %p) = (%c0, %c0) to (%c64, %c64) step (%c1, %c1) {
    memref.store %zero, %out[%o, %p] : memref<64x64xf32>
    scf.for %c = %c0 to %c32 step %c1 {
      %a = memref.load %out[%o, %p] : memref<64x64xf32>
      %x = memref.load %in[%p, %c] : memref<64x32xf32>
      %f = memref.load %wv[%c0, %c, %o] : memref<1x32x64xf32>
      %m = arith.mulf %f, %x : f32
      %s = arith.addf %a, %m : f32
      memref.store %s, %out[%o, %p] : memref<64x64xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A weight read through a subview at an offset (not a buffer the plan
// places, so its alignment is unknown) and an input read with its pixel
// indices swapped (not contiguous along the pixels): scalar loads.
// CHECK-LABEL: func.func @negative_vector_view
// CHECK: gpu.func @negative_vector_view_kernel0
// CHECK-NOT: vector.load {{.*}}xf32>, vector<
// CHECK: gpu.return
func.func @negative_vector_view(%in: memref<32x8x8xf32>, %wt: memref<65x32xf32>, %out: memref<64x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %w = memref.subview %wt[1, 0] [64, 32] [1, 1] : memref<65x32xf32> to memref<64x32xf32, strided<[32, 1], offset: 32>>
  scf.parallel (%o, %h, %ww) = (%c0, %c0, %c0) to (%c64, %c8, %c8) step (%c1, %c1, %c1) {
    memref.store %zero, %out[%o, %h, %ww] : memref<64x8x8xf32>
    scf.for %c = %c0 to %c32 step %c1 {
      %a = memref.load %out[%o, %h, %ww] : memref<64x8x8xf32>
      %x = memref.load %in[%c, %ww, %h] : memref<32x8x8xf32>
      %f = memref.load %w[%o, %c] : memref<64x32xf32, strided<[32, 1], offset: 32>>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out[%o, %h, %ww] : memref<64x8x8xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A reshape of the weight made inside the reduction nest (recomputable,
// but gone with the loop the tiles replace): scalar loads, through a copy
// of the reshape in each load.
// CHECK-LABEL: func.func @negative_vector_inner_view
// CHECK: gpu.func @negative_vector_inner_view_kernel0
// CHECK-NOT: vector.load %{{.*}} : memref<1x32x64xf32>
// CHECK: gpu.return
func.func @negative_vector_inner_view(%in: memref<64x32xf32>, %wt: memref<32x64xf32>, %out: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %p) = (%c0, %c0) to (%c64, %c64) step (%c1, %c1) {
    memref.store %zero, %out[%o, %p] : memref<64x64xf32>
    scf.for %c = %c0 to %c32 step %c1 {
      %a = memref.load %out[%o, %p] : memref<64x64xf32>
      %x = memref.load %in[%p, %c] : memref<64x32xf32>
      %wv = memref.expand_shape %wt [[0, 1], [2]] output_shape [1, 32, 64] : memref<32x64xf32> into memref<1x32x64xf32>
      %f = memref.load %wv[%c0, %c, %o] : memref<1x32x64xf32>
      %m = arith.mulf %f, %x : f32
      %s = arith.addf %a, %m : f32
      memref.store %s, %out[%o, %p] : memref<64x64xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A 1x1 convolution, K = 8: one step, so no loop of steps; the step's
// operands are guarded by k < 8 (the tile's other 8 rows are zeros), its
// loop runs 8 times, and no barrier follows it. The weight's trailing
// dimensions of size 1 join K: it is read as 16 x 8.
// CHECK-LABEL: func.func @single_step
// CHECK: gpu.func @single_step_kernel0(%[[WT:[^:]*]]: memref<16x8x1x1xf32>
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[WT]] {{\[}}[0], [1, 2, 3]] : memref<16x8x1x1xf32> into memref<16x8xf32>
// CHECK-NOT: scf.for {{.*}} iter_args
// CHECK: arith.cmpi ult, %{{.*}}, %c8{{[_0-9]*}} : index
// CHECK: vector.load %[[FLAT]]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %c0{{[_0-9]*}} to %c8{{[_0-9]*}} step %c1{{[_0-9]*}} iter_args
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @single_step(%in: memref<8x64xf32>, %wt: memref<16x8x1x1xf32>, %out: memref<16x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %p) = (%c0, %c0) to (%c16, %c64) step (%c1, %c1) {
    memref.store %zero, %out[%o, %p] : memref<16x64xf32>
    scf.for %c = %c0 to %c8 step %c1 {
      %a = memref.load %out[%o, %p] : memref<16x64xf32>
      %x = memref.load %in[%c, %p] : memref<8x64xf32>
      %f = memref.load %wt[%o, %c, %c0, %c0] : memref<16x8x1x1xf32>
      %m = arith.mulf %f, %x : f32
      %s = arith.addf %a, %m : f32
      memref.store %s, %out[%o, %p] : memref<16x64xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Not tiled (register tiles instead, or one output per thread): 8 output
// rows (fewer than a tile's 16); a batch index both factors depend on; a
// loop that writes a factor's buffer; a nest that also stores elsewhere; an
// epilogue that uses what ran before the nest.
// CHECK-LABEL: gpu.func @negative_few_rows_kernel{{[0-9]+}}
// CHECK-NOT: workgroup
// CHECK-LABEL: gpu.func @negative_batch_kernel{{[0-9]+}}
// CHECK-NOT: workgroup
// CHECK-LABEL: gpu.func @negative_written_factor_kernel{{[0-9]+}}
// CHECK-NOT: workgroup
// CHECK-LABEL: gpu.func @negative_second_store_kernel{{[0-9]+}}
// CHECK-NOT: workgroup
// CHECK-LABEL: gpu.func @negative_epilogue_uses_prologue_kernel{{[0-9]+}}
// CHECK-NOT: workgroup
// CHECK: gpu.return
func.func @negative_few_rows(%in: memref<32x64xf32>, %wt: memref<8x32xf32>, %out: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%o, %n) = (%c0, %c0) to (%c8, %c64) step (%c1, %c1) {
    scf.for %k = %c0 to %c32 step %c1 {
      %a = memref.load %out[%o, %n] : memref<8x64xf32>
      %x = memref.load %in[%k, %n] : memref<32x64xf32>
      %f = memref.load %wt[%o, %k] : memref<8x32xf32>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out[%o, %n] : memref<8x64xf32>
    }
    scf.reduce
  }
  return
}

func.func @negative_batch(%in: memref<4x32x64xf32>, %wt: memref<4x32x32xf32>, %out: memref<4x32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%b, %o, %n) = (%c0, %c0, %c0) to (%c4, %c32, %c64) step (%c1, %c1, %c1) {
    scf.for %k = %c0 to %c32 step %c1 {
      %a = memref.load %out[%b, %o, %n] : memref<4x32x64xf32>
      %x = memref.load %in[%b, %k, %n] : memref<4x32x64xf32>
      %f = memref.load %wt[%b, %o, %k] : memref<4x32x32xf32>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out[%b, %o, %n] : memref<4x32x64xf32>
    }
    scf.reduce
  }
  return
}

func.func @negative_written_factor(%in: memref<32x64xf32>, %wt: memref<32x32xf32>, %out: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %n) = (%c0, %c0) to (%c32, %c64) step (%c1, %c1) {
    scf.for %k = %c0 to %c32 step %c1 {
      %a = memref.load %out[%o, %n] : memref<32x64xf32>
      %x = memref.load %in[%k, %n] : memref<32x64xf32>
      %f = memref.load %wt[%o, %k] : memref<32x32xf32>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out[%o, %n] : memref<32x64xf32>
    }
    memref.store %zero, %in[%o, %n] : memref<32x64xf32>
    scf.reduce
  }
  return
}

func.func @negative_second_store(%in: memref<32x64xf32>, %wt: memref<32x32xf32>, %out: memref<32x64xf32>, %log: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%o, %n) = (%c0, %c0) to (%c32, %c64) step (%c1, %c1) {
    scf.for %k = %c0 to %c32 step %c1 {
      %a = memref.load %out[%o, %n] : memref<32x64xf32>
      %x = memref.load %in[%k, %n] : memref<32x64xf32>
      %f = memref.load %wt[%o, %k] : memref<32x32xf32>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out[%o, %n] : memref<32x64xf32>
      memref.store %p, %log[%o, %n] : memref<32x64xf32>
    }
    scf.reduce
  }
  return
}

func.func @negative_epilogue_uses_prologue(%in: memref<32x64xf32>, %wt: memref<32x32xf32>, %bias: memref<32xf32>, %out: memref<32x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %n) = (%c0, %c0) to (%c32, %c64) step (%c1, %c1) {
    %b = memref.load %bias[%o] : memref<32xf32>
    memref.store %zero, %out[%o, %n] : memref<32x64xf32>
    scf.for %k = %c0 to %c32 step %c1 {
      %a = memref.load %out[%o, %n] : memref<32x64xf32>
      %x = memref.load %in[%k, %n] : memref<32x64xf32>
      %f = memref.load %wt[%o, %k] : memref<32x32xf32>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out[%o, %n] : memref<32x64xf32>
    }
    %r = memref.load %out[%o, %n] : memref<32x64xf32>
    %t = arith.addf %r, %b : f32
    memref.store %t, %out[%o, %n] : memref<32x64xf32>
    scf.reduce
  }
  return
}
