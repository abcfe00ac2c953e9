//===- Passes.td - seg transformation passes ---------------*- tablegen -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_SEG_TRANSFORMS_PASSES_TD
#define GPUOPT_DIALECT_SEG_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CollapseRollsPass : Pass<"collapse-rolls", "::mlir::func::FuncOp"> {
  let summary = "Collapse groups of rolls into one per-channel shift";
  let description = [{
    Recognizes what a group of rolls computes, however the model wrote it,
    and replaces it with one `seg.channel_shift`:

    - a `seg.roll` of an NCHW map along H and/or W is a shift of every
      channel by the same offsets;
    - a `seg.concat` along channels of shifted (or unshifted) channel slices
      that partition one map, in order — any partition: one-channel slices,
      `torch.chunk` remainders, fewer chunks than asked — is one shift with
      per-channel offsets;
    - a crop of a cyclic shift of a zero-padded map, where no offset exceeds
      the total padding of its axis (low + high: what wraps around lands in
      the padding), is a zero-filled shift of the unpadded map (UNeXt's
      pad → chunk → roll → concat → crop).

    The exporter's canonical forms of the other shift idioms become one
    `seg.shift` (any rank; its NCHW form is `seg.channel_shift`):

    - a `seg.concat` along dim g of pieces that partition dim g of one
      tensor in order, each a slice (whole, rolled or shifted) or a zero pad
      of a slice that fills exactly what a zero-filled shift reads from
      outside (TSM along T, ShiftViT), or a window of a zero-padded tensor
      (Shift-Net), is a per-group shift;
    - a `seg.concat` of windows of one dim that rotate it (a hand-written
      roll, `index_select` with constant runs, a crop of a circular pad once
      the crop moved into the pieces) is a `seg.roll`.

    Shifts of shifts, rolls of rolls and slices of slices fold; slices of
    pads, concats, rolls and shifts canonicalize (see `seg.slice`). Rolls
    along other dimensions (batch, channels) or of tensors of another rank
    stay; so do concats that are not shifts (pieces out of order or
    overlapping, a nonzero fill, different tensors).

    ```mlir
    %s0 = seg.slice %x start = [0, 0, 0, 0] size = [1, 1, 8, 8] step = [1, 1, 1, 1] ...
    %s1 = seg.slice %x start = [0, 1, 0, 0] size = [1, 1, 8, 8] step = [1, 1, 1, 1] ...
    %r1 = seg.roll %s1 shifts = [1] dims = [2] : tensor<1x1x8x8xf32>
    %y = seg.concat %s0, %r1 dim = 1 ...
    // becomes
    %y = seg.channel_shift %x offsets_h = [0, 1] offsets_w = [] mode = cyclic
           : tensor<1x2x8x8xf32>
    ```

    Input: any seg graph. Output: the same function; no `seg.roll` of an NCHW
    map along its spatial dims remains.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark on the function with the pass statistics (release "
           "builds of LLVM compile --mlir-pass-statistics out)">,
  ];
  let statistics = [
    Statistic<"numRollsRemoved", "rolls-removed", "seg.roll ops removed">,
    Statistic<"numShifts", "shift-ops",
              "seg.channel_shift and seg.shift ops in the result">,
  ];
}

def FuseRollPass : Pass<"fuse-roll", "::mlir::func::FuncOp"> {
  let summary = "Fold rolls into the input addressing of the convolutions and linears that consume them";
  let description = [{
    Runs the roll collapsing of `--collapse-rolls`, then folds each
    `seg.channel_shift` into its consumers:

    - `seg.conv2d` (any kernel, stride, padding, dilation, groups) becomes
      `seg.fused_conv2d`, which reads its input through the shift;
    - `seg.linear` over the tokens of an NCHW map — reached through
      `reshape (N, C, H·W)` + `permute [0, 2, 1]`, or `permute [0, 2, 3, 1]`
      (+ `reshape (N, H·W, C)`) — is a 1×1 convolution over the channels: it
      becomes a 1×1 `seg.fused_conv2d` (the weight reshaped to `(O, C, 1, 1)`)
      followed by the same layout change of its output.

    TSM's shift — a zero-filled `seg.shift` along dim 1 (T) of the
    `(N/T, T, C, H, W)` view of a convolution's input, the channels as its
    groups, every offset inside the clip, viewed back as `(N, C, H, W)` —
    becomes the `frame_shift` of a `seg.fused_conv2d` (of one that already
    has a (dh, dw) or a frame shift too, where they compose exactly).

    A `seg.roll` along the channels alone (dim 1) of an ungrouped
    convolution's input, or of one piece of a channel `seg.concat` feeding
    it, is a permutation of the weight's input channels: it moves onto the
    weight (`conv(roll(X, s, 1), W) = conv(X, roll(W, -s, 1))`, on the
    weight slice of that piece), where `--seg-split-load-time` computes it
    once at load. `--roll-to-deform-conv` does the same.

    A shift with other consumers (an add, a LayerNorm, ...) stays as one
    `seg.channel_shift` op, never as C rolls (its gather fuses into an
    elementwise consumer's loop in the linalg lowering); so does a
    `seg.shift` along other axes that is not such a frame shift. The folded
    forms are exact: zero extra bytes and zero extra kernels.

    ```mlir
    %s = seg.channel_shift %x offsets_h = [0, 1, 2, 3] offsets_w = [] mode = cyclic ...
    %y = seg.conv2d %s, %w, %b stride = [1, 1] padding = [1, 1] ...
    // becomes
    %y = seg.fused_conv2d %x, %w, %b offsets_h = [0, 1, 2, 3] offsets_w = []
           mode = cyclic stride = [1, 1] padding = [1, 1] ... activation = none
    ```

    Input: any seg graph. Output: no `seg.roll` of an NCHW map along its
    spatial dims remains; shifts consumed by convolutions or token linears
    are folded into them.
  }];
  let dependentDialects = ["::mlir::gpuopt::seg::SegDialect"];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark on the function with the pass statistics (release "
           "builds of LLVM compile --mlir-pass-statistics out)">,
  ];
  let statistics = [
    Statistic<"numRollsRemoved", "rolls-removed", "seg.roll ops removed">,
    Statistic<"numShiftsFused", "shifts-fused",
              "shifts folded into a convolution's or linear's addressing">,
    Statistic<"numShiftsLeft", "shift-ops-left",
              "seg.channel_shift and seg.shift ops left (consumers that "
              "cannot absorb them)">,
    Statistic<"numBytesSaved", "bytes-saved",
              "bytes no longer moved by roll/slice/concat/pad/shift ops">,
  ];
}

def SimplifyTokenLayoutPass : Pass<"simplify-token-layout", "::mlir::func::FuncOp"> {
  let summary = "Remove token/NCHW layout round trips and turn token linears into 1x1 convolutions";
  let description = [{
    Segmentation transformers switch between NCHW maps and tokens
    `(N, H·W, C)` around every Linear and LayerNorm (`flatten(2).transpose(1,
    2)`, `transpose(1, 2).view(N, C, H, W)`), and each switch is a full copy
    in PyTorch. This pass removes the switches that cancel:

    - a `seg.linear` over the tokens of an NCHW map is a 1×1 convolution over
      its channels: it becomes `seg.conv2d` on the NCHW map, followed by the
      layout change of its result;
    - elementwise ops (`relu`, `gelu`, `sigmoid`, and `add`/`mul` of two
      operands with the same layout change) move below layout changes;
    - a `seg.layer_norm` over one axis moves below a layout change that
      keeps that axis whole and becomes a LayerNorm over the axis it came
      from (`axis = 1`: the channels of the NCHW map). Below a permute that
      other ops use too, it moves only where the copied permute meets
      another one after the LayerNorm (UNeXt's tokens feed the LayerNorm and
      the residual add);
    - a `seg.concat` of operands with the same layout change (the same
      permute, or reshapes that keep the concat axis whole) becomes the
      layout change of a concat of the NCHW maps (Rolling-UNet concatenates
      tokens before its fc5/fc6 Linears);
    - a reshape that splits dims of a permute's result moves above the
      permute (the permute then moves the pieces), so `(N, H·W, C) -> (N, H,
      W, C) -> NCHW` meets the flatten-transpose it undoes;
    - permutes of permutes compose, reshapes of reshapes fold, and round
      trips cancel.

    Afterwards the only layout changes left are those the network really
    needs: none in Rolling-UNet-S and UNeXt.

    ```mlir
    %f = seg.reshape %x : tensor<1x4x2x3xf32> -> tensor<1x4x6xf32>
    %t = seg.permute %f dims = [0, 2, 1] : tensor<1x4x6xf32> -> tensor<1x6x4xf32>
    %y = seg.linear %t, %w, %b : ... -> tensor<1x6x5xf32>
    %g = seg.gelu %y : tensor<1x6x5xf32>
    %u = seg.permute %g dims = [0, 2, 1] : ... -> tensor<1x5x6xf32>
    %z = seg.reshape %u : tensor<1x5x6xf32> -> tensor<1x5x2x3xf32>
    // becomes
    %w4 = seg.reshape %w : tensor<5x4xf32> -> tensor<5x4x1x1xf32>
    %c = seg.conv2d %x, %w4, %b stride = [1, 1] padding = [0, 0] ...
    %z = seg.gelu %c : tensor<1x5x2x3xf32>

    %t = seg.permute %x dims = [0, 2, 3, 1] : tensor<1x4x2x3xf32> -> tensor<1x2x3x4xf32>
    %n = seg.layer_norm %t, %g, %b epsilon = 1.0e-05 : tensor<1x2x3x4xf32>, ...
    %y = seg.permute %n dims = [0, 3, 1, 2] : tensor<1x2x3x4xf32> -> tensor<1x4x2x3xf32>
    // becomes
    %y = seg.layer_norm %x, %g, %b axis = 1 epsilon = 1.0e-05 : tensor<1x4x2x3xf32>, ...
    ```

    Input: any seg graph. Output: the same function, computing the same
    values; every rewrite is exact (only the order of elements in memory
    changes).
  }];
  let dependentDialects = ["::mlir::gpuopt::seg::SegDialect"];
  let statistics = [
    Statistic<"numLinearsToConv", "linears-to-conv",
              "token linears rewritten as 1x1 convolutions">,
  ];
}

def FuseConvBnReluPass : Pass<"fuse-conv-bn-relu", "::mlir::func::FuncOp"> {
  let summary = "Fold inference BatchNorm into convolutions or the linear/convolution after it, and fuse activations and residual adds";
  let description = [{
    - `batch_norm(conv(x))` → `conv(x)` with folded weight and bias: a
      `seg.fold_batch_norm` of the parameters computes them once per loaded
      checkpoint (a load-time computation, never per inference);
    - `relu` / `gelu` of a convolution → the convolution's `activation`;
    - `relu(max_pool2d(conv))` → `max_pool2d(conv + relu)`: ReLU commutes with
      max-pooling (both monotone; every window holds a real element), which is
      UNeXt's Conv → BN → MaxPool → ReLU;
    - `add(conv, r)` → the convolution's `residual`;
    - a BatchNorm that no convolution precedes (Rolling-UNet's DSC branch:
      ReLU → BN) folds forward into the op that consumes it when that op is
      linear in its input channels: a `seg.linear` over the channel axis or
      an ungrouped `seg.conv2d` / `seg.fused_conv2d` without padding (any
      kernel, stride, dilation; a fused shift only if cyclic), reached
      through one-use reshapes and permutes that keep the channel axis whole
      and concats along it. With `y = x · s + t` per channel
      (`s = gamma / sqrt(var + eps)`, `t = beta − mean · s`), the consumer's
      weight columns of those channels become `W · diag(s)` and its bias
      `b + W · t`: a `seg.fold_batch_norm` of the transposed columns and the
      consumer applied to a map of `t`, all on parameters (load-time work).
      A zero-padded convolution is refused (its border taps read 0, not `t`),
      and so is BN → ReLU → consumer (the ReLU does not commute with the
      affine map). Folding backwards is preferred where both apply.

    Everything is exact. An activation after a bilinear upsample stays there
    (it does not commute). Convolutions become `seg.fused_conv2d`.

    ```mlir
    %c = seg.conv2d %x, %w, %b ...
    %n = seg.batch_norm %c, %mean, %var, %gamma, %beta epsilon = 1.0e-05 ...
    %r = seg.relu %n ...
    // becomes
    %w2, %b2 = seg.fold_batch_norm %w bias %b, %mean, %var, %gamma, %beta ...
    %r = seg.fused_conv2d %x, %w2, %b2 ... activation = relu ...

    %n = seg.batch_norm %r, %mean, %var, %gamma, %beta ... : tensor<1x4x8x8xf32>, ...
    %y = seg.conv2d %n, %w, %b stride = [1, 1] padding = [0, 0] ...
    // becomes (all but the last op on parameters)
    %wt = seg.permute %w dims = [1, 0, 2, 3] ...
    %ws, %t = seg.fold_batch_norm %wt, %mean, %var, %gamma, %beta ...
    %w2 = seg.permute %ws dims = [1, 0, 2, 3] ...
    %tm = seg.reshape %t : tensor<4xf32> -> tensor<1x4x1x1xf32>
    %bm = seg.conv2d %tm, %w, %b ... -> tensor<1xOx1x1xf32>
    %b2 = seg.reshape %bm ...
    %y = seg.conv2d %r, %w2, %b2 stride = [1, 1] padding = [0, 0] ...
    ```

    Input: any seg graph. Output: the same function, computing the same
    values (up to rounding).
  }];
  let dependentDialects = ["::mlir::gpuopt::seg::SegDialect"];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark on the function with the pass statistics">,
  ];
  let statistics = [
    Statistic<"numBatchNormsFolded", "batch-norms-folded",
              "BatchNorms folded into convolutions">,
    Statistic<"numBatchNormsFoldedForward", "batch-norms-folded-forward",
              "BatchNorms folded forward into the following linear or "
              "convolution">,
    Statistic<"numActivationsFused", "activations-fused",
              "activations fused into convolutions">,
    Statistic<"numResidualsFused", "residuals-fused",
              "residual adds fused into convolutions">,
  ];
}

def RollToDeformConvPass : Pass<"roll-to-deform-conv", "::mlir::func::FuncOp"> {
  let summary = "Rewrite rolls consumed by convolutions or token linears as deformable convolutions with constant offsets";
  let description = [{
    The textbook alternative to `--fuse-roll`: after the roll collapsing of
    `--collapse-rolls`, a `seg.conv2d` of a `seg.channel_shift` (or a token
    `seg.linear`, as a 1×1 convolution) becomes a `seg.deform_conv2d` of the
    unshifted map whose offsets, one offset group per channel, come from a
    constant `seg.shift_offsets`. It is exact, including the wrap-around of
    cyclic shifts (per-position offsets jump across the border) and the
    zeros of zero-filled shifts and of the convolution's padding (offsets
    that point outside the map). A roll along the channels alone of an
    ungrouped convolution's input moves onto its weight, as in `--fuse-roll`.
    A `seg.shift` along other axes (TSM's along the frames of the batch) is
    left as it is: the offsets move taps within an image, not across images.

    The trade-off against `--fuse-roll` (which the benchmarks measure): the
    offsets are a tensor of `2·C·kH·kW·Ho·Wo` floats read by every inference,
    and bilinear sampling with per-tap offsets defeats the dense, vectorizable
    access pattern of a convolution; `--fuse-roll` needs neither.

    ```mlir
    %s = seg.channel_shift %x offsets_h = [0, 1] offsets_w = [] mode = cyclic ...
    %y = seg.conv2d %s, %w stride = [1, 1] padding = [0, 0] ...
    // becomes
    %off = seg.shift_offsets offsets_h = [0, 1] offsets_w = [] mode = cyclic
             input_size = [8, 8] kernel = [1, 1] ... : tensor<1x4x8x8xf32>
    %y = seg.deform_conv2d %x, %off, %w ... offset_groups = 2 ...
    ```
  }];
  let dependentDialects = ["::mlir::gpuopt::seg::SegDialect"];
  let statistics = [
    Statistic<"numDeformConvs", "deform-convs",
              "convolutions rewritten as deformable convolutions">,
  ];
}

def SplitLoadTimePass : Pass<"seg-split-load-time", "::mlir::ModuleOp"> {
  let summary = "Split the entry function into a load-time initializer and a per-inference function";
  let description = [{
    Moves the ops of `@<entry>` that depend only on parameters (the same
    classification as the reference backend: `seg.param`,
    `seg.shift_offsets`, and every op whose operands are all load-time
    values, e.g. `seg.fold_batch_norm` of BatchNorm parameters or a reshape
    of a weight) into a new function `@<entry>_init`, which returns the
    load-time values the rest of the graph uses. `@<entry>` takes those
    values as trailing arguments, each marked `{seg.derived = <index of the
    @<entry>_init result>}`. A compiled model calls `@<entry>_init` once
    when it loads its weights and `@<entry>` per inference.

    Parameters used directly by per-inference ops stay `seg.param` ops in
    `@<entry>` (binding them needs no copy). `@<entry>_init` always exists,
    with no results when nothing is hoisted.

    ```mlir
    func.func @forward(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
      %w = seg.param "conv.weight" : tensor<4x4x3x3xf32>
      %m = seg.param "bn.running_mean" : tensor<4xf32>
      ...
      %f:2 = seg.fold_batch_norm %w bias %b, %m, %v, %g, %beta ...
      %y = seg.fused_conv2d %x, %f#0, %f#1 ...
      return %y : tensor<1x4x8x8xf32>
    }
    // becomes
    func.func @forward_init() -> (tensor<4x4x3x3xf32>, tensor<4xf32>) {
      %w = seg.param "conv.weight" : tensor<4x4x3x3xf32>
      ...
      %f:2 = seg.fold_batch_norm %w bias %b, %m, %v, %g, %beta ...
      return %f#0, %f#1 : tensor<4x4x3x3xf32>, tensor<4xf32>
    }
    func.func @forward(%x: tensor<1x4x8x8xf32>,
                       %w: tensor<4x4x3x3xf32> {seg.derived = 0 : i64},
                       %b: tensor<4xf32> {seg.derived = 1 : i64})
        -> tensor<1x4x8x8xf32> {
      %y = seg.fused_conv2d %x, %w, %b ...
      return %y : tensor<1x4x8x8xf32>
    }
    ```

    Input: a module with a single-block function `@<entry>` and no
    `@<entry>_init`. Output: `@<entry>` holds no load-time op other than
    `seg.param`.
  }];
  let dependentDialects = ["::mlir::gpuopt::seg::SegDialect",
                           "::mlir::func::FuncDialect"];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"forward\"",
           "Name of the function to split">,
  ];
  let statistics = [
    Statistic<"numHoisted", "ops-hoisted",
              "ops moved into the initializer (seg.param excluded)">,
    Statistic<"numDerived", "derived-values",
              "initializer results passed to the entry function">,
  ];
}

