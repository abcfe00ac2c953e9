// CSE merges two identical ops whose results are both returned: upstream
// --buffer-results-to-out-params then used an erased allocation (SIGSEGV in
// --gpuopt-cpu-lowering; found by the seg-lowering fuzzer). Both lowerings
// succeed now.
// RUN: gpuopt-opt %s --gpuopt-cpu-lowering | FileCheck %s
// RUN: gpuopt-opt %s --gpuopt-gpu-lowering | FileCheck %s --check-prefix=GPU
// CHECK: llvm.func @twice
// GPU: func.func @twice
func.func @twice(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.exp ins(%e : tensor<4xf32>) outs(%y : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.exp ins(%e : tensor<4xf32>) outs(%y : tensor<4xf32>) -> tensor<4xf32>
  %c = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
