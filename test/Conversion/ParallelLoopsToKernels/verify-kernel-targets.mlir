// RUN: gpuopt-opt %s -split-input-file --pass-pipeline='builtin.module(gpu.module(verify-kernel-targets))' -verify-diagnostics | FileCheck %s

// Tensor cores on sm_80 and sm_90: nothing to refuse, the module unchanged.
// CHECK-LABEL: gpu.module @kernels [#nvvm.target<chip = "sm_80">, #nvvm.target<chip = "sm_90">]
// CHECK: nvgpu.mma.sync
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_80">, #nvvm.target<chip = "sm_90">] {
    gpu.func @mma(%a: vector<4x1xf32>, %b: vector<2x1xf32>, %c: vector<2x2xf32>) kernel {
      %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
      gpu.return
    }
  }
}

// -----

// No mma: any chip (sm_50, the default one the target prints as bare) is fine.
// CHECK-LABEL: gpu.module @kernels [#nvvm.target]
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_50">] {
    gpu.func @plain(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// An sm_75 image cannot run TF32 tensor cores: refused at the op, naming
// the chip (the NVPTX back end would abort with "Cannot select").
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90">, #nvvm.target<chip = "sm_75">] {
    gpu.func @negative_mma_on_sm75(%a: vector<4x1xf32>, %b: vector<2x1xf32>, %c: vector<2x2xf32>) kernel {
      // expected-error @+1 {{'nvgpu.mma.sync' op needs sm_80 or newer (tensor cores with TF32 and m16n8k* shapes), but the kernels are also built for sm_75}}
      %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
      gpu.return
    }
  }
}

// -----

// Asynchronous copies (cp.async) on sm_80: kept.
// CHECK-LABEL: gpu.module @kernels [#nvvm.target<chip = "sm_80">]
// CHECK: nvgpu.device_async_copy
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_80">] {
    gpu.func @copy(%a: memref<8xf32>) workgroup(%tile: memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %t = nvgpu.device_async_copy %a[%c0], %tile[%c0], 1 : memref<8xf32> to memref<8xf32, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group %t
      nvgpu.device_async_wait %g
      gpu.return
    }
  }
}

// -----

// ... and refused for an sm_75 image, each op at its place.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_75">] {
    gpu.func @negative_copy_on_sm75(%a: memref<8xf32>) workgroup(%tile: memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'nvgpu.device_async_copy' op needs sm_80 or newer (cp.async, asynchronous copies to workgroup memory), but the kernels are also built for sm_75}}
      %t = nvgpu.device_async_copy %a[%c0], %tile[%c0], 1 : memref<8xf32> to memref<8xf32, #gpu.address_space<workgroup>>
      // expected-error @+1 {{'nvgpu.device_async_create_group' op needs sm_80 or newer}}
      %g = nvgpu.device_async_create_group %t
      // expected-error @+1 {{'nvgpu.device_async_wait' op needs sm_80 or newer}}
      nvgpu.device_async_wait %g
      gpu.return
    }
  }
}
