// RUN: gpuopt-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(free-buffers-after-last-use))' -verify-diagnostics

func.func @returned() -> memref<4xf32> {
  // expected-error @+1 {{'memref.alloc' op leaves its block through 'func.return' (run --buffer-results-to-out-params first)}}
  %a = memref.alloc() : memref<4xf32>
  return %a : memref<4xf32>
}

// -----

func.func @freed_twice() {
  // expected-error @+1 {{'memref.alloc' op is freed already}}
  %a = memref.alloc() : memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

func.func @read_as_tensor() -> tensor<4xf32> {
  // expected-error @+1 {{'memref.alloc' op is read as a tensor by 'bufferization.to_tensor', which may outlive it}}
  %a = memref.alloc() : memref<4xf32>
  %t = bufferization.to_tensor %a : memref<4xf32> to tensor<4xf32>
  return %t : tensor<4xf32>
}

// -----

func.func @other_block(%c: i1) {
  // expected-error @+1 {{'memref.alloc' op is used outside its block, by 'memref.load'}}
  %a = memref.alloc() : memref<4xf32>
  cf.cond_br %c, ^use, ^done
^use:
  %i = arith.constant 0 : index
  %x = memref.load %a[%i] : memref<4xf32>
  cf.br ^done
^done:
  return
}

// -----

func.func @through_a_yield(%c: i1, %m: memref<4xf32>) {
  %r = scf.if %c -> memref<4xf32> {
    // expected-error @+1 {{'memref.alloc' op leaves its block through 'scf.yield' (run --buffer-results-to-out-params first)}}
    %a = memref.alloc() : memref<4xf32>
    scf.yield %a : memref<4xf32>
  } else {
    scf.yield %m : memref<4xf32>
  }
  return
}
