// RUN: gpuopt-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(func.func(unique-return-buffers))' | FileCheck %s

// The buffer returned at positions 0, 1 and 2: positions 1 and 2 get a copy
// each.
// CHECK-LABEL: func.func @repeated(
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[C:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[C]]
// CHECK-NEXT: %[[D:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[D]]
// CHECK-NEXT: return %[[A]], %[[C]], %[[D]]
func.func @repeated() -> (memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  return %a, %a, %a : memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// -----

// Distinct buffers, and repeated non-memref values, are left alone.
// CHECK-LABEL: func.func @negative_distinct(
// CHECK-NOT: memref.copy
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>, f32, f32
func.func @negative_distinct(%s: f32) -> (memref<4xf32>, memref<4xf32>, f32, f32) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  return %a, %b, %s, %s : memref<4xf32>, memref<4xf32>, f32, f32
}

// -----

func.func @dynamic(%m: memref<?xf32>) -> (memref<?xf32>, memref<?xf32>) {
  // expected-error @+1 {{returns the buffer of result 1 twice and it has no static identity layout to copy}}
  return %m, %m : memref<?xf32>, memref<?xf32>
}
