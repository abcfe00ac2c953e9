// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="row-lanes=8" | FileCheck %s --check-prefix=LANES8
// Lanes share a row only where warps do not straddle blocks.
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="block-size=48" | FileCheck %s --check-prefix=BLOCK48

// A LayerNorm over the 40 contiguous elements of each of 5 rows, as row
// fusion leaves it: the sum, the sum of squared deviations (both into
// per-row buffers, zeroed first) and the normalisation. A warp per row (the
// loops read along the innermost dimension): 160 threads, each lane strides
// the row by 32 (lanes 8..31 run one iteration, lanes 0..7 two), sums in
// registers and meets the other lanes in a butterfly; the statistics
// buffers are local and read by no one else, so nothing stores them.
// CHECK-LABEL: func.func @layer_norm_rows
// CHECK: gpu.launch_func @kernels::@layer_norm_rows_kernel0 blocks in (%{{[^,]*}}, {{.*}} threads in (%c160{{[_0-9]*}},
// CHECK-SAME: args(%{{[^ ]*}} : memref<5x40xf32>, %{{[^ ]*}} : memref<40xf32>, %{{[^ ]*}} : memref<5x40xf32>)
// CHECK: gpu.func @layer_norm_rows_kernel0
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32
// CHECK: %[[WARP:.*]] = arith.divui %{{.*}}, %c32
// CHECK: %[[VALID:.*]] = arith.cmpi ult, %{{.*}}, %c5
// CHECK: %[[ROW:.*]] = arith.minui %{{.*}}, %c4
// CHECK: %[[END:.*]] = arith.select %[[VALID]], %c40{{.*}}, %c0
// CHECK: %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[END]] step %c32{{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (f32) {
// CHECK: memref.load %{{.*}}[%[[ROW]], %[[K]]]
// CHECK: arith.addf %[[A]]
// CHECK: gpu.shuffle xor %[[SUM]], %c16_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c8_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c4_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK: arith.addf
// CHECK: %[[TOTAL:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: scf.for {{.*}} step %c32{{.*}} iter_args
// CHECK: arith.mulf %[[TOTAL]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: scf.for %[[K2:.*]] = %{{.*}} to %{{.*}} step %c32
// CHECK-NOT: iter_args
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[ROW]], %[[K2]]] : memref<5x40xf32>
// CHECK-NOT: memref.store
// CHECK: gpu.return
// LANES8-LABEL: func.func @layer_norm_rows
// LANES8: threads in (%c64{{[_0-9]*}},
// BLOCK48-LABEL: func.func @layer_norm_rows
// BLOCK48: threads in (%c32{{[_0-9]*}},
// BLOCK48-NOT: gpu.shuffle
func.func @layer_norm_rows(%x: memref<5x40xf32>, %g: memref<40xf32>, %y: memref<5x40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c40 = arith.constant 40 : index
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.025 : f32
  %eps = arith.constant 1.0e-5 : f32
  %sum = memref.alloc() : memref<5xf32>
  %sq = memref.alloc() : memref<5xf32>
  scf.parallel (%r) = (%c0) to (%c5) step (%c1) {
    memref.store %zero, %sum[%r] : memref<5xf32>
    scf.for %k = %c0 to %c40 step %c1 {
      %v = memref.load %x[%r, %k] : memref<5x40xf32>
      %a = memref.load %sum[%r] : memref<5xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %sum[%r] : memref<5xf32>
    }
    memref.store %zero, %sq[%r] : memref<5xf32>
    scf.for %k = %c0 to %c40 step %c1 {
      %v = memref.load %x[%r, %k] : memref<5x40xf32>
      %m0 = memref.load %sum[%r] : memref<5xf32>
      %m = arith.mulf %m0, %inv : f32
      %d = arith.subf %v, %m : f32
      %dd = arith.mulf %d, %d : f32
      %a = memref.load %sq[%r] : memref<5xf32>
      %s = arith.addf %a, %dd : f32
      memref.store %s, %sq[%r] : memref<5xf32>
    }
    scf.for %k = %c0 to %c40 step %c1 {
      %v = memref.load %x[%r, %k] : memref<5x40xf32>
      %m0 = memref.load %sum[%r] : memref<5xf32>
      %m = arith.mulf %m0, %inv : f32
      %q0 = memref.load %sq[%r] : memref<5xf32>
      %var = arith.mulf %q0, %inv : f32
      %ve = arith.addf %var, %eps : f32
      %den = math.sqrt %ve : f32
      %d = arith.subf %v, %m : f32
      %n = arith.divf %d, %den : f32
      %gk = memref.load %g[%k] : memref<40xf32>
      %o = arith.mulf %n, %gk : f32
      memref.store %o, %y[%r, %k] : memref<5x40xf32>
    }
    scf.reduce
  }
  return
}

