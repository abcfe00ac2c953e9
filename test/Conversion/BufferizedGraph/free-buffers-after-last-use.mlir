// RUN: gpuopt-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(free-buffers-after-last-use))' | FileCheck %s

// The buffer is freed after the last use of any of its views, not after the
// last use of the alloc itself.
// CHECK-LABEL: func.func @views_extend_life(
// CHECK-SAME: %[[OUT:.*]]: memref<2xf32>
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK: %[[V:.*]] = memref.subview %[[A]]
// CHECK: linalg.fill {{.*}} outs(%[[A]]
// CHECK: %[[C:.*]] = memref.cast %[[V]]
// CHECK-NOT: memref.dealloc
// CHECK: memref.copy %[[C]], %[[OUT]]
// CHECK-NEXT: memref.dealloc %[[A]] : memref<4xf32>
// CHECK-NEXT: return
func.func @views_extend_life(%out: memref<2xf32>) {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  %v = memref.subview %a[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  %cv = memref.cast %v : memref<2xf32, strided<[1], offset: 1>> to memref<2xf32, strided<[?], offset: ?>>
  memref.copy %cv, %out : memref<2xf32, strided<[?], offset: ?>> to memref<2xf32>
  return
}

// -----

// Each buffer is freed as soon as it is dead; a use in a nested region
// counts at the op that holds the region.
// CHECK-LABEL: func.func @each_at_its_last_use(
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[A]], %[[B]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: scf.for
// CHECK: memref.load %[[B]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @each_at_its_last_use(%out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %b[%i] : memref<4xf32>
    memref.store %x, %out[] : memref<f32>
  }
  return
}

// -----

// An unused buffer is freed at once (canonicalization then drops the pair).
// CHECK-LABEL: func.func @unused(
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK-NEXT: memref.dealloc %[[A]]
func.func @unused() {
  %a = memref.alloc() : memref<4xf32>
  return
}
