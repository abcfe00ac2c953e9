// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-min-blocks=4" | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-min-blocks=4 workgroup-tile-fuse-nests=false" | FileCheck %s --check-prefix=APART

// Two 1x1 convolutions of one input (64 -> 64 channels on 8 x 8 pixels,
// 64 reduction steps each), as Rolling-UNet's two OR-MLP branches: the same
// bounds, no buffer written by one and read by the other. By default they
// fuse into one kernel (one launch), which, two nests, is no one tiled
// product: one thread per output pair, no workgroup memory. With
// workgroup-tile-fuse-nests=false each is tiled on its own, and the two
// independent tiled loops share one launch: blocks 0-3 run the first
// product's tiles, blocks 4-7 the second's (the block index chooses), each
// with its own workgroup tiles.
// CHECK-LABEL: func.func @sibling_convolutions
// CHECK: gpu.launch_func @kernels::@sibling_convolutions_kernel0
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @sibling_convolutions_kernel0
// CHECK-NOT: workgroup(
// CHECK-SAME: kernel
// CHECK-COUNT-2: scf.for
// APART-LABEL: func.func @sibling_convolutions
// APART: gpu.launch_func @kernels::@sibling_convolutions_kernel0 blocks in (%c8{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c256
// APART-NOT: gpu.launch_func
// APART: gpu.func @sibling_convolutions_kernel0({{.*}}) workgroup(%{{[^:]*}} : memref<2x16x36xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{[^:]*}} : memref<2x16x32xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{[^:]*}} : memref<2x16x36xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{[^:]*}} : memref<2x16x32xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// APART: %[[BLK:.*]] = gpu.block_id x
// APART: %[[FIRST:.*]] = arith.cmpi ult, %[[BLK]], %c4
// APART: scf.if %[[FIRST]] {
// APART: gpu.barrier
// APART: } else {
// APART: arith.subi %[[BLK]], %c4
// APART: gpu.barrier
func.func @sibling_convolutions(%in: memref<64x8x8xf32>, %w1: memref<64x64xf32>, %w2: memref<64x64xf32>, %out1: memref<64x8x8xf32>, %out2: memref<64x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %h, %w) = (%c0, %c0, %c0) to (%c64, %c8, %c8) step (%c1, %c1, %c1) {
    memref.store %zero, %out1[%o, %h, %w] : memref<64x8x8xf32>
    scf.for %c = %c0 to %c64 step %c1 {
      %a = memref.load %out1[%o, %h, %w] : memref<64x8x8xf32>
      %x = memref.load %in[%c, %h, %w] : memref<64x8x8xf32>
      %f = memref.load %w1[%o, %c] : memref<64x64xf32>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out1[%o, %h, %w] : memref<64x8x8xf32>
    }
    scf.reduce
  }
  scf.parallel (%o, %h, %w) = (%c0, %c0, %c0) to (%c64, %c8, %c8) step (%c1, %c1, %c1) {
    memref.store %zero, %out2[%o, %h, %w] : memref<64x8x8xf32>
    scf.for %c = %c0 to %c64 step %c1 {
      %a = memref.load %out2[%o, %h, %w] : memref<64x8x8xf32>
      %x = memref.load %in[%c, %h, %w] : memref<64x8x8xf32>
      %f = memref.load %w2[%o, %c] : memref<64x64xf32>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out2[%o, %h, %w] : memref<64x8x8xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A tiled convolution and the elementwise loop after it (its activation,
// point-wise on its output) still fuse with workgroup-tile-fuse-nests=false:
// one kernel, tiled, the ReLU in its epilogue.
// APART-LABEL: func.func @negative_epilogue_still_fuses
// APART: gpu.launch_func @kernels::@negative_epilogue_still_fuses_kernel0 blocks in (%c4
// APART-NOT: gpu.launch_func
// APART: gpu.func @negative_epilogue_still_fuses_kernel0({{.*}}) workgroup(
// APART: arith.maximumf
func.func @negative_epilogue_still_fuses(%in: memref<64x8x8xf32>, %w1: memref<64x64xf32>, %out1: memref<64x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %h, %w) = (%c0, %c0, %c0) to (%c64, %c8, %c8) step (%c1, %c1, %c1) {
    memref.store %zero, %out1[%o, %h, %w] : memref<64x8x8xf32>
    scf.for %c = %c0 to %c64 step %c1 {
      %a = memref.load %out1[%o, %h, %w] : memref<64x8x8xf32>
      %x = memref.load %in[%c, %h, %w] : memref<64x8x8xf32>
      %f = memref.load %w1[%o, %c] : memref<64x64xf32>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out1[%o, %h, %w] : memref<64x8x8xf32>
    }
    scf.reduce
  }
  scf.parallel (%o, %h, %w) = (%c0, %c0, %c0) to (%c64, %c8, %c8) step (%c1, %c1, %c1) {
    %v = memref.load %out1[%o, %h, %w] : memref<64x8x8xf32>
    %r = arith.maximumf %v, %zero : f32
    memref.store %r, %out1[%o, %h, %w] : memref<64x8x8xf32>
    scf.reduce
  }
  return
}

// -----

// The second convolution reads the first's output: they may not share a
// launch (its blocks could run before the first's), two tiled kernels.
// APART-LABEL: func.func @negative_dependent_tiles_stay_apart
// APART: gpu.launch_func @kernels::@negative_dependent_tiles_stay_apart_kernel0 blocks in (%c4
// APART: gpu.launch_func @kernels::@negative_dependent_tiles_stay_apart_kernel1 blocks in (%c4
func.func @negative_dependent_tiles_stay_apart(%in: memref<64x8x8xf32>, %w1: memref<64x64xf32>, %w2: memref<64x64xf32>, %out1: memref<64x8x8xf32>, %out2: memref<64x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %h, %w) = (%c0, %c0, %c0) to (%c64, %c8, %c8) step (%c1, %c1, %c1) {
    memref.store %zero, %out1[%o, %h, %w] : memref<64x8x8xf32>
    scf.for %c = %c0 to %c64 step %c1 {
      %a = memref.load %out1[%o, %h, %w] : memref<64x8x8xf32>
      %x = memref.load %in[%c, %h, %w] : memref<64x8x8xf32>
      %f = memref.load %w1[%o, %c] : memref<64x64xf32>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out1[%o, %h, %w] : memref<64x8x8xf32>
    }
    scf.reduce
  }
  scf.parallel (%o, %h, %w) = (%c0, %c0, %c0) to (%c64, %c8, %c8) step (%c1, %c1, %c1) {
    memref.store %zero, %out2[%o, %h, %w] : memref<64x8x8xf32>
    scf.for %c = %c0 to %c64 step %c1 {
      %a = memref.load %out2[%o, %h, %w] : memref<64x8x8xf32>
      %x = memref.load %out1[%c, %h, %w] : memref<64x8x8xf32>
      %f = memref.load %w2[%o, %c] : memref<64x64xf32>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out2[%o, %h, %w] : memref<64x8x8xf32>
    }
    scf.reduce
  }
  return
}
