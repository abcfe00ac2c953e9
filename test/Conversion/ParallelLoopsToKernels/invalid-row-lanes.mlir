// RUN: gpuopt-opt %s --convert-parallel-loops-to-kernels="row-lanes=3" -verify-diagnostics

// expected-error @+1 {{row-lanes must be 0 (by the layout) or a power of two up to 32, got 3}}
module {
  func.func @forward(%a: memref<8xf32>) {
    return
  }
}
