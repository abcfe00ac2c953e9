// RUN: gpuopt-opt %s -split-input-file --convert-parallel-loops-to-kernels | FileCheck %s

// A library routine's call (--convert-seg-to-cuda-library, a declaration
// marked gpuopt.cpu_kernel) stays on the host between the launches, and the
// two equal-bounds loops around it, which would fuse without it, do not
// fuse across it.
// CHECK-LABEL: func.func @forward
// CHECK: gpu.launch_func @kernels::@forward_kernel0
// CHECK-NOT: gpu.launch_func
// CHECK: call @gpuopt_cpu_linear
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.launch_func @kernels::@forward_kernel1
// CHECK-NEXT: return
// CHECK: gpu.module @kernels
// CHECK-NOT: call
func.func private @gpuopt_cpu_linear(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>, i64) attributes {gpuopt.cpu_kernel, llvm.emit_c_interface}
memref.global "private" constant @empty : memref<0xf32> = dense<>
func.func @forward(%a: memref<4x8xf32>, %w: memref<8x8xf32>, %b: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %h0 = arith.constant 0 : i64
  %t = memref.alloc() : memref<4x8xf32>
  %u = memref.alloc() : memref<4x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<4x8xf32>
    %e = math.exp %v : f32
    memref.store %e, %t[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  %out = memref.cast %u : memref<4x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  %in = memref.cast %t : memref<4x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  %wc = memref.cast %w : memref<8x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  %e0 = memref.get_global @empty : memref<0xf32>
  %bias = memref.cast %e0 : memref<0xf32> to memref<?xf32, strided<[?], offset: ?>>
  call @gpuopt_cpu_linear(%out, %in, %wc, %bias, %h0) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>, i64) -> ()
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %u[%i, %j] : memref<4x8xf32>
    %e = math.exp %v : f32
    memref.store %e, %b[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return
}

// -----

// Without the call between them the same two loops fuse into one kernel.
// CHECK-LABEL: func.func @negative_no_call
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.module @kernels
func.func @negative_no_call(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %t = memref.alloc() : memref<4x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<4x8xf32>
    %e = math.exp %v : f32
    memref.store %e, %t[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %t[%i, %j] : memref<4x8xf32>
    %e = math.exp %v : f32
    memref.store %e, %b[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return
}
