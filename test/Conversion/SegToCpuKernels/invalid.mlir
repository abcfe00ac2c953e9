// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-cpu-kernels -verify-diagnostics

// A user function with a kernel's name would receive the kernel's arguments.
// expected-error @+1 {{symbol 'gpuopt_cpu_linear' is reserved for gpuopt's CPU kernels}}
func.func @gpuopt_cpu_linear(%x: f32) -> f32 {
  return %x : f32
}

func.func @forward(%x: tensor<2x8xf32>, %w: tensor<6x8xf32>) -> tensor<2x6xf32> {
  %y = seg.linear %x, %w : tensor<2x8xf32>, tensor<6x8xf32> -> tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}