// -----

// The channels of a 1x40x6x5 tensor normalised at each of the 30 positions
// (the token layout after --gpuopt-optimize: the row's elements 30 apart,
// neighbouring rows neighbouring elements). By the layout, 4 lanes per row
// and 8 rows per warp, so that a warp's load of one channel reads 8
// contiguous floats: 4 warps, 128 threads; the butterfly combines the lanes
// 8 and 16 apart. The mean is an argument, so the first lane of each valid
// row stores it, once, after the loops.
// CHECK-LABEL: func.func @layer_norm_strided
// CHECK: threads in (%c128{{[_0-9]*}},
// CHECK: gpu.func @layer_norm_strided_kernel0
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32
// CHECK: %[[INWARP:.*]] = arith.remui %[[LANE]], %c8
// CHECK: %[[OF:.*]] = arith.divui %[[LANE]], %c8
// CHECK: %[[VALID:.*]] = arith.cmpi ult, %{{.*}}, %c30
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[OF]], %c0
// CHECK: %[[LEADER:.*]] = arith.andi %[[VALID]], %[[FIRST]]
// CHECK: %[[ROW:.*]] = arith.minui %{{.*}}, %c29
// CHECK: %[[HW:.*]]:2 = affine.delinearize_index %[[ROW]] into (6, 5)
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %c4{{.*}} iter_args
// CHECK: memref.load %{{.*}}[%c0{{.*}}, %[[C]], %[[HW]]#0, %[[HW]]#1]
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c8_i32
// CHECK-NOT: gpu.shuffle
// CHECK: %[[MEAN:.*]] = arith.mulf
// CHECK: scf.for %[[C2:.*]] = %{{.*}} step %c4
// CHECK: memref.store %{{.*}}, %{{.*}}[%c0{{.*}}, %[[C2]], %[[HW]]#0, %[[HW]]#1] : memref<1x40x6x5xf32>
// CHECK: scf.if %[[LEADER]] {
// CHECK-NEXT: memref.store %[[MEAN]], %{{.*}}[%c0{{.*}}, %c0{{.*}}, %[[HW]]#0, %[[HW]]#1] : memref<1x1x6x5xf32>
// CHECK-NOT: memref.store
// CHECK: gpu.return
// LANES8-LABEL: func.func @layer_norm_strided
// LANES8: threads in (%c256{{[_0-9]*}},
// LANES8: gpu.shuffle xor %{{.*}}, %c16_i32
// LANES8: gpu.shuffle xor %{{.*}}, %c8_i32
// LANES8: gpu.shuffle xor %{{.*}}, %c4_i32
// LANES8-NOT: gpu.shuffle
// LANES8: gpu.return
func.func @layer_norm_strided(%x: memref<1x40x6x5xf32>, %mean: memref<1x1x6x5xf32>, %y: memref<1x40x6x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c40 = arith.constant 40 : index
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.025 : f32
  scf.parallel (%h, %w) = (%c0, %c0) to (%c6, %c5) step (%c1, %c1) {
    memref.store %zero, %mean[%c0, %c0, %h, %w] : memref<1x1x6x5xf32>
    scf.for %c = %c0 to %c40 step %c1 {
      %v = memref.load %x[%c0, %c, %h, %w] : memref<1x40x6x5xf32>
      %a = memref.load %mean[%c0, %c0, %h, %w] : memref<1x1x6x5xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %mean[%c0, %c0, %h, %w] : memref<1x1x6x5xf32>
    }
    %m0 = memref.load %mean[%c0, %c0, %h, %w] : memref<1x1x6x5xf32>
    %m = arith.mulf %m0, %inv : f32
    memref.store %m, %mean[%c0, %c0, %h, %w] : memref<1x1x6x5xf32>
    scf.for %c = %c0 to %c40 step %c1 {
      %v = memref.load %x[%c0, %c, %h, %w] : memref<1x40x6x5xf32>
      %mm = memref.load %mean[%c0, %c0, %h, %w] : memref<1x1x6x5xf32>
      %d = arith.subf %v, %mm : f32
      memref.store %d, %y[%c0, %c, %h, %w] : memref<1x40x6x5xf32>
    }
    scf.reduce
  }
  return
}

