// Without copy elision (elide-copies.mlir tests it), which would remove the
// temporary of @fuse_across_alloc and with it the allocation between loops;
// without the warp mapping of row kernels (warp-rows.mlir tests it), so that
// the fused row kernels show as fusion made them.
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="elide-copies=0 warp-rows=0" | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="warp-rows=0" | FileCheck %s --check-prefix=ELIDE

// A convolution's accumulation and its bias epilogue with the allocation of
// the epilogue's output between them (what bufferization emits): the
// allocation moves above the first loop and both loops are one kernel (the
// second launch is the copy into the out-parameter).
// CHECK-LABEL: func.func @fuse_across_alloc
// CHECK: memref.alloc() : memref<8x4xf32>
// CHECK: memref.alloc() : memref<8x4xf32>
// CHECK: gpu.launch_func @kernels::@fuse_across_alloc_kernel0
// CHECK: gpu.launch_func @kernels::@fuse_across_alloc_kernel1
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @fuse_across_alloc_kernel0
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: }
// CHECK: arith.maximumf
// With copy elision the epilogue stores into the out-parameter: one
// allocation, one kernel, no copy.
// ELIDE-LABEL: func.func @fuse_across_alloc
// ELIDE-COUNT-1: memref.alloc
// ELIDE-NOT: memref.alloc
// ELIDE-COUNT-1: gpu.launch_func
// ELIDE-NOT: gpu.launch_func
// ELIDE-NOT: memref.copy
func.func @fuse_across_alloc(%x: memref<8x16xf32>, %w: memref<4x16xf32>, %y: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<8x4xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    memref.store %zero, %acc[%i, %j] : memref<8x4xf32>
    scf.for %k = %c0 to %c16 step %c1 {
      %xv = memref.load %x[%i, %k] : memref<8x16xf32>
      %wv = memref.load %w[%j, %k] : memref<4x16xf32>
      %a = memref.load %acc[%i, %j] : memref<8x4xf32>
      %p = arith.mulf %xv, %wv : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %acc[%i, %j] : memref<8x4xf32>
    }
    scf.reduce
  }
  %t = memref.alloc() : memref<8x4xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    %a = memref.load %acc[%i, %j] : memref<8x4xf32>
    %r = arith.maximumf %a, %zero : f32
    memref.store %r, %t[%i, %j] : memref<8x4xf32>
    scf.reduce
  }
  memref.copy %t, %y : memref<8x4xf32> to memref<8x4xf32>
  return
}

// -----

// A LayerNorm over the channels of a 1x8x2x3 tensor: the mean of each of
// the 2x3 positions (a loop over the positions, summing the 8 channels), then
// the normalisation of all 8x2x3 elements. The normalisation reads the mean
// only at its own position, so one thread per position computes the mean
// and then writes its 8 channels: one kernel of 6 threads, the channel loop
// of the second loop sequential in it.
// CHECK-LABEL: func.func @row_fusion
// ELIDE-LABEL: func.func @row_fusion
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @row_fusion_kernel0
// CHECK: arith.cmpi ult, %{{.*}}, %c6
// CHECK: scf.for
// CHECK: arith.addf
// CHECK: }
// CHECK: arith.divf
// CHECK: scf.for %[[C:.*]] = %c0{{.*}} to %c8{{.*}} step %c1
// CHECK: memref.load %{{.*}}[%c0, %[[C]],
// CHECK: arith.subf
// CHECK: memref.store %{{.*}}[%c0, %[[C]],
func.func @row_fusion(%x: memref<1x8x2x3xf32>, %y: memref<1x8x2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %mean = memref.alloc() : memref<1x1x2x3xf32>
  scf.parallel (%h, %w) = (%c0, %c0) to (%c2, %c3) step (%c1, %c1) {
    memref.store %zero, %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
    scf.for %c = %c0 to %c8 step %c1 {
      %v = memref.load %x[%c0, %c, %h, %w] : memref<1x8x2x3xf32>
      %m = memref.load %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
      %s = arith.addf %m, %v : f32
      memref.store %s, %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
    }
    %m = memref.load %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
    %d = arith.divf %m, %n : f32
    memref.store %d, %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
    scf.reduce
  }
  scf.parallel (%c, %h, %w) = (%c0, %c0, %c0) to (%c8, %c2, %c3) step (%c1, %c1, %c1) {
    %v = memref.load %x[%c0, %c, %h, %w] : memref<1x8x2x3xf32>
    %m = memref.load %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
    %r = arith.subf %v, %m : f32
    memref.store %r, %y[%c0, %c, %h, %w] : memref<1x8x2x3xf32>
    scf.reduce
  }
  return
}

