// RUN: gpuopt-opt %s --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-stages=1" -verify-diagnostics

// expected-error @+1 {{workgroup-tile-stages must be at least 2, got 1}}
module {
  func.func @forward(%a: memref<8xf32>) {
    return
  }
}
