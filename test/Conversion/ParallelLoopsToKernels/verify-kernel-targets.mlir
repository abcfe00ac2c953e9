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