// -----

// A per-channel loop without a reduction before a loop over all elements:
// fusing would leave 8 threads doing 6 elements each where the second loop
// had 48 threads. Two kernels.
// CHECK-LABEL: func.func @negative_row_fusion_no_reduction
// CHECK-COUNT-2: gpu.launch_func
// CHECK-NOT: gpu.launch_func
func.func @negative_row_fusion_no_reduction(%x: memref<8x6xf32>, %b: memref<8xf32>, %y: memref<8x6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %s = memref.alloc() : memref<8xf32>
  scf.parallel (%c) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %b[%c] : memref<8xf32>
    %e = math.exp %v : f32
    memref.store %e, %s[%c] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%c, %i) = (%c0, %c0) to (%c8, %c6) step (%c1, %c1) {
    %v = memref.load %x[%c, %i] : memref<8x6xf32>
    %e = memref.load %s[%c] : memref<8xf32>
    %r = arith.mulf %v, %e : f32
    memref.store %r, %y[%c, %i] : memref<8x6xf32>
    scf.reduce
  }
  return
}

// -----

// The second loop reads the row sums at another row (the sum of row i+1 for
// row i): a thread of the first loop does not own what it would read. Two
// kernels.
// CHECK-LABEL: func.func @negative_row_fusion_other_row
// CHECK-COUNT-2: gpu.launch_func
// CHECK-NOT: gpu.launch_func
func.func @negative_row_fusion_other_row(%x: memref<5x8xf32>, %y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<5xf32>
  scf.parallel (%i) = (%c0) to (%c5) step (%c1) {
    memref.store %zero, %sum[%i] : memref<5xf32>
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %j] : memref<5x8xf32>
      %m = memref.load %sum[%i] : memref<5xf32>
      %s = arith.addf %m, %v : f32
      memref.store %s, %sum[%i] : memref<5xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %i1 = arith.addi %i, %c1 : index
    %v = memref.load %x[%i, %j] : memref<5x8xf32>
    %m = memref.load %sum[%i1] : memref<5xf32>
    %r = arith.subf %v, %m : f32
    memref.store %r, %y[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return
}

// -----

// The row statistics reduce 8 elements per row, the second loop would give
// each row's thread 64 (its two trailing indices, 8x8): more sequential work
// than the reduction it joins. Two kernels.
// CHECK-LABEL: func.func @negative_row_fusion_longer_than_reduction
// CHECK-COUNT-2: gpu.launch_func
// CHECK-NOT: gpu.launch_func
func.func @negative_row_fusion_longer_than_reduction(%x: memref<4x8xf32>, %z: memref<4x8x8xf32>, %y: memref<4x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %zero, %sum[%i] : memref<4xf32>
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      %m = memref.load %sum[%i] : memref<4xf32>
      %s = arith.addf %m, %v : f32
      memref.store %s, %sum[%i] : memref<4xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c4, %c8, %c8) step (%c1, %c1, %c1) {
    %v = memref.load %z[%i, %j, %k] : memref<4x8x8xf32>
    %m = memref.load %sum[%i] : memref<4xf32>
    %r = arith.subf %v, %m : f32
    memref.store %r, %y[%i, %j, %k] : memref<4x8x8xf32>
    scf.reduce
  }
  return
}

// -----

