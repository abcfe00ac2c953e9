//===- SegBase.td - seg dialect definition -----------------*- tablegen -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_SEG_IR_SEGBASE_TD
#define GPUOPT_DIALECT_SEG_IR_SEGBASE_TD

include "mlir/IR/OpBase.td"

def Seg_Dialect : Dialect {
  let name = "seg";
  let cppNamespace = "::mlir::gpuopt::seg";
  let useDefaultAttributePrinterParser = 1;
  let summary = "Tensor-level operators of segmentation networks, with PyTorch semantics";
  let description = [{
    The `seg` dialect captures segmentation networks (UNet, Rolling-UNet,
    UNeXt, ...) exactly as PyTorch runs them: every op has the semantics of the
    `torch.nn.functional` / `torch` call it is named after, on statically
    shaped, ranked floating-point tensors in PyTorch's layouts (NCHW for
    images, `(B, N, C)` for tokens).

    A model is a `func.func` (by convention `@forward`) whose arguments are
    the network inputs. Learned parameters enter through `seg.param`, which
    names a tensor by its PyTorch `state_dict` key; the values are bound when
    the graph is run (from a safetensors file), so the same `.mlir` runs with
    any checkpoint of matching shapes.

    The dialect is deliberately unoptimized: a `torch.roll` is a `seg.roll`.
    Rewriting is the job of the passes.

    Broadcasting (`seg.add`, `seg.mul`): NumPy/PyTorch rules. Shapes are
    aligned at their trailing dimension; each pair of aligned sizes must be
    equal or one of them 1; the missing leading dimensions of the lower-rank
    operand count as 1. The result has the broadcast shape.

    Closed vocabularies are enum attributes (SegEnums.td; their cases are
    listed in `SegEnums.md`): the `mode` of a shift (`cyclic`, `zero`), the
    `activation` of `seg.fused_conv2d` (`none`, `relu`, `gelu`, `gelu_tanh`)
    and the `approximate` of `seg.gelu` (`none`, `tanh`). An op's custom form
    writes the bare keyword (`mode = cyclic`; the string `"cyclic"` parses
    too), the generic form the attribute (`#seg<shift_mode cyclic>`,
    `#seg<activation relu>`, `#seg<gelu_approximation tanh>`); any other
    value is a parse error naming the valid cases.
  }];
}

/// Every tensor the op takes or produces fits gpuopt's per-tensor size limit
/// (`seg::kMaxTensorBytes`, 1 TiB). Checked after the op's own verifier, so
/// that shape errors keep their precise message.
def Seg_TensorSizeLimit : NativeOpTrait<"TensorSizeLimit"> {
  let cppNamespace = "::mlir::gpuopt::seg";
}

/// Base class of every seg op.
class Seg_Op<string mnemonic, list<Trait> traits = []>
    : Op<Seg_Dialect, mnemonic, traits # [Seg_TensorSizeLimit]>;

/// Statically shaped tensors of the floating-point types gpuopt supports.
def Seg_FloatTensor : StaticShapeTensorOf<[F16, BF16, F32, F64]>;

#endif // GPUOPT_DIALECT_SEG_IR_SEGBASE_TD
