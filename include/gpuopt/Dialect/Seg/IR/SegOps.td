//===- SegOps.td - seg dialect operations ------------------*- tablegen -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_SEG_IR_SEGOPS_TD
#define GPUOPT_DIALECT_SEG_IR_SEGOPS_TD

include "gpuopt/Dialect/Seg/IR/SegBase.td"
include "gpuopt/Dialect/Seg/IR/SegEnums.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// An op whose result type is computed from its operands and attributes by a
/// C++ `inferReturnTypes`; `verify()` runs the same computation and reports
/// the first inconsistency precisely.
class Seg_InferredOp<string mnemonic, list<Trait> traits = []>
    : Seg_Op<mnemonic, traits # [Pure, InferTypeOpAdaptor]> {
  let hasVerifier = 1;
}

/// Elementwise op: one operand, same type out.
class Seg_UnaryOp<string mnemonic, list<Trait> traits = []>
    : Seg_Op<mnemonic, traits # [Pure, SameOperandsAndResultType,
                                  InferTypeOpInterface]> {
  let arguments = (ins Seg_FloatTensor:$input);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

/// Elementwise op with NumPy/PyTorch broadcasting of two operands.
class Seg_BroadcastBinaryOp<string mnemonic, list<Trait> traits = []>
    : Seg_InferredOp<mnemonic, traits # [SameOperandsAndResultElementType]> {
  let arguments = (ins Seg_FloatTensor:$lhs, Seg_FloatTensor:$rhs);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def Seg_ParamOp : Seg_Op<"param", [Pure]> {
  let summary = "A learned parameter, bound by its state_dict name at run time";
  let description = [{
    Produces the tensor stored under `name` in the checkpoint the graph is run
    with (a safetensors file whose keys are the PyTorch `state_dict` names).
    The result type fixes the shape and element type the checkpoint must
    provide; a missing name or a mismatching shape is a load-time error.

    ```mlir
    %w = seg.param "enc1.conv.0.weight" : tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolutions and normalizations
//===----------------------------------------------------------------------===//

def Seg_Conv2dOp : Seg_InferredOp<"conv2d"> {
  let summary = "2-D convolution (torch.nn.functional.conv2d)";
  let description = [{
    `input` is NCHW, `weight` is `(O, C / groups, kH, kW)`, the optional
    `bias` is `(O)`. `padding` is symmetric zero padding per spatial dim
    `[pH, pW]`; `stride` and `dilation` are `[sH, sW]` and `[dH, dW]`.
    `groups` divides both C and O; `groups = C` with `O = C` is a depthwise
    convolution. The output is `(N, O, Ho, Wo)` with
    `Ho = (H + 2 pH - dH (kH - 1) - 1) / sH + 1` (floor), likewise `Wo`.

    ```mlir
    %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1]
           dilation = [1, 1] groups = 1
         : tensor<1x3x64x64xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>
           -> tensor<1x16x64x64xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, Seg_FloatTensor:$weight,
                       Optional<Seg_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `stride` `=` $stride `padding` `=` $padding
    `dilation` `=` $dilation `groups` `=` $groups attr-dict
    `:` type($input) `,` type($weight) (`,` type($bias)^)? `->` type($result)
  }];
}

