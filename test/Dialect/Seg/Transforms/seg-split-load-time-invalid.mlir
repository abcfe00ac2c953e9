// RUN: gpuopt-opt %s -split-input-file --seg-split-load-time -verify-diagnostics

// expected-error @+1 {{no function body named @forward to split}}
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{@forward_init already exists: @forward was split before}}
func.func @forward_init() {
  return
}
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{@forward has more than one block}}
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^next
^next:
  return %x : tensor<4xf32>
}
