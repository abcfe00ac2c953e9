//===- SegEnums.td - seg dialect enum attributes -----------*- tablegen -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The closed vocabularies of seg op attributes. Each is a C++ enum (with the
// generated `stringifyX` / `symbolizeX`) wrapped in a dialect attribute, so
// that the verifier rejects an unknown value and the passes, lowerings and
// backends switch over the enum instead of comparing text.
//
// In an op's custom assembly the value is a bare keyword
// (`mode = cyclic`, `activation = relu`, `approximate = tanh`); in the
// generic form it is `#seg<shift_mode cyclic>`, `#seg<activation relu>`,
// `#seg<gelu_approximation tanh>`.
//
// One structured attribute lives here too, for the same generated
// attribute classes: `#seg.frame_shift` (the frame offsets of
// `seg.fused_conv2d`).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_SEG_IR_SEGENUMS_TD
#define GPUOPT_DIALECT_SEG_IR_SEGENUMS_TD

include "gpuopt/Dialect/Seg/IR/SegBase.td"
include "mlir/IR/EnumAttr.td"

/// A seg enum attribute. Its parser (SegDialect.cpp) reports an unknown value
/// once, naming the valid ones; the printer writes the bare keyword.
class Seg_EnumAttr<EnumAttrInfo info, string name>
    : EnumAttr<Seg_Dialect, info, name> {
  let assemblyFormat = ?;
  let hasCustomAssemblyFormat = 1;
}

//===----------------------------------------------------------------------===//
// ShiftMode
//===----------------------------------------------------------------------===//

def Seg_ShiftMode : I32EnumAttr<"ShiftMode",
    "how a per-channel shift treats a source index outside the map", [
      I32EnumAttrCase<"Cyclic", 0, "cyclic">,
      I32EnumAttrCase<"Zero", 1, "zero">
    ]> {
  let cppNamespace = "::mlir::gpuopt::seg";
  let genSpecializedAttr = 0;
  let description = [{
    `cyclic`: the source index wraps around (mod H, mod W), as a group of
    `torch.roll`s computes. `zero`: a source index outside the map reads 0,
    as pad → roll → crop computes.
  }];
}

def Seg_ShiftModeAttr : Seg_EnumAttr<Seg_ShiftMode, "shift_mode">;

//===----------------------------------------------------------------------===//
// Activation
//===----------------------------------------------------------------------===//

def Seg_Activation : I32EnumAttr<"Activation",
    "the activation a fused convolution applies before the residual add", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Relu", 1, "relu">,
      I32EnumAttrCase<"Gelu", 2, "gelu">,
      I32EnumAttrCase<"GeluTanh", 3, "gelu_tanh">
    ]> {
  let cppNamespace = "::mlir::gpuopt::seg";
  let genSpecializedAttr = 0;
  let description = [{
    `none`: identity; `relu`: `max(x, 0)`; `gelu`: the exact (erf) GELU;
    `gelu_tanh`: the tanh approximation of GELU (`seg.gelu` with
    `approximate = tanh`).
  }];
}

def Seg_ActivationAttr : Seg_EnumAttr<Seg_Activation, "activation">;

//===----------------------------------------------------------------------===//
// GeluApproximation
//===----------------------------------------------------------------------===//

def Seg_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "the form of GELU (torch.nn.functional.gelu's `approximate`)", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Tanh", 1, "tanh">
    ]> {
  let cppNamespace = "::mlir::gpuopt::seg";
  let genSpecializedAttr = 0;
  let description = [{
    `none`: `x · Φ(x)` with the erf; `tanh`:
    `x/2 · (1 + tanh(√(2/π) (x + 0.044715 x³)))`.
  }];
}

def Seg_GeluApproximationAttr
    : Seg_EnumAttr<Seg_GeluApproximation, "gelu_approximation">;

//===----------------------------------------------------------------------===//
// FrameShift
//===----------------------------------------------------------------------===//

def Seg_FrameShiftAttr : AttrDef<Seg_Dialect, "FrameShift"> {
  let mnemonic = "frame_shift";
  let summary = "A per-channel, zero-filled shift along the frames of a batch";
  let description = [{
    The batch of `N` images is read as `N / frames` clips of `frames`
    consecutive images (frames `t = n mod frames`), and channel `c` of image
    `n = b · frames + t` reads channel `c` of image `b · frames + t −
    offsets[c]` of the same clip, or 0 when `t − offsets[c]` is outside
    `[0, frames)`: TSM's temporal shift of the `(N / T, T, C, H, W)` view
    (`seg.shift group_dim = 2 dims = [1] mode = zero`, the same offsets).
    `seg.fused_conv2d` checks it against its input: `frames` positive and
    dividing the batch, one offset per input channel, each in
    `(−frames, frames)`.

    ```mlir
    #seg.frame_shift<frames = 4, offsets = [-1, -1, 1, 1, 0, 0, 0, 0]>
    ```
  }];
  let parameters = (ins "int64_t":$frames,
                        ArrayRefParameter<"int64_t">:$offsets);
  let assemblyFormat = [{
    `<` `frames` `=` $frames `,` `offsets` `=` `[` $offsets `]` `>`
  }];
}

#endif // GPUOPT_DIALECT_SEG_IR_SEGENUMS_TD
