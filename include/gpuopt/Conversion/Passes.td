//===- Passes.td - gpuopt conversion passes ----------------*- tablegen -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_CONVERSION_PASSES_TD
#define GPUOPT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertSegToLinalgPass : Pass<"convert-seg-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower seg ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Every seg op becomes upstream tensor-level IR that the CPU and NVPTX
    pipelines bufferize, tile and vectorize:

    - convolutions → `tensor.pad` + `linalg.conv_2d_nchw_fchw`,
      `linalg.depthwise_conv_2d_nchw_chw` or `linalg.conv_2d_ngchw_gfchw`,
      with bias, activation and residual as one `linalg.generic` epilogue;
      a transposed convolution is a convolution of the zero-upsampled input
      with the flipped kernel; a shifted input (`seg.fused_conv2d` offsets,
      `seg.channel_shift`) is a gather `linalg.generic`;
    - elementwise ops, normalizations and linear layers → `linalg.generic`
      (GELU through `math.erf`/`math.tanh`);
    - max pooling → `tensor.pad` with −∞ + `linalg.pooling_nchw_max`;
    - data movement → `tensor.extract_slice`, `tensor.concat`, `tensor.pad`,
      `linalg.transpose`, `tensor.collapse_shape`/`expand_shape`; a roll is
      two slices and a concat per rolled dim;
    - `seg.shift_offsets` is computed at compile time into a constant.

    `seg.param` ops become trailing arguments of their function, each with a
    `seg.param = "<state_dict name>"` argument attribute, so that a runtime
    binds the weights by name.

    ```mlir
    %y = seg.relu %x : tensor<1x4x8x8xf32>
    // becomes
    %e = tensor.empty() : tensor<1x4x8x8xf32>
    %y = linalg.generic {...} ins(%x : tensor<1x4x8x8xf32>) outs(%e : ...) {
      ^bb0(%in: f32, %out: f32):
        %m = arith.maximumf %in, %cst : f32
        linalg.yield %m : f32
    } -> tensor<1x4x8x8xf32>
    ```

    Output invariant: no seg op remains; an op without a lowering is an error
    located at it.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect",
    "::mlir::func::FuncDialect"
  ];
}

#endif // GPUOPT_CONVERSION_PASSES_TD
