// RUN: gpuopt-opt %s -split-input-file --outline-linalg-ops | FileCheck %s

// Each linalg op on buffers becomes a call of a private function of its own;
// operands and captured values are arguments, constants are cloned in; the
// glue left behind is optnone, the outlined functions noinline.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[^:]*]]: memref<4xf32>, %[[Y:[^:]*]]: memref<4xf32>, %[[S:[^:]*]]: f32
// CHECK-SAME: passthrough = ["noinline", "optnone"]
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK-NEXT: call @forward_op0(%[[A]]) : (memref<4xf32>) -> ()
// CHECK-NEXT: call @forward_op1(%[[A]], %[[X]], %[[Y]], %[[S]]) : (memref<4xf32>, memref<4xf32>, memref<4xf32>, f32) -> ()
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NOT: linalg.
// CHECK: func.func private @forward_op0(%[[OUT:.*]]: memref<4xf32>)
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-NEXT: %[[C:.*]] = arith.constant 2.0
// CHECK-NEXT: linalg.fill ins(%[[C]] : f32) outs(%[[OUT]] : memref<4xf32>)
// CHECK-NEXT: return
// CHECK: func.func private @forward_op1(%[[IN:[^:]*]]: memref<4xf32>, %{{[^:]*}}: memref<4xf32>, %[[O:[^:]*]]: memref<4xf32>, %[[SC:[^:]*]]: f32)
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.*}}, %[[SC]]
func.func @forward(%x: memref<4xf32>, %y: memref<4xf32>, %s: f32) {
  %c = arith.constant 2.0 : f32
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%a, %x : memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %s : f32
    %n = arith.addf %m, %q : f32
    linalg.yield %n : f32
  }
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// A name already taken is made unique.
// CHECK-LABEL: func.func @g(
// CHECK: call @g_op0_0(
// CHECK: func.func private @g_op0_0(
// CHECK: func.func @g_op0(
func.func @g(%a: memref<4xf32>) {
  %c = arith.constant 0.0 : f32
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  return
}
func.func @g_op0() {
  return
}

// -----

// Ops on tensors, and functions without linalg ops, are left alone.
// CHECK-LABEL: func.func @negative_tensors(
// CHECK-NOT: passthrough
// CHECK: linalg.fill
// CHECK-NOT: call
func.func @negative_tensors(%t: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 0.0 : f32
  %r = linalg.fill ins(%c : f32) outs(%t : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Two ops that outline to the same function share it.
// CHECK-LABEL: func.func @repeated(
// CHECK: call @repeated_op0(%arg0)
// CHECK-NEXT: call @repeated_op0(%arg1)
// CHECK: func.func private @repeated_op0(
// CHECK-NOT: func.func private @repeated_op1(
func.func @repeated(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c = arith.constant 0.0 : f32
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  linalg.fill ins(%c : f32) outs(%b : memref<4xf32>)
  return
}
