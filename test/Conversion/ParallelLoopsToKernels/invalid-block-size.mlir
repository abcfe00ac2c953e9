// RUN: gpuopt-opt %s --convert-parallel-loops-to-kernels="block-size=0" -verify-diagnostics

// expected-error @+1 {{block-size must be in [1, 1024], got 0}}
module {
  func.func @forward(%a: memref<8xf32>) {
    return
  }
}
