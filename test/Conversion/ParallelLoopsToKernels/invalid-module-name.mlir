// RUN: gpuopt-opt %s --convert-parallel-loops-to-kernels="module-name=taken" -verify-diagnostics

// expected-error @+1 {{module-name 'taken' is already taken}}
module {
  func.func private @taken()
  func.func @forward(%a: memref<8xf32>) {
    return
  }
}
