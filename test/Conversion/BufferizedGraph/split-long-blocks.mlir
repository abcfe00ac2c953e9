// RUN: gpuopt-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(split-long-blocks{max-ops=3}))' | FileCheck %s

// Blocks of at most 3 ops, the branch included, in the original order.
// CHECK-LABEL: func.func @chain(
// CHECK-NEXT: %[[A:.*]] = arith.addf %arg0, %arg0
// CHECK-NEXT: %[[B:.*]] = arith.addf %[[A]], %[[A]]
// CHECK-NEXT: cf.br ^[[BB1:.*]]
// CHECK-NEXT: ^[[BB1]]:
// CHECK-NEXT: %[[C:.*]] = arith.addf %[[B]], %[[B]]
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[C]], %[[C]]
// CHECK-NEXT: cf.br ^[[BB2:.*]]
// CHECK-NEXT: ^[[BB2]]:
// CHECK-NEXT: %[[E:.*]] = arith.addf %[[D]], %[[D]]
// CHECK-NEXT: return %[[E]]
func.func @chain(%x: f32) -> f32 {
  %a = arith.addf %x, %x : f32
  %b = arith.addf %a, %a : f32
  %c = arith.addf %b, %b : f32
  %d = arith.addf %c, %c : f32
  %e = arith.addf %d, %d : f32
  return %e : f32
}

// -----

// A block that fits is left alone.
// CHECK-LABEL: func.func @negative_short(
// CHECK-NOT: cf.br
func.func @negative_short(%x: f32) -> f32 {
  %a = arith.addf %x, %x : f32
  %b = arith.addf %a, %a : f32
  return %b : f32
}

// -----

// A size that needs no last partial block: 2 + 2 + 2 ops.
// CHECK-LABEL: func.func @exact(
// CHECK-COUNT-2: cf.br
// CHECK-NOT: cf.br
func.func @exact(%x: f32) -> f32 {
  %a = arith.addf %x, %x : f32
  %b = arith.addf %a, %a : f32
  %c = arith.addf %b, %b : f32
  %d = arith.addf %c, %c : f32
  %e = arith.addf %d, %d : f32
  return %e : f32
}
