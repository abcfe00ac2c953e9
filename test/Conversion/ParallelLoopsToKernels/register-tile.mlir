// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="register-tile=4" | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="register-tile=4" --promote-loop-accumulators | FileCheck %s --check-prefix=PROMOTE
// The default is one output per thread.
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels | FileCheck %s --check-prefix=ONE

// A convolution-like reduction over 8 output channels of a 4x4 map: the
// input does not depend on %o, the weight does. With a tile of 4, 2 x 16
// threads each compute channels 4t .. 4t + 3 of one pixel: one input load
// and 4 weight loads per reduction step, 4 accumulators; the fill and the
// epilogue are interleaved too. 8 = 2 x 4: no remainder.
// CHECK-LABEL: func.func @conv_like
// CHECK: gpu.func @conv_like_kernel0(%[[OUT:[^:]*]]: memref<8x4x4xf32>, %[[IN:[^:]*]]: memref<16x4x4xf32>, %[[WT:[^:]*]]: memref<8x16xf32>
// CHECK: arith.cmpi ult, %{{.*}}, %c32{{[_0-9]*}} : index
// CHECK: %[[O0:.*]] = arith.muli %{{.*}}, %c4
// CHECK: %[[O1:.*]] = arith.addi %[[O0]], %c1
// CHECK: %[[O2:.*]] = arith.addi %[[O0]], %c2
// CHECK: %[[O3:.*]] = arith.addi %[[O0]], %c3
// CHECK-NOT: scf.if
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[O0]], %[[H:[0-9a-z_]+]], %[[W:[0-9a-z_]+]]]
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[O1]], %[[H]], %[[W]]]
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[O2]], %[[H]], %[[W]]]
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[O3]], %[[H]], %[[W]]]
// CHECK: scf.for %[[C:.*]] = %c0{{.*}} to %c16
// CHECK-COUNT-4: memref.load %[[OUT]]
// CHECK: memref.load %[[IN]][%[[C]], %[[H]], %[[W]]]
// CHECK-NOT: memref.load %[[IN]]
// CHECK: memref.load %[[WT]][%[[O0]], %[[C]]]
// CHECK: memref.load %[[WT]][%[[O1]], %[[C]]]
// CHECK: memref.load %[[WT]][%[[O2]], %[[C]]]
// CHECK: memref.load %[[WT]][%[[O3]], %[[C]]]
// CHECK-NOT: memref.load %[[IN]]
// CHECK-COUNT-4: memref.store %{{.*}}, %[[OUT]]
// CHECK: }
// CHECK-COUNT-4: arith.maximumf
// CHECK: gpu.return
// The four accumulators leave the loop together.
// PROMOTE-LABEL: gpu.func @conv_like_kernel0
// PROMOTE: scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
// PROMOTE-NOT: memref.store
// PROMOTE: scf.yield
// ONE-LABEL: gpu.func @conv_like_kernel0
// ONE: arith.cmpi ult, %{{.*}}, %c128{{[_0-9]*}} : index
// ONE-COUNT-1: memref.load %{{.*}} : memref<8x16xf32>
// ONE-NOT: memref.load %{{.*}} : memref<8x16xf32>
func.func @conv_like(%in: memref<16x4x4xf32>, %wt: memref<8x16xf32>, %out: memref<8x4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %h, %w) = (%c0, %c0, %c0) to (%c8, %c4, %c4) step (%c1, %c1, %c1) {
    memref.store %zero, %out[%o, %h, %w] : memref<8x4x4xf32>
    scf.for %c = %c0 to %c16 step %c1 {
      %a = memref.load %out[%o, %h, %w] : memref<8x4x4xf32>
      %x = memref.load %in[%c, %h, %w] : memref<16x4x4xf32>
      %f = memref.load %wt[%o, %c] : memref<8x16xf32>
      %p = arith.mulf %x, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out[%o, %h, %w] : memref<8x4x4xf32>
    }
    %r = memref.load %out[%o, %h, %w] : memref<8x4x4xf32>
    %y = arith.maximumf %r, %zero : f32
    memref.store %y, %out[%o, %h, %w] : memref<8x4x4xf32>
    scf.reduce
  }
  return
}

// -----