// A depthwise convolution iterates (h, w, c), its output's fill and its
// epilogue (c, h, w): the same iterations in another order, matched through
// the output buffer. One kernel, in the fill's (c, h, w) order.
// CHECK-LABEL: func.func @permuted_dims
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @permuted_dims_kernel0
// CHECK: memref.store %cst, %{{.*}}[%[[C:.*]], %[[H:.*]], %[[W:.*]]] : memref<8x4x4xf32>
// CHECK: scf.for
// CHECK: memref.load %{{.*}}[%[[C]], %[[H]], %[[W]]] : memref<8x4x4xf32>
// CHECK: arith.mulf
// CHECK: }
// CHECK: arith.maximumf
func.func @permuted_dims(%x: memref<8x6x6xf32>, %w: memref<8x3xf32>, %y: memref<8x4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<8x4x4xf32>
  scf.parallel (%c, %h, %v) = (%c0, %c0, %c0) to (%c8, %c4, %c4) step (%c1, %c1, %c1) {
    memref.store %zero, %acc[%c, %h, %v] : memref<8x4x4xf32>
    scf.reduce
  }
  scf.parallel (%h, %v, %c) = (%c0, %c0, %c0) to (%c4, %c4, %c8) step (%c1, %c1, %c1) {
    scf.for %k = %c0 to %c3 step %c1 {
      %hk = arith.addi %h, %k : index
      %xv = memref.load %x[%c, %hk, %v] : memref<8x6x6xf32>
      %wv = memref.load %w[%c, %k] : memref<8x3xf32>
      %a = memref.load %acc[%c, %h, %v] : memref<8x4x4xf32>
      %p = arith.mulf %xv, %wv : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %acc[%c, %h, %v] : memref<8x4x4xf32>
    }
    scf.reduce
  }
  scf.parallel (%c, %h, %v) = (%c0, %c0, %c0) to (%c8, %c4, %c4) step (%c1, %c1, %c1) {
    %a = memref.load %acc[%c, %h, %v] : memref<8x4x4xf32>
    %r = arith.maximumf %a, %zero : f32
    memref.store %r, %y[%c, %h, %v] : memref<8x4x4xf32>
    scf.reduce
  }
  return
}

// -----

// The second loop iterates the first's dims in another order and reads
// what the first wrote at its own position, but also at column 0 (another
// thread's element). Two kernels.
// CHECK-LABEL: func.func @negative_permuted_other_element
// CHECK-COUNT-2: gpu.launch_func
// CHECK-NOT: gpu.launch_func
func.func @negative_permuted_other_element(%x: memref<4x8xf32>, %y: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %t = memref.alloc() : memref<4x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<4x8xf32>
    %e = math.exp %v : f32
    memref.store %e, %t[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  scf.parallel (%a, %b) = (%c0, %c0) to (%c8, %c4) step (%c1, %c1) {
    %u = memref.load %t[%b, %a] : memref<4x8xf32>
    %w = memref.load %t[%b, %c0] : memref<4x8xf32>
    %s = arith.addf %u, %w : f32
    memref.store %s, %y[%a, %b] : memref<8x4xf32>
    scf.reduce
  }
  return
}

// -----

// After row fusion the LayerNorm-like kernel ends with its loop over the
// channels; its elementwise consumer over (c, h, w), which reads the
// normalised value at its own element, joins that loop: one kernel.
// CHECK-LABEL: func.func @nest_fusion
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @nest_fusion_kernel0
// CHECK: arith.divf
// CHECK: scf.for %[[C:[^ ]*]] =
// CHECK: arith.subf
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{[^,]*}}, %[[C]],
// CHECK: memref.load %{{.*}}[%{{[^,]*}}, %[[C]],
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: memref.store
// CHECK: }
// CHECK: gpu.return
func.func @nest_fusion(%x: memref<1x8x2x3xf32>, %skip: memref<1x8x2x3xf32>, %z: memref<1x8x2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %mean = memref.alloc() : memref<1x1x2x3xf32>
  scf.parallel (%h, %w) = (%c0, %c0) to (%c2, %c3) step (%c1, %c1) {
    memref.store %zero, %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
    scf.for %c = %c0 to %c8 step %c1 {
      %v = memref.load %x[%c0, %c, %h, %w] : memref<1x8x2x3xf32>
      %m = memref.load %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
      %s = arith.addf %m, %v : f32
      memref.store %s, %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
    }
    %m = memref.load %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
    %d = arith.divf %m, %n : f32
    memref.store %d, %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
    scf.reduce
  }
  %y = memref.alloc() : memref<1x8x2x3xf32>
  scf.parallel (%c, %h, %w) = (%c0, %c0, %c0) to (%c8, %c2, %c3) step (%c1, %c1, %c1) {
    %v = memref.load %x[%c0, %c, %h, %w] : memref<1x8x2x3xf32>
    %m = memref.load %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
    %r = arith.subf %v, %m : f32
    memref.store %r, %y[%c0, %c, %h, %w] : memref<1x8x2x3xf32>
    scf.reduce
  }
  scf.parallel (%c, %h, %w) = (%c0, %c0, %c0) to (%c8, %c2, %c3) step (%c1, %c1, %c1) {
    %v = memref.load %y[%c0, %c, %h, %w] : memref<1x8x2x3xf32>
    %e = math.exp %v : f32
    %s = memref.load %skip[%c0, %c, %h, %w] : memref<1x8x2x3xf32>
    %r = arith.addf %e, %s : f32
    memref.store %r, %z[%c0, %c, %h, %w] : memref<1x8x2x3xf32>
    scf.reduce
  }
  return
}

