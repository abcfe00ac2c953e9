// RUN: gpuopt-opt %s --gpuopt-gpu-lowering="chip=sm_90 format=isa" | FileCheck %s
// RUN: gpuopt-opt %s --gpuopt-gpu-lowering="chip=sm_90 format=isa workgroup-tile-async-copy=false" | FileCheck %s --check-prefix=REGS
// RUN: gpuopt-opt %s --gpuopt-gpu-lowering="chip=sm_90,sm_75 format=isa" | FileCheck %s --check-prefix=REGS

// A 3x3 convolution of 16 into 32 channels of a 16x16 map (a workgroup
// tile): on sm_90 its operands reach workgroup memory by cp.async — the
// padded input 4 bytes at a time with a source size (0: zero fill), the
// weights too — committed per step and, with the pipeline's 3 buffers (9
// steps), waited for with one group left pending right before the step's
// barrier; no operand is staged through registers (st.shared). With the
// option off, or an sm_75 image in the build (cp.async is sm_80's), the
// same tile stages them through registers. (The PTX is one string: -SAME.)
// CHECK: .target sm_90
// CHECK-SAME: .entry forward_kernel0
// CHECK-NOT: st.shared
// CHECK-SAME: cp.async.ca.shared.global [%rd{{[0-9]+}}{{[-+0-9]*}}], [%rd{{[0-9]+}}{{[-+0-9]*}}], 4, %r{{[0-9]+}};
// CHECK-SAME: cp.async.commit_group;
// CHECK-NOT: st.shared
// CHECK-SAME: cp.async.wait_group \091;\0A\09bar.sync
// CHECK-SAME: ld.shared.v2.{{[bf]}}32
// CHECK-NOT: st.shared
// CHECK-SAME: ret;
// REGS: .entry forward_kernel0
// REGS-NOT: cp.async
// REGS-SAME: st.shared
// REGS-NOT: cp.async
// REGS-SAME: ret;
func.func @forward(%x: tensor<1x16x16x16xf32>) -> tensor<1x32x16x16xf32> {
  %w = seg.param "conv.weight" : tensor<32x16x3x3xf32>
  %b = seg.param "conv.bias" : tensor<32xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x16x16x16xf32>, tensor<32x16x3x3xf32>, tensor<32xf32> -> tensor<1x32x16x16xf32>
  return %y : tensor<1x32x16x16xf32>
}
