// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels -verify-diagnostics

func.func @dynamic_bounds(%a: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{needs constant bounds, positive steps and no reductions to become a kernel}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %one, %a[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

func.func @host_scalar(%a: memref<8xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  // expected-error @+1 {{uses a value computed on the host that cannot be passed to a kernel: 'f32'}}
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %s, %a[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

func.func @strided_root(%a: memref<8xf32, strided<[2]>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{needs a buffer of static shape and identity layout as kernel argument, got 'memref<8xf32, strided<[2]>>'}}
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %one, %a[%i] : memref<8xf32, strided<[2]>>
    scf.reduce
  }
  return
}

// -----

func.func @dynamic_copy(%a: memref<?xf32>, %b: memref<?xf32>) {
  // expected-error @+1 {{needs a static shape to become a kernel}}
  memref.copy %a, %b : memref<?xf32> to memref<?xf32>
  return
}

// -----

func.func @effects_with_results(%a: memref<8xf32>) -> memref<8xf32> {
  // expected-error @+1 {{has results and side effects: it can run neither on the host nor in a kernel}}
  %b = memref.alloca() : memref<8xf32>
  return %b : memref<8xf32>
}

// -----

func.func @blocks(%a: memref<8xf32>) {
// expected-error @-1 {{must have a single block to be outlined into kernels}}
  cf.br ^bb1
^bb1:
  return
}