def Seg_ConvTranspose2dOp : Seg_InferredOp<"conv_transpose2d"> {
  let summary = "2-D transposed convolution (torch.nn.functional.conv_transpose2d)";
  let description = [{
    `input` is NCHW, `weight` is `(C, O / groups, kH, kW)` (PyTorch's layout
    for transposed convolutions), the optional `bias` is `(O)`. The output
    height is `(H - 1) sH - 2 pH + dH (kH - 1) + opH + 1` where `opH` is
    `output_padding[0]`, which must be smaller than `sH` or `dH`.

    ```mlir
    %y = seg.conv_transpose2d %x, %w, %b stride = [2, 2] padding = [0, 0]
           output_padding = [0, 0] dilation = [1, 1] groups = 1
         : tensor<1x64x8x8xf32>, tensor<64x32x2x2xf32>, tensor<32xf32>
           -> tensor<1x32x16x16xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, Seg_FloatTensor:$weight,
                       Optional<Seg_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$output_padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `stride` `=` $stride `padding` `=` $padding
    `output_padding` `=` $output_padding `dilation` `=` $dilation
    `groups` `=` $groups attr-dict
    `:` type($input) `,` type($weight) (`,` type($bias)^)? `->` type($result)
  }];
}

def Seg_BatchNormOp : Seg_InferredOp<"batch_norm"> {
  let summary = "Inference-mode batch normalization (torch.nn.functional.batch_norm)";
  let description = [{
    `y = (x - mean) / sqrt(var + epsilon) * weight + bias`, per channel
    (dimension 1). `mean`, `var`, `weight` and `bias` are `(C)`; the input has
    rank 2 or more. Running statistics are used (eval mode); the op never
    updates them.

    ```mlir
    %y = seg.batch_norm %x, %mean, %var, %gamma, %beta epsilon = 1.0e-05
         : tensor<1x16x64x64xf32>, tensor<16xf32>, tensor<16xf32>,
           tensor<16xf32>, tensor<16xf32> -> tensor<1x16x64x64xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, Seg_FloatTensor:$mean,
                       Seg_FloatTensor:$var, Seg_FloatTensor:$weight,
                       Seg_FloatTensor:$bias, F64Attr:$epsilon);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $mean `,` $var `,` $weight `,` $bias `epsilon` `=` $epsilon
    attr-dict `:` type($input) `,` type($mean) `,` type($var) `,`
    type($weight) `,` type($bias) `->` type($result)
  }];
}

def Seg_LayerNormOp : Seg_InferredOp<"layer_norm"> {
  let summary = "Layer normalization over trailing dims or one axis (torch.nn.functional.layer_norm)";
  let description = [{
    Without `axis`, normalizes over the trailing dimensions whose shape is
    the shape of `weight` (PyTorch's `normalized_shape`):
    `y = (x - E[x]) / sqrt(Var[x] + epsilon) * weight + bias`, with the biased
    variance. `weight` and `bias` have the same shape, equal to the input's
    trailing dimensions.

    With `axis = a`, normalizes over dimension `a` alone: `weight` and `bias`
    are `(input[a])` and apply along it. It equals moving dim `a` last, a
    LayerNorm over it, and moving it back: a LayerNorm over the channels of
    an NCHW map without the permute pair PyTorch code writes around it
    (`--simplify-token-layout` creates it; PyTorch has no direct spelling).

    ```mlir
    %y = seg.layer_norm %t, %g, %b epsilon = 1.0e-05
         : tensor<1x64x128xf32>, tensor<128xf32>, tensor<128xf32>
           -> tensor<1x64x128xf32>
    %z = seg.layer_norm %x, %g, %b axis = 1 epsilon = 1.0e-05
         : tensor<1x128x8x8xf32>, tensor<128xf32>, tensor<128xf32>
           -> tensor<1x128x8x8xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, Seg_FloatTensor:$weight,
                       Seg_FloatTensor:$bias, OptionalAttr<I64Attr>:$axis,
                       F64Attr:$epsilon);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias (`axis` `=` $axis^)? `epsilon` `=` $epsilon
    attr-dict `:` type($input) `,` type($weight) `,` type($bias)
    `->` type($result)
  }];
}

def Seg_LinearOp : Seg_InferredOp<"linear"> {
  let summary = "Affine map on the last dim (torch.nn.functional.linear)";
  let description = [{
    `y = x · weightᵀ + bias` over the last dimension: `input` is `(..., K)`,
    `weight` is `(N, K)`, the optional `bias` is `(N)`, the result is
    `(..., N)`.

    ```mlir
    %y = seg.linear %t, %w, %b
         : tensor<1x64x128xf32>, tensor<256x128xf32>, tensor<256xf32>
           -> tensor<1x64x256xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, Seg_FloatTensor:$weight,
                       Optional<Seg_FloatTensor>:$bias);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict
    `:` type($input) `,` type($weight) (`,` type($bias)^)? `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

def Seg_ReluOp : Seg_UnaryOp<"relu"> {
  let summary = "max(x, 0) (torch.relu)";
  let description = [{
    ```mlir
    %y = seg.relu %x : tensor<1x16x64x64xf32>
    ```
  }];
}

def Seg_SigmoidOp : Seg_UnaryOp<"sigmoid"> {
  let summary = "1 / (1 + exp(-x)) (torch.sigmoid)";
  let description = [{
    ```mlir
    %y = seg.sigmoid %x : tensor<1x1x64x64xf32>
    ```
  }];
}

def Seg_GeluOp : Seg_Op<"gelu", [Pure, SameOperandsAndResultType,
                                 InferTypeOpInterface]> {
  let summary = "Gaussian error linear unit (torch.nn.functional.gelu)";
  let description = [{
    `approximate = none` (the default) is the exact form
    `x · Φ(x) = x/2 · (1 + erf(x / √2))`; `approximate = tanh` is
    `x/2 · (1 + tanh(√(2/π) (x + 0.044715 x³)))`, as in PyTorch.

    ```mlir
    %y = seg.gelu %t : tensor<1x64x128xf32>
    %z = seg.gelu %t approximate = tanh : tensor<1x64x128xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input,
                       DefaultValuedAttr<Seg_GeluApproximationAttr,
                           "::mlir::gpuopt::seg::GeluApproximation::None">:$approximate);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`approximate` `=` `` $approximate^)? attr-dict `:` type($input)
  }];
}

