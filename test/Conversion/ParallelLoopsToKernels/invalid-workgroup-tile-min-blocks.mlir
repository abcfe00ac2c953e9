// RUN: gpuopt-opt %s --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-min-blocks=0" -verify-diagnostics

// expected-error @+1 {{workgroup-tile-min-blocks must be at least 1, got 0}}
module {
  func.func @forward(%a: memref<8xf32>) {
    return
  }
}
