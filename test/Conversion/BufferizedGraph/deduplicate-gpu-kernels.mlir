// RUN: gpuopt-opt %s --deduplicate-gpu-kernels | FileCheck %s

// k1 equals k0 but for its name: its launch now runs k0 and k1 is gone;
// k2 differs (another constant) and stays, as does the non-kernel helper
// that equals nothing.
// CHECK-LABEL: func.func @host(
// CHECK: gpu.launch_func @kernels::@k0
// CHECK: gpu.launch_func @kernels::@k0
// CHECK: gpu.launch_func @kernels::@k2
// CHECK: gpu.module @kernels
// CHECK: gpu.func @k0(
// CHECK-NOT: gpu.func @k1(
// CHECK: gpu.func @k2(
// CHECK: gpu.func @helper(
// CHECK: gpu.func @helper_copy(
module attributes {gpu.container_module} {
  func.func @host(%a: memref<4xf32>, %b: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @kernels::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<4xf32>)
    gpu.launch_func @kernels::@k2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k0(%m: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %m[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @k1(%m: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %m[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @k2(%m: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 2.0 : f32
      memref.store %v, %m[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @helper(%m: memref<4xf32>) {
      gpu.return
    }
    gpu.func @helper_copy(%m: memref<4xf32>) {
      gpu.return
    }
  }
}
