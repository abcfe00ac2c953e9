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
// CHECK: func.func private @forward_op0(%[[OUT:.*]]: memref<4xf32> {llvm.noalias})
// CHECK-SAME: attributes {llvm.bareptr, passthrough = ["noinline"]}
// CHECK-NEXT: %[[C:.*]] = arith.constant 2.0
// CHECK-NEXT: linalg.fill ins(%[[C]] : f32) outs(%[[OUT]] : memref<4xf32>)
// CHECK-NEXT: return
// A fresh allocation overlaps no argument of the function: noalias. The
// function's arguments %x (read) and %y (written) may be one buffer: neither.
// CHECK: func.func private @forward_op1(%[[IN:[^:]*]]: memref<4xf32> {llvm.noalias}, %{{[^:]*}}: memref<4xf32>, %[[O:[^:]*]]: memref<4xf32>, %[[SC:[^:]*]]: f32)
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

// -----

// Two views of one allocation, one written: no noalias on either (op0, and
// %other and %b in op1); a view of another buffer, only read, is noalias.
// CHECK-LABEL: func.func @negative_views_of_one_buffer(
// CHECK: func.func private @negative_views_of_one_buffer_op0(%{{[^:]*}}: memref<4xf32, strided<[1]>>, %{{[^:]*}}: memref<4xf32, strided<[1], offset: 4>>)
// CHECK-SAME: llvm.bareptr
// CHECK: func.func private @negative_views_of_one_buffer_op1(%{{[^:]*}}: memref<4xf32, strided<[1]>>, %{{[^:]*}}: memref<4xf32, strided<[1], offset: 4>> {llvm.noalias}, %{{[^:]*}}: memref<4xf32>)
func.func @negative_views_of_one_buffer() {
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<4xf32>
  %lo = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %hi = memref.subview %a[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %other = memref.subview %b[0] [4] [1] : memref<4xf32> to memref<4xf32, strided<[1]>>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%lo : memref<4xf32, strided<[1]>>) outs(%hi : memref<4xf32, strided<[1], offset: 4>>) {
  ^bb0(%p: f32, %r: f32):
    linalg.yield %p : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%other, %hi : memref<4xf32, strided<[1]>>, memref<4xf32, strided<[1], offset: 4>>) outs(%b : memref<4xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A memref with a dynamic offset cannot be passed as a bare pointer: the
// descriptor stays, and with it no argument attribute.
// CHECK-LABEL: func.func @negative_dynamic_layout(
// CHECK: func.func private @negative_dynamic_layout_op0(%{{[^:]*}}: memref<4xf32, strided<[1], offset: ?>>, %{{[^:]*}}: memref<4xf32>)
// CHECK-NOT: llvm.bareptr
// CHECK-NOT: llvm.noalias
func.func @negative_dynamic_layout(%i: index) {
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<4xf32>
  %v = memref.subview %a[%i] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
  linalg.copy ins(%v : memref<4xf32, strided<[1], offset: ?>>) outs(%b : memref<4xf32>)
  return
}