def Seg_AddOp : Seg_BroadcastBinaryOp<"add", [Commutative]> {
  let summary = "Elementwise sum with broadcasting (torch.add)";
  let description = [{
    Broadcasts as NumPy/PyTorch do (see the dialect description).

    ```mlir
    %y = seg.add %a, %b : tensor<1x16x64x64xf32>, tensor<1x16x64x64xf32>
         -> tensor<1x16x64x64xf32>
    ```
  }];
}

def Seg_MulOp : Seg_BroadcastBinaryOp<"mul", [Commutative]> {
  let summary = "Elementwise product with broadcasting (torch.mul)";
  let description = [{
    Broadcasts as NumPy/PyTorch do (see the dialect description).

    ```mlir
    %y = seg.mul %x, %s : tensor<1x16x64x64xf32>, tensor<1x16x1x1xf32>
         -> tensor<1x16x64x64xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Pooling and resampling
//===----------------------------------------------------------------------===//

def Seg_MaxPool2dOp : Seg_InferredOp<"max_pool2d", [SameOperandsAndResultElementType]> {
  let summary = "2-D max pooling (torch.nn.functional.max_pool2d)";
  let description = [{
    Over NCHW input. Padding is implicit `-inf` and may be at most half the
    kernel size, as in PyTorch; `ceil_mode` rounds the output size up but
    never starts a window in the right/bottom padding.

    ```mlir
    %y = seg.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0]
           dilation = [1, 1] ceil_mode = false
         : tensor<1x16x64x64xf32> -> tensor<1x16x32x32xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, BoolAttr:$ceil_mode);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding
    `dilation` `=` $dilation `ceil_mode` `=` $ceil_mode attr-dict
    `:` type($input) `->` type($result)
  }];
}