// -----

// One sum per row and no loop after it (a linear layer's shape): not a row
// kernel that the lanes could share; one thread per row.
// CHECK-LABEL: func.func @negative_warp_rows_single_sum
// CHECK: threads in (%c32{{[_0-9]*}},
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @negative_warp_rows_single_sum(%x: memref<5x40xf32>, %y: memref<5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c40 = arith.constant 40 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%r) = (%c0) to (%c5) step (%c1) {
    memref.store %zero, %y[%r] : memref<5xf32>
    scf.for %k = %c0 to %c40 step %c1 {
      %v = memref.load %x[%r, %k] : memref<5x40xf32>
      %a = memref.load %y[%r] : memref<5xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %y[%r] : memref<5xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A running sum: each element gets the sum of the row up to it, which a
// lane's partial sum is not. One thread per row.
// CHECK-LABEL: func.func @negative_warp_rows_running_sum
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @negative_warp_rows_running_sum(%x: memref<5x40xf32>, %y: memref<5x40xf32>, %z: memref<5x40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c40 = arith.constant 40 : index
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<5xf32>
  scf.parallel (%r) = (%c0) to (%c5) step (%c1) {
    memref.store %zero, %sum[%r] : memref<5xf32>
    scf.for %k = %c0 to %c40 step %c1 {
      %v = memref.load %x[%r, %k] : memref<5x40xf32>
      %a = memref.load %sum[%r] : memref<5xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %sum[%r] : memref<5xf32>
      memref.store %s, %y[%r, %k] : memref<5x40xf32>
    }
    scf.for %k = %c0 to %c40 step %c1 {
      %v = memref.load %x[%r, %k] : memref<5x40xf32>
      %t = memref.load %sum[%r] : memref<5xf32>
      %d = arith.subf %v, %t : f32
      memref.store %d, %z[%r, %k] : memref<5x40xf32>
    }
    scf.reduce
  }
  return
}

// -----

// The row's maximum, then each element minus it: only sums are combined
// across lanes. One thread per row.
// CHECK-LABEL: func.func @negative_warp_rows_max
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @negative_warp_rows_max(%x: memref<5x40xf32>, %y: memref<5x40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c40 = arith.constant 40 : index
  %low = arith.constant -3.0e38 : f32
  %top = memref.alloc() : memref<5xf32>
  scf.parallel (%r) = (%c0) to (%c5) step (%c1) {
    memref.store %low, %top[%r] : memref<5xf32>
    scf.for %k = %c0 to %c40 step %c1 {
      %v = memref.load %x[%r, %k] : memref<5x40xf32>
      %a = memref.load %top[%r] : memref<5xf32>
      %s = arith.maximumf %a, %v : f32
      memref.store %s, %top[%r] : memref<5xf32>
    }
    scf.for %k = %c0 to %c40 step %c1 {
      %v = memref.load %x[%r, %k] : memref<5x40xf32>
      %t = memref.load %top[%r] : memref<5xf32>
      %d = arith.subf %v, %t : f32
      memref.store %d, %y[%r, %k] : memref<5x40xf32>
    }
    scf.reduce
  }
  return
}

// -----

// The sum starts from what the buffer held before the kernel (no store of
// its initial value in the row): its lanes cannot all read it before the
// first of them stores the total. One thread per row.
// CHECK-LABEL: func.func @negative_warp_rows_unknown_initial_value
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @negative_warp_rows_unknown_initial_value(%x: memref<5x40xf32>, %sum: memref<5xf32>, %y: memref<5x40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c40 = arith.constant 40 : index
  scf.parallel (%r) = (%c0) to (%c5) step (%c1) {
    scf.for %k = %c0 to %c40 step %c1 {
      %v = memref.load %x[%r, %k] : memref<5x40xf32>
      %a = memref.load %sum[%r] : memref<5xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %sum[%r] : memref<5xf32>
    }
    scf.for %k = %c0 to %c40 step %c1 {
      %v = memref.load %x[%r, %k] : memref<5x40xf32>
      %t = memref.load %sum[%r] : memref<5xf32>
      %d = arith.subf %v, %t : f32
      memref.store %d, %y[%r, %k] : memref<5x40xf32>
    }
    scf.reduce
  }
  return
}
