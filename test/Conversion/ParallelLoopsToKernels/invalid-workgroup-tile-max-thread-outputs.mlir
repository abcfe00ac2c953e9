// RUN: gpuopt-opt %s --convert-parallel-loops-to-kernels="workgroup-tile=true workgroup-tile-max-thread-outputs=3" -verify-diagnostics

// expected-error @+1 {{workgroup-tile-max-thread-outputs must be at least 4, got 3}}
module {
  func.func @forward(%a: memref<8xf32>) {
    return
  }
}