// -----

// The consumer reads the normalised value of channel 0 for every channel:
// an element another iteration of the channel loop writes. Two kernels.
// CHECK-LABEL: func.func @negative_nest_fusion_other_channel
// CHECK-COUNT-2: gpu.launch_func
// CHECK-NOT: gpu.launch_func
func.func @negative_nest_fusion_other_channel(%x: memref<1x8x2x3xf32>, %z: memref<1x8x2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %mean = memref.alloc() : memref<1x1x2x3xf32>
  scf.parallel (%h, %w) = (%c0, %c0) to (%c2, %c3) step (%c1, %c1) {
    memref.store %zero, %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
    scf.for %c = %c0 to %c8 step %c1 {
      %v = memref.load %x[%c0, %c, %h, %w] : memref<1x8x2x3xf32>
      %m = memref.load %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
      %s = arith.addf %m, %v : f32
      memref.store %s, %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
    }
    scf.reduce
  }
  %y = memref.alloc() : memref<1x8x2x3xf32>
  scf.parallel (%c, %h, %w) = (%c0, %c0, %c0) to (%c8, %c2, %c3) step (%c1, %c1, %c1) {
    %v = memref.load %x[%c0, %c, %h, %w] : memref<1x8x2x3xf32>
    %m = memref.load %mean[%c0, %c0, %h, %w] : memref<1x1x2x3xf32>
    %r = arith.subf %v, %m : f32
    memref.store %r, %y[%c0, %c, %h, %w] : memref<1x8x2x3xf32>
    scf.reduce
  }
  scf.parallel (%c, %h, %w) = (%c0, %c0, %c0) to (%c8, %c2, %c3) step (%c1, %c1, %c1) {
    %v = memref.load %y[%c0, %c0, %h, %w] : memref<1x8x2x3xf32>
    %e = math.exp %v : f32
    memref.store %e, %z[%c0, %c, %h, %w] : memref<1x8x2x3xf32>
    scf.reduce
  }
  return
}

// -----

// A zero fill between two loops of its shape that shares no buffer with
// the first and its buffer with the second, which reads the first's output
// at other elements (a convolution after a convolution: they cannot fuse):
// the fill fuses with the second (the accumulation it initializes), not
// with the first, although both would fuse; two kernels either way, and
// the accumulator is then written and read by one kernel alone.
// CHECK-LABEL: func.func @fill_joins_its_consumer
// CHECK: gpu.launch_func @kernels::@fill_joins_its_consumer_kernel0 {{.*}} args(%{{[^ ]*}} : memref<8xf32>, %{{[^ ]*}} : memref<8xf32>)
// CHECK: gpu.launch_func @kernels::@fill_joins_its_consumer_kernel1 {{.*}} args(%{{[^ ]*}} : memref<8xf32>, %{{[^ ]*}} : memref<8x4xf32>, %{{[^ ]*}} : memref<8xf32>, %{{[^ ]*}} : memref<8xf32>)
// CHECK: gpu.func @fill_joins_its_consumer_kernel0
// CHECK-NOT: arith.constant 0.0
// CHECK: gpu.return
// CHECK: gpu.func @fill_joins_its_consumer_kernel1
// CHECK: memref.store %{{.*}}, %[[ACC:[^\[]*]][
// CHECK: scf.for
// CHECK: memref.load %[[ACC]][
func.func @fill_joins_its_consumer(%x: memref<8xf32>, %x2: memref<8x4xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %prev = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf32>
    %d = arith.mulf %v, %two : f32
    memref.store %d, %prev[%i] : memref<8xf32>
    scf.reduce
  }
  %acc = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %zero, %acc[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.for %k = %c0 to %c4 step %c1 {
      %a = memref.load %acc[%i] : memref<8xf32>
      %v = memref.load %x2[%i, %k] : memref<8x4xf32>
      %q = memref.load %prev[%k] : memref<8xf32>
      %p = arith.mulf %v, %q : f32
      %s = arith.addf %a, %p : f32
      memref.store %s, %acc[%i] : memref<8xf32>
    }
    %r = memref.load %acc[%i] : memref<8xf32>
    memref.store %r, %y[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// negative: a fill whose next loop does not share its buffer still fuses
// with the loop before it.
// CHECK-LABEL: func.func @negative_fill_without_consumer
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT: gpu.launch_func
func.func @negative_fill_without_consumer(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %y[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %zero, %z[%i] : memref<8xf32>
    scf.reduce
  }
  return
}