// 6 output channels (step 2 from 1: 1, 3, ..., 11) of a linear with a tile
// of 4: two iterations of the new range; the first computes 4 channels
// interleaved, the second (6 = 4 + 2) runs the remaining 2 one after the
// other with the original body, so every size is covered exactly once.
// CHECK-LABEL: gpu.func @remainder_kernel0
// CHECK: arith.cmpi ult, %{{.*}}, %c6{{[_0-9]*}} : index
// CHECK: %[[T:.*]] = arith.divui %{{.*}}, %c3
// CHECK: %[[FIRST:.*]] = arith.muli %[[T]], %c4
// CHECK: %[[FULL:.*]] = arith.cmpi ult, %[[T]], %c1
// CHECK: scf.if %[[FULL]] {
// CHECK: scf.for
// CHECK-COUNT-1: memref.load %{{.*}} : memref<3x5xf32>
// CHECK-COUNT-4: memref.load %{{.*}} : memref<12x5xf32>
// CHECK: } else {
// CHECK: scf.for %[[I:.*]] = %[[FIRST]] to %c6{{.*}} step %c1
// CHECK: %[[O:.*]] = arith.muli %[[I]], %c2
// CHECK: %[[O1:.*]] = arith.addi %[[O]], %c1
// CHECK: scf.for
// CHECK: memref.load %{{.*}} : memref<3x5xf32>
// CHECK: memref.load %{{.*}}[%[[O1]], %{{.*}}] : memref<12x5xf32>
// CHECK-NOT: memref.load %{{.*}} : memref<12x5xf32>
// CHECK: gpu.return
func.func @remainder(%x: memref<3x5xf32>, %wt: memref<12x5xf32>, %out: memref<3x12xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c13 = arith.constant 13 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %m) = (%c1, %c0) to (%c13, %c3) step (%c2, %c1) {
    memref.store %zero, %out[%m, %o] : memref<3x12xf32>
    scf.for %k = %c0 to %c5 step %c1 {
      %a = memref.load %out[%m, %o] : memref<3x12xf32>
      %v = memref.load %x[%m, %k] : memref<3x5xf32>
      %f = memref.load %wt[%o, %k] : memref<12x5xf32>
      %p = arith.mulf %v, %f : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %out[%m, %o] : memref<3x12xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A tile longer than the dimension: 2 output channels, a tile of 2.
// CHECK-LABEL: gpu.func @short_dimension_kernel0
// CHECK: arith.cmpi ult, %{{.*}}, %c4{{[_0-9]*}} : index
// CHECK: scf.if
// CHECK-NOT: scf.if
// CHECK: scf.for
// CHECK-COUNT-1: memref.load %{{.*}} : memref<6x4xf32>
// CHECK-COUNT-2: memref.load %{{.*}} : memref<2x6xf32>
// CHECK: gpu.return
func.func @short_dimension(%x: memref<6x4xf32>, %wt: memref<2x6xf32>, %out: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  scf.parallel (%o, %w) = (%c0, %c0) to (%c2, %c4) step (%c1, %c1) {
    scf.for %k = %c0 to %c6 step %c1 {
      %a = memref.load %out[%o, %w] : memref<2x4xf32>
      %v = memref.load %x[%k, %w] : memref<6x4xf32>
      %f = memref.load %wt[%o, %k] : memref<2x6xf32>
      %s = math.fma %v, %f, %a : f32
      memref.store %s, %out[%o, %w] : memref<2x4xf32>
    }
    scf.reduce
  }
  return
}

// -----

// No reduction: an elementwise product of a row and a column has an operand
// that does not depend on %o, but nothing to accumulate; one thread per
// element stays.
// CHECK-LABEL: gpu.func @negative_no_reduction_kernel0
// CHECK: arith.cmpi ult, %{{.*}}, %c32{{[_0-9]*}} : index
// CHECK-NOT: scf.for
// CHECK-COUNT-1: memref.load %{{.*}} : memref<8xf32>
// CHECK-NOT: memref.load %{{.*}} : memref<8xf32>
func.func @negative_no_reduction(%row: memref<4xf32>, %col: memref<8xf32>, %out: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%o, %w) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    %a = memref.load %row[%w] : memref<4xf32>
    %b = memref.load %col[%o] : memref<8xf32>
    %p = arith.mulf %a, %b : f32
    memref.store %p, %out[%o, %w] : memref<8x4xf32>
    scf.reduce
  }
  return
}

// -----

// Every operand of the reduction depends on every parallel index (a
// per-row dot product of two matrices): nothing to share, not tiled.
// CHECK-LABEL: gpu.func @negative_input_depends_on_every_index_kernel0
// CHECK: arith.cmpi ult, %{{.*}}, %c32{{[_0-9]*}} : index
// CHECK-NOT: arith.muli %{{.*}}, %c4
// CHECK: scf.for
// CHECK-COUNT-1: memref.load %{{.*}} : memref<8x4x16xf32>
// CHECK-COUNT-1: memref.load %{{.*}} : memref<8x4x16xf32>
// CHECK-NOT: memref.load %{{.*}} : memref<8x4x16xf32>
func.func @negative_input_depends_on_every_index(%x: memref<8x4x16xf32>, %y: memref<8x4x16xf32>, %out: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%o, %h) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    scf.for %k = %c0 to %c16 step %c1 {
      %a = memref.load %out[%o, %h] : memref<8x4xf32>
      %u = memref.load %x[%o, %h, %k] : memref<8x4x16xf32>
      %v = memref.load %y[%o, %h, %k] : memref<8x4x16xf32>
      %s = math.fma %u, %v, %a : f32
      memref.store %s, %out[%o, %h] : memref<8x4xf32>
    }
    scf.reduce
  }
  return
}
