// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels="elide-copies=0" | FileCheck %s --check-prefix=KEEP

// A concat of two computed pieces: each producer writes its half of the
// concat's buffer and no copy kernel is left: three kernels (the two
// producers and the consumer of the concat).
// CHECK-LABEL: func.func @concat_pieces
// CHECK-NOT: memref.copy
// CHECK-COUNT-3: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @concat_pieces_kernel0(%[[X:.*]]: memref<2x4xf32>, %[[D:.*]]: memref<5x4xf32>)
// CHECK: %[[V:.*]] = memref.subview %[[D]][0, 0] [2, 4] [1, 1]
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[V]]
// CHECK: gpu.func @concat_pieces_kernel1(%[[Y:.*]]: memref<3x4xf32>, %[[D2:.*]]: memref<5x4xf32>)
// CHECK: %[[V2:.*]] = memref.subview %[[D2]][2, 0] [3, 4] [1, 1]
// CHECK: math.sqrt
// CHECK: memref.store %{{.*}}, %[[V2]]
// Without the option: the pieces' buffers and one batched copy kernel more.
// KEEP-LABEL: func.func @concat_pieces
// KEEP-COUNT-4: gpu.launch_func
// KEEP-NOT: gpu.launch_func
func.func @concat_pieces(%x: memref<2x4xf32>, %y: memref<3x4xf32>, %out: memref<5x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<2x4xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c4) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<2x4xf32>
    %e = math.exp %v : f32
    memref.store %e, %a[%i, %j] : memref<2x4xf32>
    scf.reduce
  }
  %b = memref.alloc() : memref<3x4xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c3, %c4) step (%c1, %c1) {
    %v = memref.load %y[%i, %j] : memref<3x4xf32>
    %e = math.sqrt %v : f32
    memref.store %e, %b[%i, %j] : memref<3x4xf32>
    scf.reduce
  }
  %d = memref.alloc() : memref<5x4xf32>
  %top = memref.subview %d[0, 0] [2, 4] [1, 1] : memref<5x4xf32> to memref<2x4xf32, strided<[4, 1]>>
  memref.copy %a, %top : memref<2x4xf32> to memref<2x4xf32, strided<[4, 1]>>
  %bottom = memref.subview %d[2, 0] [3, 4] [1, 1] : memref<5x4xf32> to memref<3x4xf32, strided<[4, 1], offset: 8>>
  memref.copy %b, %bottom : memref<3x4xf32> to memref<3x4xf32, strided<[4, 1], offset: 8>>
  %c5 = arith.constant 5 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c5, %c4) step (%c1, %c1) {
    %v = memref.load %d[%i, %j] : memref<5x4xf32>
    memref.store %v, %out[%i, %j] : memref<5x4xf32>
    scf.reduce
  }
  return
}

// -----

// A pad: the padded buffer is filled after the piece was computed, then the
// piece is copied into its interior. Writing the piece into the interior
// first would let the fill overwrite it: the copy stays.
// CHECK-LABEL: func.func @negative_fill_between
// KEEP-LABEL: func.func @negative_fill_between
// CHECK-COUNT-3: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @negative_fill_between_kernel2
// CHECK: memref.load
// CHECK: memref.store
func.func @negative_fill_between(%x: memref<4xf32>, %out: memref<6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %x[%i] : memref<4xf32>
    %e = math.exp %v : f32
    memref.store %e, %a[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c6) step (%c1) {
    memref.store %zero, %out[%i] : memref<6xf32>
    scf.reduce
  }
  %mid = memref.subview %out[1] [4] [1] : memref<6xf32> to memref<4xf32, strided<[1], offset: 1>>
  memref.copy %a, %mid : memref<4xf32> to memref<4xf32, strided<[1], offset: 1>>
  return
}

// -----

// The piece is read again after the copy: it keeps its own buffer.
// CHECK-LABEL: func.func @negative_used_after_copy
// CHECK-COUNT-3: gpu.launch_func
// CHECK-NOT: gpu.launch_func
func.func @negative_used_after_copy(%x: memref<4xf32>, %out: memref<8xf32>, %out2: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %x[%i] : memref<4xf32>
    %e = math.exp %v : f32
    memref.store %e, %a[%i] : memref<4xf32>
    scf.reduce
  }
  %lo = memref.subview %out[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %a, %lo : memref<4xf32> to memref<4xf32, strided<[1]>>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %a[%i] : memref<4xf32>
    %e = math.sqrt %v : f32
    memref.store %e, %out2[%i] : memref<4xf32>
    %w = memref.load %x[%i] : memref<4xf32>
    %hi = memref.subview %out[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
    memref.store %w, %hi[%i] : memref<4xf32, strided<[1], offset: 4>>
    scf.reduce
  }
  return
}

// -----

// The piece is also the source of another copy (a use that is neither a
// load nor a store): both copies stay, in one batched kernel.
// CHECK-LABEL: func.func @negative_other_use
// CHECK-COUNT-2: gpu.launch_func
// CHECK-NOT: gpu.launch_func
func.func @negative_other_use(%x: memref<4xf32>, %out: memref<4xf32>, %out2: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %x[%i] : memref<4xf32>
    %e = math.exp %v : f32
    memref.store %e, %a[%i] : memref<4xf32>
    scf.reduce
  }
  memref.copy %a, %out2 : memref<4xf32> to memref<4xf32>
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  return
}
