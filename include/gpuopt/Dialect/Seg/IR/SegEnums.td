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

#endif // GPUOPT_DIALECT_SEG_IR_SEGENUMS_TD
