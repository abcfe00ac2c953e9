// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-linalg --linalg-generalize-named-ops | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --gpuopt-gpu-lowering="serialize=0" | FileCheck %s --check-prefix=NVVM
// RUN: gpuopt-opt %s -split-input-file --gpuopt-gpu-lowering="format=isa chip=sm_86" | FileCheck %s --check-prefix=PTX

// NaN propagates as in PyTorch: ReLU, a fused ReLU epilogue and max-pooling
// lower to arith.maximumf (NaN if either operand is NaN), never to maxnumf
// (which returns the other operand) or a compare-and-select (NaN > 0 is
// false). The CUDA path keeps it: llvm.intr.maximum, PTX max.NaN.f32.
// CHECK-LABEL: func.func @relu_and_pool
// CHECK-NOT: maxnumf
// CHECK-NOT: cmpf
// CHECK: arith.maximumf
// CHECK-NOT: maxnumf
// CHECK-NOT: cmpf
// CHECK: arith.maximumf
// CHECK-NOT: maxnumf
// CHECK-NOT: cmpf
// CHECK: arith.maximumf
// CHECK-NOT: maxnumf
// CHECK-NOT: cmpf
// CHECK: return
// NVVM-LABEL: gpu.module @kernels
// NVVM-NOT: llvm.intr.maxnum
// NVVM: llvm.intr.maximum
// NVVM-NOT: llvm.intr.maxnum
// NVVM: llvm.intr.maximum
// NVVM-NOT: llvm.intr.maxnum
// PTX: max.NaN.f32
func.func @relu_and_pool(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<4xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x4x4xf32>) {
  %r = seg.relu %x : tensor<1x4x8x8xf32>
  %c = seg.fused_conv2d %r, %w, %b offsets_h = [] offsets_w = [] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = relu : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %p = seg.max_pool2d %c kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] ceil_mode = false : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  return %c, %p : tensor<1x4x8x8xf32>, tensor<1x4x4x4xf32>
}

// -----

// Deformable sampling: a NaN coordinate must not reach fptosi (poison): the
// index clamp is maxnumf/minnumf (NaN -> 0), the validity of a corner
// selects its value (0 outside) before the weight multiplies it, so NaN
// weights still make the sample NaN; the ordered "outside (-1, size)" test
// is false for NaN.
// CHECK-LABEL: func.func @deform_nan_coordinates
// CHECK: arith.cmpf ole
// CHECK: arith.cmpf oge
// CHECK: %[[LO:.*]] = arith.maxnumf
// CHECK: %[[CL:.*]] = arith.minnumf %[[LO]]
// CHECK: arith.fptosi %[[CL]]
// CHECK: %[[V:.*]] = tensor.extract
// CHECK: %[[SEL:.*]] = arith.select %{{[^,]*}}, %[[V]], %{{[^,]*}} : f32
// CHECK: arith.mulf %[[SEL]]
// CHECK: %[[OUT:.*]] = arith.select %{{[^,]*}}, %cst{{[^,]*}}, %{{[^,]*}} : f32
// CHECK-NEXT: linalg.yield %[[OUT]]
func.func @deform_nan_coordinates(%x: tensor<1x2x5x5xf32>, %off: tensor<1x18x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32> {
  %r = seg.deform_conv2d %x, %off, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 offset_groups = 1 : (tensor<1x2x5x5xf32>, tensor<1x18x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  return %r : tensor<1x3x5x5xf32>
}
