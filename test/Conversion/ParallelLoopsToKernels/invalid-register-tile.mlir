// RUN: gpuopt-opt %s --convert-parallel-loops-to-kernels="register-tile=0" -verify-diagnostics

// expected-error @+1 {{register-tile must be at least 1, got 0}}
module {
  func.func @forward(%a: memref<8xf32>) {
    return
  }
}
