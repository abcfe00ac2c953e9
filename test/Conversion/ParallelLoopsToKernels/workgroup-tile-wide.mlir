// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-max-thread-outputs=64" | FileCheck %s
// A wide shape needs at least workgroup-tile-min-blocks blocks: with 2,
// the 128 x 128 product takes 8 x 4 thread tiles in two blocks.
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-max-thread-outputs=64 workgroup-tile-min-blocks=2" | FileCheck %s --check-prefix=BLOCKS
// 32: 8 x 4 and 4 x 8 at most.
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-max-thread-outputs=32" | FileCheck %s --check-prefix=MAX32
// TF32 tensor cores: 8 warps of 64 x 32 (2 x 4) for 128 x 128.
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-max-thread-outputs=64 workgroup-tile-tensor-cores=true" | FileCheck %s --check-prefix=TC
// Off at the pass (16: 4 x 4 thread tiles at most; the GPU pipeline sets 64).
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true" | FileCheck %s --check-prefix=NARROW

// workgroup-tile.mlir's 1x1 convolution with 128 output channels of an
// 8x16 map: M = 128, N = 128, K = 32. One block of 128 x 128 outputs, 8 x 8
// per thread, is predicted faster than four of 64 x 64 (one multiprocessor,
// workgroup-tile-min-blocks = 1, runs all four): per step a thread reads
// its 8 rows as one 16-byte-aligned vector of 8 (two ld.shared.v4: rows of
// 132 words keep no 32-byte alignment) and its 8 columns as 4 pairs, for 64
// multiply-adds. Operand tiles of 128 (+ 4) and 128 columns, two buffers.
// CHECK-LABEL: func.func @wide_8x8
// CHECK: gpu.launch_func @kernels::@wide_8x8_kernel0 blocks in (%c1{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c256
// CHECK: gpu.func @wide_8x8_kernel0
// CHECK-SAME: workgroup(%[[XS:.*]] : memref<2x16x132xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[YS:.*]] : memref<2x16x128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: %{{.*}}:64 = scf.for
// CHECK: %{{.*}}:64 = scf.for %[[K:.*]] = %c0{{[_0-9]*}} to %c16{{[_0-9]*}} step %c1
// CHECK-NEXT: vector.load %[[XS]][%{{.*}}, %[[K]], %{{.*}}] {alignment = 16 : i64} : memref<2x16x132xf32, #gpu.address_space<workgroup>>, vector<8xf32>
// CHECK-COUNT-8: vector.extract
// CHECK-COUNT-4: vector.load %[[YS]][%{{.*}}, %[[K]], %{{.*}}] {alignment = 8 : i64} : memref<2x16x128xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-COUNT-64: arith.addf
// CHECK-NEXT: scf.yield
// BLOCKS-LABEL: func.func @wide_8x8
// BLOCKS: blocks in (%c2
// BLOCKS: workgroup(%{{.*}} : memref<2x16x132xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2x16x64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// BLOCKS: %{{.*}}:32 = scf.for
// MAX32-LABEL: func.func @wide_8x8
// MAX32: workgroup(%{{.*}} : memref<2x16x132xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2x16x64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// MAX32: %{{.*}}:32 = scf.for
// TC-LABEL: func.func @wide_8x8
// TC: workgroup(%{{.*}} : memref<2x16x136xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2x8x132x2xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// TC: %{{.*}}:64 = scf.for
// TC: %{{.*}}:64 = scf.for %{{.*}} = %c0{{[_0-9]*}} to %c16{{[_0-9]*}} step %c8
// TC-COUNT-16: nvgpu.mma.sync
// TC-NOT: nvgpu.mma.sync
// TC: scf.yield
// NARROW-LABEL: func.func @wide_8x8
// NARROW: blocks in (%c4
// NARROW: workgroup(%{{.*}} : memref<2x16x68xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2x16x64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// NARROW: %{{.*}}:16 = scf.for
func.func @wide_8x8(%in: memref<32x8x16xf32>, %wt: memref<128x32xf32>, %bias: memref<128xf32>, %out: memref<128x8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %h, %w) = (%c0, %c0, %c0) to (%c128, %c8, %c16) step (%c1, %c1, %c1) {
    memref.store %zero, %out[%o, %h, %w] : memref<128x8x16xf32>
    scf.for %c = %c0 to %c32 step %c1 {
      %a = memref.load %out[%o, %h, %w] : memref<128x8x16xf32>
      %x = memref.load %in[%c, %h, %w] : memref<32x8x16xf32>
      %f = memref.load %wt[%o, %c] : memref<128x32xf32>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out[%o, %h, %w] : memref<128x8x16xf32>
    }
    %r = memref.load %out[%o, %h, %w] : memref<128x8x16xf32>
    %b = memref.load %bias[%o] : memref<128xf32>
    %t = arith.addf %r, %b : f32
    %y = arith.maximumf %t, %zero : f32
    memref.store %y, %out[%o, %h, %w] : memref<128x8x16xf32>
    scf.reduce
  }
  return
}

