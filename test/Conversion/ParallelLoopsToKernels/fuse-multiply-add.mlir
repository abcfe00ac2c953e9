// RUN: gpuopt-opt %s -split-input-file --fuse-multiply-add | FileCheck %s

// acc + a * b, in either operand order, becomes one math.fma.
// CHECK-LABEL: gpu.func @fused
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32, %[[Y:.*]]: memref<2xf32>)
// CHECK-NOT: arith.mulf
// CHECK-NOT: arith.addf
// CHECK: %[[F0:.*]] = math.fma %[[A]], %[[B]], %[[C]] : f32
// CHECK: %[[F1:.*]] = math.fma %[[B]], %[[C]], %[[A]] : f32
// CHECK: memref.store %[[F0]]
// CHECK: memref.store %[[F1]]
gpu.module @kernels {
  gpu.func @fused(%a: f32, %b: f32, %c: f32, %y: memref<2xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    %q = arith.mulf %b, %c : f32
    %t = arith.addf %q, %a : f32
    memref.store %s, %y[%c0] : memref<2xf32>
    memref.store %t, %y[%c1] : memref<2xf32>
    gpu.return
  }
}

// -----

// A product used twice is computed once, rounded: not fused. Functions
// outside a gpu.func (the host's, the CPU path's) are left alone.
// CHECK-LABEL: gpu.func @negative_shared_product
// CHECK: %[[P:.*]] = arith.mulf
// CHECK: arith.addf %{{.*}}, %[[P]]
// CHECK-NOT: math.fma
// CHECK-LABEL: func.func @negative_host
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: math.fma
gpu.module @kernels {
  gpu.func @negative_shared_product(%a: f32, %b: f32, %c: f32, %y: memref<2xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    memref.store %s, %y[%c0] : memref<2xf32>
    memref.store %p, %y[%c1] : memref<2xf32>
    gpu.return
  }
}
func.func @negative_host(%a: f32, %b: f32, %c: f32) -> f32 {
  %p = arith.mulf %a, %b : f32
  %s = arith.addf %c, %p : f32
  return %s : f32
}

// -----

// c − a·b and a·b − c: one fma each, through an exact negation.
// CHECK-LABEL: gpu.func @fused_sub
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32, %[[Y:.*]]: memref<2xf32>)
// CHECK-NOT: arith.mulf
// CHECK-NOT: arith.subf
// CHECK: %[[NA:.*]] = arith.negf %[[A]] : f32
// CHECK: %[[F0:.*]] = math.fma %[[NA]], %[[B]], %[[C]] : f32
// CHECK: %[[NC:.*]] = arith.negf %[[C]] : f32
// CHECK: %[[F1:.*]] = math.fma %[[A]], %[[B]], %[[NC]] : f32
// CHECK: memref.store %[[F0]]
// CHECK: memref.store %[[F1]]
gpu.module @kernels {
  gpu.func @fused_sub(%a: f32, %b: f32, %c: f32, %y: memref<2xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %p = arith.mulf %a, %b : f32
    %s = arith.subf %c, %p : f32
    %q = arith.mulf %a, %b : f32
    %t = arith.subf %q, %c : f32
    memref.store %s, %y[%c0] : memref<2xf32>
    memref.store %t, %y[%c1] : memref<2xf32>
    gpu.return
  }
}
