// RUN: gpuopt-opt %s --gpuopt-gpu-lowering="chip=sm_90 format=isa" | FileCheck %s
// RUN: gpuopt-opt %s --convert-gpu-kernels-to-host | FileCheck %s --check-prefix=HOST

// A kernel's TF32 nvgpu.mma.sync reaches the PTX as the tensor-core
// instruction (convert-nvgpu-to-nvvm in the NVVM steps), its fragments
// passed as registers in the order the host emulation reads them
// (CudaArtifact.h, kCudaMma*): A's four, B's two, C's four; D's four come
// back. The host build of the same kernel calls the emulator's mma hook
// (convert-gpu-kernels-to-host-sync.mlir has the details).
// CHECK: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK-SAME: {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}},
// CHECK-SAME: {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}},
// CHECK-SAME: {%r{{[0-9]+}}, %r{{[0-9]+}}},
// CHECK-SAME: {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
// CHECK: mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32
// CHECK-SAME: {%r{{[0-9]+}}, %r{{[0-9]+}}},
// CHECK-SAME: {%r{{[0-9]+}}},
// HOST-COUNT-2: call @__gpuopt_host_mma(
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @mma(%x: memref<16x8xf32>, %w: memref<8x8xf32>, %out: memref<32x4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %t = gpu.thread_id x
      %g = arith.divui %t, %c4 : index
      %k = arith.remui %t, %c4 : index
      %g8 = arith.addi %g, %c8 : index
      %k4 = arith.addi %k, %c4 : index
      %a0 = memref.load %x[%g, %k] : memref<16x8xf32>
      %a1 = memref.load %x[%g8, %k] : memref<16x8xf32>
      %a2 = memref.load %x[%g, %k4] : memref<16x8xf32>
      %a3 = memref.load %x[%g8, %k4] : memref<16x8xf32>
      %b0 = memref.load %w[%g, %k] : memref<8x8xf32>
      %b1 = memref.load %w[%g, %k4] : memref<8x8xf32>
      %a = vector.from_elements %a0, %a1, %a2, %a3 : vector<4x1xf32>
      %b = vector.from_elements %b0, %b1 : vector<2x1xf32>
      %zero = arith.constant 0.0 : f32
      %c = vector.broadcast %zero : f32 to vector<2x2xf32>
      %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
      %a4 = vector.from_elements %a0, %a1 : vector<2x1xf32>
      %b4 = vector.from_elements %b0 : vector<1x1xf32>
      %e = nvgpu.mma.sync (%a4, %b4, %d) {mmaShape = [16, 8, 4], tf32Enabled} : (vector<2x1xf32>, vector<1x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
      %e00 = vector.extract %e[0, 0] : f32 from vector<2x2xf32>
      %e01 = vector.extract %e[0, 1] : f32 from vector<2x2xf32>
      %e10 = vector.extract %e[1, 0] : f32 from vector<2x2xf32>
      %e11 = vector.extract %e[1, 1] : f32 from vector<2x2xf32>
      memref.store %e00, %out[%t, %c0] : memref<32x4xf32>
      memref.store %e01, %out[%t, %c1] : memref<32x4xf32>
      memref.store %e10, %out[%t, %c2] : memref<32x4xf32>
      memref.store %e11, %out[%t, %c3] : memref<32x4xf32>
      gpu.return
    }
  }
}
