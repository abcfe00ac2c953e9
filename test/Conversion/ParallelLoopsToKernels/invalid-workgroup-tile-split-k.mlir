// RUN: gpuopt-opt %s --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-split-k=3" -verify-diagnostics

// expected-error @+1 {{workgroup-tile-split-k must be a power of two (1: no split), got 3}}
module {
  func.func @forward(%a: memref<8xf32>) {
    return
  }
}