// -----

// M = 128, N = 64: one block of 128 x 64, 8 x 4 per thread (8 rows as one
// vector, 2 pairs, 32 multiply-adds), against two of 64 x 64.
// CHECK-LABEL: func.func @wide_8x4
// CHECK: blocks in (%c1
// CHECK: workgroup(%[[XS:.*]] : memref<2x16x132xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[YS:.*]] : memref<2x16x64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: %{{.*}}:32 = scf.for
// CHECK: %{{.*}}:32 = scf.for %[[K:.*]] = %c0{{[_0-9]*}} to %c16{{[_0-9]*}} step %c1
// CHECK-NEXT: vector.load %[[XS]][%{{.*}}, %[[K]], %{{.*}}] {alignment = 16 : i64} : memref<2x16x132xf32, #gpu.address_space<workgroup>>, vector<8xf32>
// CHECK-COUNT-8: vector.extract
// CHECK-COUNT-2: vector.load %[[YS]][%{{.*}}, %[[K]], %{{.*}}] {alignment = 8 : i64} : memref<2x16x64xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-COUNT-32: arith.addf
// CHECK-NEXT: scf.yield
// With 2 blocks at least, two of 64 x 64 (4 x 4).
// BLOCKS-LABEL: func.func @wide_8x4
// BLOCKS: blocks in (%c2
// BLOCKS: workgroup(%{{.*}} : memref<2x16x68xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2x16x64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// BLOCKS: %{{.*}}:16 = scf.for
// NARROW-LABEL: func.func @wide_8x4
// NARROW: blocks in (%c2
// NARROW: %{{.*}}:16 = scf.for
func.func @wide_8x4(%in: memref<32x8x8xf32>, %wt: memref<128x32xf32>, %bias: memref<128xf32>, %out: memref<128x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %h, %w) = (%c0, %c0, %c0) to (%c128, %c8, %c8) step (%c1, %c1, %c1) {
    memref.store %zero, %out[%o, %h, %w] : memref<128x8x8xf32>
    scf.for %c = %c0 to %c32 step %c1 {
      %a = memref.load %out[%o, %h, %w] : memref<128x8x8xf32>
      %x = memref.load %in[%c, %h, %w] : memref<32x8x8xf32>
      %f = memref.load %wt[%o, %c] : memref<128x32xf32>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out[%o, %h, %w] : memref<128x8x8xf32>
    }
    %r = memref.load %out[%o, %h, %w] : memref<128x8x8xf32>
    %b = memref.load %bias[%o] : memref<128xf32>
    %t = arith.addf %r, %b : f32
    %y = arith.maximumf %t, %zero : f32
    memref.store %y, %out[%o, %h, %w] : memref<128x8x8xf32>
    scf.reduce
  }
  return
}

// -----

// M = 64, N = 64: every wide shape would pad the product to twice its
// size; one 64 x 64 block, 4 x 4 per thread.
// CHECK-LABEL: func.func @negative_wide_padding
// CHECK: blocks in (%c1
// CHECK: workgroup(%{{.*}} : memref<2x16x68xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2x16x64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: %{{.*}}:16 = scf.for
// CHECK-NOT: vector<8xf32>
// CHECK: gpu.return
func.func @negative_wide_padding(%in: memref<32x8x8xf32>, %wt: memref<64x32xf32>, %bias: memref<64xf32>, %out: memref<64x8x8xf32>) {
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