def VerifyLowerablePass : Pass<"seg-verify-lowerable", "::mlir::ModuleOp"> {
  let summary = "Reject modules the lowerings cannot compile: call cycles, calls without a body, tensors over the size limit";
  let description = [{
    Runs first in `--gpuopt-cpu-lowering`, `--gpuopt-gpu-lowering` and so in
    `gpuopt-compile` and `gpuopt-run --backend=cpu`, and fails with a located
    error where a later stage would crash, spin or compute a size it cannot
    hold:

    - a call cycle, recursion included (One-Shot Bufferize analyses function
      boundaries in call-graph order and recurses on a cycle): the error is
      at the call that closes the cycle and names every function on it;
    - a call to a function without a body (a declaration): the lowered code
      would need a symbol that nothing defines;
    - a value whose type is a tensor of more than `seg::kMaxTensorBytes`
      bytes (1 TiB), including function arguments and values of non-`seg`
      ops that the `seg` verifiers do not see (e.g. an `arith.constant`
      splat): the lowerings and runtimes compute byte sizes in int64;
    - a convolution or max-pool whose padded input (the copy the linalg
      lowering makes) would exceed that limit: a padding of 2^62 with a
      stride of 2^63 - 1 verifies, since the output is small.

    ```mlir
    func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
      // error: 'func.call' op calls @forward recursively (call cycle:
      // @forward -> @forward); the lowerings compile no recursion
      %y = func.call @forward(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %y : tensor<4xf32>
    }
    ```

    Input: any verified module. Output: the module, unchanged.
  }];
  let statistics = [
    Statistic<"numCalls", "calls-checked", "call ops checked">,
  ];
}

#endif // GPUOPT_DIALECT_SEG_TRANSFORMS_PASSES_TD