def Seg_UpsampleBilinearOp : Seg_InferredOp<"upsample_bilinear",
                                            [SameOperandsAndResultElementType]> {
  let summary = "Bilinear resize of NCHW to a given size (F.interpolate, mode='bilinear')";
  let description = [{
    Resizes H and W to `size`. With `align_corners = true` the corner pixels
    of input and output are aligned (`src = dst · (in − 1) / (out − 1)`);
    with `false`, pixel centres are (`src = (dst + 0.5) · in / out − 0.5`,
    clamped at 0). The scale is always `in / out` (PyTorch's behaviour for an
    integer `scale_factor` or an explicit `size`).

    ```mlir
    %y = seg.upsample_bilinear %x size = [64, 64] align_corners = false
         : tensor<1x16x32x32xf32> -> tensor<1x16x64x64xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, DenseI64ArrayAttr:$size,
                       BoolAttr:$align_corners);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `size` `=` $size `align_corners` `=` $align_corners attr-dict
    `:` type($input) `->` type($result)
  }];
}

def Seg_UpsampleNearestOp : Seg_InferredOp<"upsample_nearest",
                                           [SameOperandsAndResultElementType]> {
  let summary = "Nearest-neighbour resize of NCHW to a given size (F.interpolate, mode='nearest')";
  let description = [{
    `out[n, c, h, w] = in[n, c, floor(h · H / Ho), floor(w · W / Wo)]`
    (PyTorch's `nearest`, not `nearest-exact`).

    ```mlir
    %y = seg.upsample_nearest %x size = [64, 64]
         : tensor<1x16x32x32xf32> -> tensor<1x16x64x64xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, DenseI64ArrayAttr:$size);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `size` `=` $size attr-dict `:` type($input) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Seg_ConcatOp : Seg_InferredOp<"concat"> {
  let summary = "Concatenate along one dim (torch.cat)";
  let description = [{
    All operands have the same rank, element type and sizes except along
    `dim` (non-negative). A single operand folds to itself.

    ```mlir
    %y = seg.concat %a, %b dim = 1
         : tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32> -> tensor<1x48x8x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Seg_FloatTensor>:$inputs, I64Attr:$dim);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $inputs `dim` `=` $dim attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasFolder = 1;
}

def Seg_SliceOp : Seg_InferredOp<"slice", [SameOperandsAndResultElementType]> {
  let summary = "Strided box of a tensor (Python slicing, torch.narrow, torch.chunk)";
  let description = [{
    For every dimension `d`, takes `size[d]` elements starting at `start[d]`
    with step `step[d]` (`start ≥ 0`, `size ≥ 1`, `step ≥ 1`, and the last
    index `start + (size − 1) · step` inside the dimension). The result shape
    is `size`.

    Canonicalization: a unit-step slice of a `seg.pad` that cuts into the
    padding becomes a pad of a slice of the unpadded tensor (a window offset
    into a zero-padded map is a shifted, zero-filled window: Shift-Net's
    pad → per-group windows); a unit-step slice inside one dimension of a
    `seg.concat` along it becomes the concat of the slices of the pieces it
    overlaps (a crop of a circular pad).

    ```mlir
    %y = seg.slice %x start = [0, 3, 0, 0] size = [1, 1, 8, 8]
           step = [1, 1, 1, 1] : tensor<1x16x8x8xf32> -> tensor<1x1x8x8xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$size, DenseI64ArrayAttr:$step);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `start` `=` $start `size` `=` $size `step` `=` $step attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;  let hasCanonicalizer = 1;
}

def Seg_PadOp : Seg_InferredOp<"pad", [SameOperandsAndResultElementType]> {
  let summary = "Constant padding (torch.nn.functional.pad, mode='constant')";
  let description = [{
    Adds `low[d]` elements before and `high[d]` after dimension `d` (both
    non-negative, one entry per dimension in dimension order — not PyTorch's
    reversed pair list), filled with `value`. Negative padding is written as
    `seg.slice`.

    ```mlir
    %y = seg.pad %x low = [0, 0, 2, 2] high = [0, 0, 2, 2] value = 0.0
         : tensor<1x16x8x8xf32> -> tensor<1x16x12x12xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high, F64Attr:$value);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `low` `=` $low `high` `=` $high `value` `=` $value attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def Seg_RollOp : Seg_InferredOp<"roll"> {
  let summary = "Cyclic shift along one or more dims (torch.roll)";
  let description = [{
    Exactly `torch.roll(x, shifts, dims)` with explicit `dims`: for every
    listed dimension `d` with shift `s` and size `L`,
    `out[..., i, ...] = in[..., (i − s) mod L, ...]`. Positive shifts move
    content to higher indices; shifts may be negative or larger than the
    dimension. `dims` are distinct and non-negative. Rolling by multiples of
    the dimension sizes folds away; a roll of a roll over the same dims folds
    into one.

    ```mlir
    %y = seg.roll %x shifts = [3] dims = [2] : tensor<1x1x32x32xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, DenseI64ArrayAttr:$shifts,
                       DenseI64ArrayAttr:$dims);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `shifts` `=` $shifts `dims` `=` $dims attr-dict `:` type($input)
  }];
  let hasFolder = 1;
}

def Seg_ReshapeOp : Seg_Op<"reshape", [Pure, SameOperandsAndResultElementType]> {
  let summary = "Row-major reshape (torch.reshape, view, flatten)";
  let description = [{
    Reinterprets the row-major element sequence with the result shape; the
    element counts must be equal. Identity reshapes and reshapes of reshapes
    fold.

    ```mlir
    %t = seg.reshape %x : tensor<1x128x8x8xf32> -> tensor<1x128x64xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Seg_PermuteOp : Seg_InferredOp<"permute", [SameOperandsAndResultElementType]> {
  let summary = "Permute dims (torch.permute, transpose)";
  let description = [{
    `result.shape[i] = input.shape[dims[i]]`; `dims` is a permutation of
    `0 .. rank − 1`. The identity permutation folds.

    ```mlir
    %t = seg.permute %x dims = [0, 2, 1] : tensor<1x128x64xf32> -> tensor<1x64x128xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dims` `=` $dims attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Ops created by the optimization passes
//===----------------------------------------------------------------------===//

def Seg_ChannelShiftOp : Seg_InferredOp<"channel_shift",
                                        [SameOperandsAndResultElementType]> {
  let summary = "Shift every channel of an NCHW map by its own (dh, dw)";
  let description = [{
    `out[n, c, h, w] = in[n, c, h − offsets_h[c], w − offsets_w[c]]`.
    With `mode = cyclic` the source indices wrap around (mod H, mod W): this
    is what a group of per-channel `torch.roll`s computes. With
    `mode = zero` a source index outside the map reads 0: this is what
    pad → roll → crop computes (UNeXt's shifted MLP). An offsets array is
    either empty (no shift along that axis) or has one entry per channel.

    It is the NCHW form of `seg.shift` (`group_dim = 1`, `dims` ⊆ {2, 3}),
    which canonicalizes to it. `--collapse-rolls` creates this op from rolls
    and from the canonical forms of the other shift idioms; `--fuse-roll`
    folds it into the consumer's addressing (`seg.fused_conv2d`) where it
    can.

    ```mlir
    // Rolling-UNet: channel c rolled by c along H.
    %y = seg.channel_shift %x offsets_h = [0, 1, 2, 3] offsets_w = []
           mode = cyclic : tensor<1x4x32x32xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, DenseI64ArrayAttr:$offsets_h,
                       DenseI64ArrayAttr:$offsets_w, Seg_ShiftModeAttr:$mode);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `offsets_h` `=` $offsets_h `offsets_w` `=` $offsets_w
    `mode` `=` `` $mode attr-dict `:` type($input)
  }];
  let hasFolder = 1;
}

def Seg_ShiftOp : Seg_InferredOp<"shift", [SameOperandsAndResultElementType]> {
  let summary = "Shift every index of one dim (the groups) along other dims by its own offsets";
  let description = [{
    The rank-generic per-group shift: with `G` the size of `group_dim`, `K`
    the number of shifted `dims` and `offsets` of `K · G` entries (row `k`,
    the offsets along `dims[k]`, one per index `g` of `group_dim`):

    `out[..., g, ..., i_d, ...] = in[..., g, ..., i_d − offsets[k · G + g], ...]`

    for every `d = dims[k]` at once. With `mode = cyclic` a source index
    wraps around (mod the dim's size), as a group of `torch.roll`s computes;
    with `mode = zero` a source index outside the tensor reads 0, as a
    zero-filled buffer with shifted slice assignments computes (TSM's
    temporal shift, ShiftViT, Shift-Net's pad → windows → cat). `dims` are
    distinct, in range and other than `group_dim`; offsets are any int64
    (beyond the dim's size a zero shift reads only zeros).

    All-zero offsets (multiples of the size when cyclic) fold to the input;
    a cyclic shift of a cyclic shift over the same dims folds into one. The
    NCHW form (rank 4, `group_dim = 1`, `dims` ⊆ {2, 3}) canonicalizes to
    `seg.channel_shift`, which `--fuse-roll` folds into convolutions.
    `--collapse-rolls` creates this op from concats of shifted slices.

    ```mlir
    // TSM: channels 0-1 shifted back along T, channels 2-3 forward, 4-7 kept.
    %y = seg.shift %x group_dim = 2 dims = [1]
           offsets = [-1, -1, 1, 1, 0, 0, 0, 0] mode = zero
         : tensor<2x4x8x6x6xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, I64Attr:$group_dim,
                       DenseI64ArrayAttr:$dims, DenseI64ArrayAttr:$offsets,
                       Seg_ShiftModeAttr:$mode);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `group_dim` `=` $group_dim `dims` `=` $dims `offsets` `=` $offsets
    `mode` `=` `` $mode attr-dict `:` type($input)
  }];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// The offsets, row `k` (along `dims[k]`) reduced to the equivalent
    /// value in [0, L) when cyclic and clamped to [−L, L] when zero-filled
    /// (L the size of `dims[k]`; 0 when L is 0): the exact shift, in a range
    /// whose index arithmetic cannot overflow.
    SmallVector<int64_t> getNormalizedOffsets();
  }];
}

def Seg_FusedConv2dOp : Seg_InferredOp<"fused_conv2d", [AttrSizedOperandSegments]> {
  let summary = "conv2d with a shifted input, an activation and a residual add";
  let description = [{
    One convolution kernel with everything the passes fold into it:

    `result = activation(conv2d(channel_shift(input), weight, bias)) + residual`

    - the input is read through `seg.channel_shift` semantics (`offsets_h`,
      `offsets_w`, `mode`; empty offsets: no shift) — the shifted map is never
      materialized (zero extra bytes, zero extra kernels); `--fuse-roll`
      creates this, also for a `seg.linear` over the channels of an NCHW map
      (a 1×1 convolution);
    - the optional `frame_shift` (`#seg.frame_shift<frames = T, offsets =
      [dt_0, …, dt_(C−1)]>`, one offset per input channel) also shifts
      channels along the frames of the batch, zero-filled: with
      `n = b · T + t`, image `n` reads channel `c` of image `n − dt_c` when
      `0 ≤ t − dt_c < T`, and 0 otherwise (TSM's temporal shift, the sign of
      `seg.shift`'s offsets). It is independent of the (dh, dw) shift (the
      two address different axes and compose in either order):

      `x'[b·T + t, c, h, w] = 0 ≤ t − dt_c < T ? x[b·T + t − dt_c, c, h, w] : 0`,
      then `channel_shift(x')`.

      The verifier requires `T ≥ 1` dividing the batch, `C` offsets and
      `|dt_c| < T`. `--fuse-roll` folds a zero-filled `seg.shift` along the
      frames of the `(N/T, T, C, H, W)` view of the input into it;
    - convolution attributes and the optional `bias` as in `seg.conv2d`;
    - `activation` is `none`, `relu`, `gelu` (erf) or `gelu_tanh`;
    - the optional `residual` (the result's shape) is added last.

    `--fuse-conv-bn-relu` folds BatchNorm into `weight`/`bias` and fuses the
    activation and the residual add.

    ```mlir
    %y = seg.fused_conv2d %x, %w, %b offsets_h = [0, 1, 2, 3] offsets_w = []
           mode = cyclic stride = [1, 1] padding = [0, 0] dilation = [1, 1]
           groups = 1 activation = none
         : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>)
           -> tensor<1x4x8x8xf32>
    %z = seg.fused_conv2d %x, %w3, %b residual %y offsets_h = [] offsets_w = []
           mode = zero stride = [1, 1] padding = [1, 1] dilation = [1, 1]
           groups = 1 activation = relu
         : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>,
            tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    // TSM: channels 0-1 read the next frame, 2-3 the previous one (clips of 4).
    %t = seg.fused_conv2d %v, %w8, %b8 offsets_h = [] offsets_w = []
           mode = zero
           frame_shift = <frames = 4, offsets = [-1, -1, 1, 1, 0, 0, 0, 0]>
           stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1
           activation = none
         : (tensor<8x8x3x4xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>)
           -> tensor<8x8x3x4xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, Seg_FloatTensor:$weight,
                       Optional<Seg_FloatTensor>:$bias,
                       Optional<Seg_FloatTensor>:$residual,
                       DenseI64ArrayAttr:$offsets_h,
                       DenseI64ArrayAttr:$offsets_w, Seg_ShiftModeAttr:$mode,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups,
                       Seg_ActivationAttr:$activation,
                       OptionalAttr<Seg_FrameShiftAttr>:$frame_shift);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? (`residual` $residual^)?
    `offsets_h` `=` $offsets_h `offsets_w` `=` $offsets_w `mode` `=` `` $mode
    (`frame_shift` `=` $frame_shift^)?
    `stride` `=` $stride `padding` `=` $padding `dilation` `=` $dilation
    `groups` `=` $groups `activation` `=` `` $activation attr-dict
    `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Whether the input is read through a shift.
    bool hasShift() { return !getOffsetsH().empty() || !getOffsetsW().empty(); }
    /// Whether the input is read through a shift along the frames.
    bool hasFrameShift() { return static_cast<bool>(getFrameShiftAttr()); }
  }];
}

def Seg_FoldBatchNormOp : Seg_Op<"fold_batch_norm", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Fold inference BatchNorm parameters into a convolution's weight and bias";
  let description = [{
    With `scale = gamma / sqrt(var + epsilon)` per output channel:
    `new_weight = weight · scale` (broadcast over all but dim 0) and
    `new_bias = (bias − mean) · scale + beta` (`bias` = 0 when absent).
    `conv(x, new_weight, new_bias)` equals `batch_norm(conv(x, weight, bias))`.

    When all its operands are parameters (the case `--fuse-conv-bn-relu`
    creates) it is load-time work: `--seg-split-load-time` moves it into
    `@<entry>_init`, evaluated once per loaded checkpoint. When an operand is
    a runtime value it stays in `@<entry>` and runs per inference; every
    backend and the cost model follow the same rule (LoadTime.h).

    ```mlir
    %w2, %b2 = seg.fold_batch_norm %w bias %b, %mean, %var, %gamma, %beta
                 epsilon = 1.0e-05
               : (tensor<16x3x3x3xf32>, tensor<16xf32>, tensor<16xf32>,
                  tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
                 -> (tensor<16x3x3x3xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$weight, Optional<Seg_FloatTensor>:$bias,
                       Seg_FloatTensor:$mean, Seg_FloatTensor:$var,
                       Seg_FloatTensor:$gamma, Seg_FloatTensor:$beta,
                       F64Attr:$epsilon);
  let results = (outs Seg_FloatTensor:$new_weight, Seg_FloatTensor:$new_bias);
  let assemblyFormat = [{
    $weight (`bias` $bias^)? `,` $mean `,` $var `,` $gamma `,` $beta
    `epsilon` `=` $epsilon attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Seg_DeformConv2dOp : Seg_InferredOp<"deform_conv2d"> {
  let summary = "Deformable 2-D convolution (torchvision.ops.deform_conv2d)";
  let description = [{
    For output position `(y, x)`, kernel tap `(i, j)` and input channel `c`
    in offset group `g = c / (C / offset_groups)`, samples the input
    bilinearly (zero outside the map) at
    `(y·sH − pH + i·dH + Δy, x·sW − pW + j·dW + Δx)` where
    `Δy = offset[n, 2·(g·kH·kW + i·kW + j), y, x]` and `Δx` is the next
    channel. `offset` is `(N or 1, 2·offset_groups·kH·kW, Ho, Wo)` (a batch
    of 1 applies to every image); weight, bias, stride, padding, dilation and
    groups as in `seg.conv2d`.

    `--roll-to-deform-conv` expresses a shift followed by a convolution this
    way, with constant offsets from `seg.shift_offsets`.

    ```mlir
    %y = seg.deform_conv2d %x, %off, %w, %b stride = [1, 1] padding = [0, 0]
           dilation = [1, 1] groups = 1 offset_groups = 4
         : (tensor<1x4x8x8xf32>, tensor<1x8x8x8xf32>, tensor<6x4x1x1xf32>,
            tensor<6xf32>) -> tensor<1x6x8x8xf32>
    ```
  }];
  let arguments = (ins Seg_FloatTensor:$input, Seg_FloatTensor:$offset,
                       Seg_FloatTensor:$weight, Optional<Seg_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups,
                       I64Attr:$offset_groups);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $offset `,` $weight (`,` $bias^)? `stride` `=` $stride
    `padding` `=` $padding `dilation` `=` $dilation `groups` `=` $groups
    `offset_groups` `=` $offset_groups attr-dict
    `:` functional-type(operands, results)
  }];
}

def Seg_ShiftOffsetsOp : Seg_Op<"shift_offsets", [Pure]> {
  let summary = "Constant deformable-conv offsets that make a convolution read a shifted map";
  let description = [{
    The `offset` operand of a `seg.deform_conv2d` (one offset group per
    channel) for which it computes exactly
    `conv2d(channel_shift(x, offsets_h, offsets_w, mode))` over an input of
    spatial size `input_size`, with the given kernel geometry: every tap's
    offset points at the integer position the shifted map would read —
    across the wrap-around for `cyclic`, outside the map (so reading 0)
    where the convolution's zero padding or a zero-filled shift reads 0.
    The result is `(1, 2·C·kH·kW, Ho, Wo)`; it has no operands, so backends
    compute it once (load time).

    ```mlir
    %off = seg.shift_offsets offsets_h = [0, 1, 2, 3] offsets_w = []
             mode = cyclic input_size = [8, 8] kernel = [1, 1]
             stride = [1, 1] padding = [0, 0] dilation = [1, 1]
           : tensor<1x8x8x8xf32>
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$offsets_h,
                       DenseI64ArrayAttr:$offsets_w, Seg_ShiftModeAttr:$mode,
                       DenseI64ArrayAttr:$input_size, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation);
  let results = (outs Seg_FloatTensor:$result);
  let assemblyFormat = [{
    `offsets_h` `=` $offsets_h `offsets_w` `=` $offsets_w `mode` `=` `` $mode
    `input_size` `=` $input_size `kernel` `=` $kernel `stride` `=` $stride
    `padding` `=` $padding `dilation` `=` $dilation attr-dict
    `:` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The offsets, row-major in the result's shape (the one definition
    /// shared by the reference backend and the lowerings).
    SmallVector<float> computeOffsets();
  }];
}

#endif // GPUOPT_DIALECT_SEG_IR_SEGOPS_TD
