// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels | FileCheck %s

// One loop nest: a kernel over the linearized 4x8 space (one block of 32
// threads, which the kernel declares: the PTX .maxntid), indices
// delinearized innermost-first, guarded against the tail.
// CHECK: module attributes {gpu.container_module}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4x8xf32>)
// CHECK: gpu.launch_func @kernels::@forward_kernel0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%[[A]] : memref<4x8xf32>, %[[B]] : memref<4x8xf32>)
// CHECK-NOT: scf.parallel
// CHECK: gpu.module @kernels
// CHECK: gpu.func @forward_kernel0(%[[KA:.*]]: memref<4x8xf32>, %[[KB:.*]]: memref<4x8xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>}
// CHECK: gpu.block_id x
// CHECK: gpu.thread_id x
// CHECK: arith.cmpi ult
// CHECK: scf.if
// CHECK: arith.remui
// CHECK: arith.divui
// CHECK: memref.load %[[KA]]
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[KB]]
func.func @forward(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<4x8xf32>
    %e = math.exp %v : f32
    memref.store %e, %b[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return
}

// -----

// Fill, accumulate and activate the same elements: one fused kernel whose
// reduction loop runs sequentially in each thread.
// CHECK-LABEL: func.func @fused
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @fused_kernel0
// CHECK: memref.store
// CHECK: scf.for
// CHECK: arith.maximumf
func.func @fused(%x: memref<8x16xf32>, %w: memref<4x16xf32>, %y: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    memref.store %zero, %y[%i, %j] : memref<8x4xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    scf.for %k = %c0 to %c16 step %c1 {
      %xv = memref.load %x[%i, %k] : memref<8x16xf32>
      %wv = memref.load %w[%j, %k] : memref<4x16xf32>
      %acc = memref.load %y[%i, %j] : memref<8x4xf32>
      %m = arith.mulf %xv, %wv : f32
      %s = arith.addf %acc, %m : f32
      memref.store %s, %y[%i, %j] : memref<8x4xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    %v = memref.load %y[%i, %j] : memref<8x4xf32>
    %r = arith.maximumf %v, %zero : f32
    memref.store %r, %y[%i, %j] : memref<8x4xf32>
    scf.reduce
  }
  return
}

// -----

// The second loop reads a neighbour of what the first wrote: fusing would
// race, so the loops stay two kernels.
// CHECK-LABEL: func.func @negative_fuse_neighbour
// CHECK-COUNT-2: gpu.launch_func
func.func @negative_fuse_neighbour(%a: memref<9xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %one, %a[%i] : memref<9xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %n = arith.addi %i, %c1 : index
    %v = memref.load %a[%n] : memref<9xf32>
    memref.store %v, %b[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// Bounds that differ (not only in the order of the dims) never fuse; with
// fuse=0 nothing does.
// CHECK-LABEL: func.func @negative_fuse_bounds
// CHECK-COUNT-2: gpu.launch_func
func.func @negative_fuse_bounds(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %one, %a[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %one, %a[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// A copy into a view becomes an elementwise kernel over whole root buffers:
// the subview is cloned into the kernel. Constants from globals move into
// the kernel module. Work outside parallel loops runs in one thread.
// CHECK-LABEL: func.func @copy_global_sequential
// CHECK-SAME: (%[[X:.*]]: memref<2x4xf32>, %[[Y:.*]]: memref<4x4xf32>)
// CHECK: gpu.launch_func @kernels::@copy_global_sequential_kernel0 {{.*}} args(%[[X]] : memref<2x4xf32>, %[[Y]] : memref<4x4xf32>)
// CHECK: gpu.launch_func @kernels::@copy_global_sequential_kernel1 {{.*}} args(%[[Y]] : memref<4x4xf32>)
// CHECK: gpu.module @kernels
// CHECK: memref.global "private" constant @table
// CHECK: gpu.func @copy_global_sequential_kernel0
// CHECK: memref.subview
// CHECK: gpu.func @copy_global_sequential_kernel1
// CHECK: memref.get_global @table
// CHECK: scf.for
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @copy_global_sequential(%x: memref<2x4xf32>, %y: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %sub = memref.subview %y[2, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 8>>
  memref.copy %x, %sub : memref<2x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 8>>
  %t = memref.get_global @table : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %t[%i] : memref<4xf32>
    memref.store %v, %y[%c0, %i] : memref<4x4xf32>
  }
  return
}

// -----

// A roll: two halves copied into disjoint boxes of one buffer move in one
// launch; each thread picks its copy by comparing its index with 16.
// CHECK-LABEL: func.func @batch_copies
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @batch_copies_kernel0
// CHECK: arith.cmpi ult, %{{.*}}, %c16
// CHECK: scf.if
// CHECK: } else {
// CHECK: arith.subi
func.func @batch_copies(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  %a = memref.subview %x[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  %b = memref.subview %x[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  %ya = memref.subview %y[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  %yb = memref.subview %y[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  memref.copy %a, %ya : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  memref.copy %b, %yb : memref<4x4xf32, strided<[8, 1], offset: 4>> to memref<4x4xf32, strided<[8, 1]>>
  return
}

// -----

// The second copy reads what the first writes: two launches, in order.
// CHECK-LABEL: func.func @negative_batch_dependent_copies
// CHECK-COUNT-2: gpu.launch_func
func.func @negative_batch_dependent_copies(%x: memref<8xf32>, %t: memref<8xf32>, %y: memref<8xf32>) {
  memref.copy %x, %t : memref<8xf32> to memref<8xf32>
  memref.copy %t, %y : memref<8xf32> to memref<8xf32>
  return
}

// -----

// Overlapping targets in one buffer are not batched.
// CHECK-LABEL: func.func @negative_batch_overlapping_targets
// CHECK-COUNT-2: gpu.launch_func
func.func @negative_batch_overlapping_targets(%x: memref<4xf32>, %y: memref<8xf32>) {
  %a = memref.subview %y[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %b = memref.subview %y[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32, strided<[1]>>
  memref.copy %x, %b : memref<4xf32> to memref<4xf32, strided<[1], offset: 2>>
  return
}
