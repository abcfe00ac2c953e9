// RUN: gpuopt-opt %s -split-input-file --seg-verify-lowerable -verify-diagnostics | FileCheck %s
// The pipelines run it first: their errors are the same, before any
// bufferization (which recursed on call cycles: SIGSEGV or minutes of spin).
// Then they inline every call (bufferizing a func.call read uninitialized
// memory; the GPU pipeline lost the callee): the first case lowers.
// RUN: gpuopt-opt %s -split-input-file --gpuopt-cpu-lowering -verify-diagnostics -o /dev/null
// RUN: gpuopt-opt %s -split-input-file --gpuopt-gpu-lowering=serialize=false -verify-diagnostics -o /dev/null

// Calls forming a DAG (one callee reached twice) pass unchanged.
// CHECK-LABEL: func.func @leaf
// CHECK-LABEL: func.func @mid
// CHECK: call @leaf
// CHECK-LABEL: func.func @forward
// CHECK: call @mid
// CHECK: call @leaf
func.func @leaf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = seg.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func @mid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @leaf(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = func.call @mid(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @leaf(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// A tensor exactly at the limit passes.
// CHECK-LABEL: func.func @at_the_limit
func.func @at_the_limit(%x: tensor<274877906944xf32>) -> tensor<274877906944xf32> {
  return %x : tensor<274877906944xf32>
}

// -----

func.func @negative_self_recursion(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'func.call' op calls @negative_self_recursion recursively (call cycle: @negative_self_recursion -> @negative_self_recursion); the lowerings compile no recursion}}
  %y = func.call @negative_self_recursion(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @negative_cycle_a(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @negative_cycle_b(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func @negative_cycle_b(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = seg.relu %x : tensor<4xf32>
  // expected-error @+1 {{calls @negative_cycle_a recursively (call cycle: @negative_cycle_a -> @negative_cycle_b -> @negative_cycle_a)}}
  %y = func.call @negative_cycle_a(%r) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func private @negative_declaration(tensor<4xf32>) -> tensor<4xf32>
func.func @negative_call_declaration(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'func.call' op calls @negative_declaration, which has no body; the lowerings compile only functions defined in the module}}
  %y = func.call @negative_declaration(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @negative_indirect_callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @negative_indirect(%x: tensor<4xf32>) -> tensor<4xf32> {
  %f = func.constant @negative_indirect_callee : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'func.call_indirect' op is an indirect call; the lowerings compile only direct calls of functions in the module}}
  %y = func.call_indirect %f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Values that no seg op touches, so that no seg verifier sees them.
// expected-error @+1 {{'func.func' op argument #0 of type 'tensor<4611686018427387904xf32>' exceeds the limit of 1099511627776 bytes (1 TiB) per tensor}}
func.func @negative_huge_argument(%x: tensor<4611686018427387904xf32>) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result #0 of type 'tensor<4611686018427387904xf32>' exceeds the limit}}
func.func private @negative_huge_result() -> tensor<4611686018427387904xf32>

// -----

func.func @negative_huge_constant() -> tensor<4xf32> {
  // expected-error @+1 {{'arith.constant' op result #0 of type 'tensor<1099511627776xf32>' exceeds the limit}}
  %c = arith.constant dense<0.0> : tensor<1099511627776xf32>
  %s = arith.constant dense<1.0> : tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A small output from a huge padding: the padded copy of the input that the
// lowering makes would have 2^63 + 1 rows (int64 wrapped in the linalg
// lowering; the CPU kernel died on a std::length_error).
func.func @negative_huge_padding(%x: tensor<1x1x1x1xf32>, %w: tensor<1x1x1x1xf32>) -> tensor<1x1x2x1xf32> {
  // expected-error @+1 {{'seg.conv2d' op needs a padded copy of its input of more than 1099511627776 bytes (1 TiB), the limit per tensor (the lowering pads the input)}}
  %y = seg.conv2d %x, %w stride = [9223372036854775807, 1] padding = [4611686018427387904, 0] dilation = [1, 1] groups = 1
       : tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32> -> tensor<1x1x2x1xf32>
  return %y : tensor<1x1x2x1xf32>
}

// -----

// The padded copy at the limit is fine (2^36 rows of 4 floats: 1 TiB).
// CHECK-LABEL: func.func @padding_at_the_limit
func.func @padding_at_the_limit(%x: tensor<1x1x2x4xf32>, %w: tensor<1x1x1x1xf32>) -> tensor<1x1x1x4xf32> {
  %y = seg.conv2d %x, %w stride = [68719476736, 1] padding = [34359738367, 0] dilation = [1, 1] groups = 1
       : tensor<1x1x2x4xf32>, tensor<1x1x1x1xf32> -> tensor<1x1x1x4xf32>
  return %y : tensor<1x1x1x4xf32>
}
