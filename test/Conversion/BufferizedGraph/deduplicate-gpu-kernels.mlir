// RUN: gpuopt-opt %s --deduplicate-gpu-kernels | FileCheck %s
// RUN: gpuopt-opt %s --deduplicate-gpu-kernels --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=DBG

// k1 equals k0 but for its name: its launch now runs k0 and k1 is gone;
// k2 differs (another constant) and stays, as does the non-kernel helper
// that equals nothing. negative_ k3 and k4: equal bodies for different
// blocks (known_block_size, the PTX .maxntid) stay two kernels.
// CHECK-LABEL: func.func @host(
// CHECK: gpu.launch_func @kernels::@k0
// CHECK: gpu.launch_func @kernels::@k0
// CHECK: gpu.launch_func @kernels::@k2
// CHECK: gpu.launch_func @kernels::@k3
// CHECK: gpu.launch_func @kernels::@k4
// CHECK: gpu.module @kernels
// CHECK: gpu.func @k0(
// CHECK-NOT: gpu.func @k1(
// CHECK: gpu.func @k2(
// CHECK: gpu.func @helper(
// CHECK: gpu.func @helper_copy(
// CHECK: gpu.func @k3({{.*}}known_block_size = array<i32: 32, 1, 1>
// CHECK: gpu.func @k4({{.*}}known_block_size = array<i32: 64, 1, 1>

// Locations are not compared, also when printed (k0 and k1 have their own
// and still merge); each launch's location is fused with its own kernel
// body's first (its ops, then the gpu.func), so the launch that ran k1
// still names k1's source ops.
// DBG: gpu.launch_func @kernels::@k0 {{.*}} loc(fused["host.py":1:1, "k0.py":2:1, "k0.py":3:1, "k0.py":4:1, "k0.py":5:1, "k0.py":1:1])
// DBG: gpu.launch_func @kernels::@k0 {{.*}} loc(fused["host.py":2:1, "k1.py":2:1, "k1.py":3:1, "k1.py":4:1, "k1.py":5:1, "k1.py":1:1])
module attributes {gpu.container_module} {
  func.func @host(%a: memref<4xf32>, %b: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>) loc("host.py":1:1)
    gpu.launch_func @kernels::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<4xf32>) loc("host.py":2:1)
    gpu.launch_func @kernels::@k2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @kernels::@k3 blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @kernels::@k4 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%b : memref<4xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k0(%m: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index loc("k0.py":2:1)
      %v = arith.constant 1.0 : f32 loc("k0.py":3:1)
      memref.store %v, %m[%c0] : memref<4xf32> loc("k0.py":4:1)
      gpu.return loc("k0.py":5:1)
    } loc("k0.py":1:1)
    gpu.func @k1(%m: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index loc("k1.py":2:1)
      %v = arith.constant 1.0 : f32 loc("k1.py":3:1)
      memref.store %v, %m[%c0] : memref<4xf32> loc("k1.py":4:1)
      gpu.return loc("k1.py":5:1)
    } loc("k1.py":1:1)
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
    gpu.func @k3(%m: memref<4xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      gpu.return
    }
    gpu.func @k4(%m: memref<4xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      gpu.return
    }
  }
}
