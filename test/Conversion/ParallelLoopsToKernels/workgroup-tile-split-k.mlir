// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-min-blocks=4 workgroup-tile-split-k=8" | FileCheck %s
// Off at the pass (workgroup-tile-split-k=1; the GPU pipeline sets 8).
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-min-blocks=4" | FileCheck %s --check-prefix=OFF

// workgroup-tile.mlir's 1x1 convolution, 1024 input channels (64 steps of
// 16): M = 64, N = 64. Four blocks (workgroup-tile-min-blocks) only fit 2 x 2
// thread tiles (32 x 32); split in two parts (512 reduction iterations, 32
// steps each), 64 x 32 tiles of 4 x 2 outputs fill them: block b computes
// part b / 2 (from k = 512 (b / 2)) of tile b % 2 and stores its partial
// sums, with no bias or ReLU, into a [part, M, N] workspace. A second
// kernel, one thread per output, adds the parts in order to the value
// before the nest (the zero fill, forwarded: 0.0), then runs the part after
// it (bias, ReLU, store).
// CHECK-LABEL: func.func @split_k
// CHECK: %[[WS:.*]] = memref.alloc() : memref<2x64x64xf32>
// CHECK: gpu.launch_func @kernels::@split_k_kernel0 blocks in (%c4{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c256{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) args(%{{.*}} : memref<1024x8x8xf32>, %{{.*}} : memref<64x1024xf32>, %[[WS]] : memref<2x64x64xf32>)
// CHECK: gpu.launch_func @kernels::@split_k_kernel1 blocks in (%c16{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c256{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) args(%[[WS]] : memref<2x64x64xf32>, %{{.*}} : memref<64xf32>, %{{.*}} : memref<64x8x8xf32>)
// CHECK: gpu.func @split_k_kernel0(%{{.*}}: memref<1024x8x8xf32>, %{{.*}}: memref<64x1024xf32>, %[[W:[^:]*]]: memref<2x64x64xf32>)
// CHECK-SAME: workgroup(%{{.*}} : memref<2x16x68xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2x16x32xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: %[[BLK:.*]] = gpu.block_id x
// CHECK: %[[PART:.*]] = arith.divui %[[BLK]], %c2
// CHECK: %[[KBASE:.*]] = arith.muli %[[PART]], %c512
// CHECK: %[[TILE:.*]] = arith.remui %[[BLK]], %c2
// CHECK: arith.addi %[[KBASE]],
// CHECK: scf.for %{{.*}} = %c0{{[_0-9]*}} to %c31{{[_0-9]*}} step %c1
// CHECK-NOT: memref<64xf32>
// CHECK-NOT: arith.maximumf
// CHECK-COUNT-8: memref.store %{{.*}}, %[[W]][%[[PART]], %{{.*}}, %{{.*}}] : memref<2x64x64xf32>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
// CHECK: gpu.func @split_k_kernel1(%[[W1:[^:]*]]: memref<2x64x64xf32>, %[[B:[^:]*]]: memref<64xf32>, %[[OUT:[^:]*]]: memref<64x8x8xf32>) kernel
// CHECK: %[[P0:.*]] = memref.load %[[W1]][%c0{{[_0-9]*}}, %[[M:[a-z0-9_]+]], %[[N:[a-z0-9_]+]]]
// CHECK-NEXT: %[[S0:.*]] = arith.addf %cst{{[_0-9]*}}, %[[P0]] : f32
// CHECK: %[[P1:.*]] = memref.load %[[W1]][%c1{{[_0-9]*}}, %[[M]], %[[N]]]
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[S0]], %[[P1]] : f32
// CHECK-NEXT: %[[BIAS:.*]] = memref.load %[[B]][%[[M]]]
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[S1]], %[[BIAS]] : f32
// CHECK-NEXT: %[[Y:.*]] = arith.maximumf %[[T]], %cst
// CHECK-NEXT: memref.store %[[Y]], %[[OUT]][%[[M]],
// OFF-LABEL: func.func @split_k
// OFF-NOT: memref.alloc
// OFF: gpu.launch_func @kernels::@split_k_kernel0 blocks in (%c4
// OFF-NOT: gpu.launch_func
// OFF: gpu.module
func.func @split_k(%in: memref<1024x8x8xf32>, %wt: memref<64x1024xf32>, %bias: memref<64xf32>, %out: memref<64x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %h, %w) = (%c0, %c0, %c0) to (%c64, %c8, %c8) step (%c1, %c1, %c1) {
    memref.store %zero, %out[%o, %h, %w] : memref<64x8x8xf32>
    scf.for %c = %c0 to %c1024 step %c1 {
      %a = memref.load %out[%o, %h, %w] : memref<64x8x8xf32>
      %x = memref.load %in[%c, %h, %w] : memref<1024x8x8xf32>
      %f = memref.load %wt[%o, %c] : memref<64x1024xf32>
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

// 512 input channels: 32 steps, too few to split (64 at least).
// CHECK-LABEL: func.func @negative_split_k_shallow
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch_func @kernels::@negative_split_k_shallow_kernel0 blocks in (%c4
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.module
func.func @negative_split_k_shallow(%in: memref<512x8x8xf32>, %wt: memref<64x512xf32>, %bias: memref<64xf32>, %out: memref<64x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %h, %w) = (%c0, %c0, %c0) to (%c64, %c8, %c8) step (%c1, %c1, %c1) {
    memref.store %zero, %out[%o, %h, %w] : memref<64x8x8xf32>
    scf.for %c = %c0 to %c512 step %c1 {
      %a = memref.load %out[%o, %h, %w] : memref<64x8x8xf32>
      %x = memref.load %in[%c, %h, %w] : memref<512x8x8xf32>
      %f = memref.load %wt[%o, %c] : memref<64x512xf32>
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

// 1000 input channels: the last step would be short; parts must be whole
// steps.
// CHECK-LABEL: func.func @negative_split_k_ragged
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch_func @kernels::@negative_split_k_ragged_kernel0 blocks in (%c4
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.module
func.func @negative_split_k_ragged(%in: memref<1000x8x8xf32>, %wt: memref<64x1000xf32>, %bias: memref<64xf32>, %out: memref<64x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c1000 = arith.constant 1000 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%o, %h, %w) = (%c0, %c0, %c0) to (%c64, %c8, %c8) step (%c1, %c1, %c1) {
    memref.store %zero, %out[%o, %h, %w] : memref<64x8x8xf32>
    scf.for %c = %c0 to %c1000 step %c1 {
      %a = memref.load %out[%o, %h, %w] : memref<64x8x8xf32>
      %x = memref.load %in[%c, %h, %w] : memref<1000x8x8xf32>
      %f = memref.load %wt[%o, %c] : memref<64x1000xf32>
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
