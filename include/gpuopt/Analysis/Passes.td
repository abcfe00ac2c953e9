//===- Passes.td - gpuopt analysis passes ------------------*- tablegen -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_ANALYSIS_PASSES_TD
#define GPUOPT_ANALYSIS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SegCostReportPass : Pass<"seg-cost-report", "::mlir::ModuleOp"> {
  let summary = "Print the static cost and predicted latency of every seg function on a device";
  let description = [{
    Explains a seg graph in roofline terms without running it. For every
    `func.func` of the module it prints (to stdout, or to the file named by
    `output`) the seed-style table: learned parameters, GFLOPs as 2 × true
    MACs and as 2 × thop MACs (the papers' convention), bytes moved,
    arithmetic intensity, kernels, predicted latency, FPS, what bounds the
    graph (compute, memory or launches) and the predicted utilization of the
    device's peak — for PyTorch eager execution of the graph and for gpuopt's
    compiled code — followed by the cost per op kind and the `top` most
    expensive ops.

    The model (docs/CostModel.md): per kernel,
    `max(FLOPs / attainable FLOP/s, bytes / attainable bandwidth)`, plus the
    device's per-launch cost for every kernel. Ops computed from parameters
    only (`seg.param`, `seg.fold_batch_norm`, `seg.shift_offsets`) are
    load-time computations and cost nothing per inference. The devices come
    from an editable JSON file (`devices`; by default the source tree's
    `data/devices.json`).

    ```mlir
    // gpuopt-opt model.mlir --seg-cost-report="device=rtx3080 top=5" -o /dev/null
    func.func @forward(%x: tensor<1x3x224x224xf32>) -> tensor<1x16x224x224xf32> {
      %w = seg.param "conv.weight" : tensor<16x3x3x3xf32>
      %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1]
             groups = 1 : tensor<1x3x224x224xf32>, tensor<16x3x3x3xf32>
             -> tensor<1x16x224x224xf32>
      return %y : tensor<1x16x224x224xf32>
    }
    ```

    The compiled column's convolutions and linear layers follow `gpu-conv`:
    `model` (default) costs them as the eager column does (every GEMM-like
    kernel at the device's `compute_efficiency` and the tile and wave
    quantization of its `gemm_tile`); `generated`, `library` and `auto`
    cost them as `gpuopt-compile --target=cuda --gpu-conv=...` runs them:
    generated kernels at `generated_compute_efficiency` and the utilization
    of the workgroup tiling the kernel pass chooses (with
    `workgroup-tile-min-blocks`, `workgroup-tile-max-thread-outputs` and
    `workgroup-tile-split-k`, whose defaults are gpuopt-compile's; a split
    reduction adds its second kernel and its parts' bytes), library calls
    (ops the library route covers) as --convert-seg-to-cuda-library's
    `select=auto` predicts them, `auto` the faster of the two per op. The
    table names the route; the JSON gives each op's route, tile shape and
    parts. A route other than `model` on a device that is not a GPU is an
    error.

    With `format=json` the same numbers, per op and per function, are
    written as one JSON document (what `python -m gpuopt.costreport` plots).
    The IR is not changed. An unknown device, a missing or malformed device
    file or an unwritable output file is an error.
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"rtx3080\"",
           "Device to predict for: a key of the device file">,
    Option<"devices", "devices", "std::string", /*default=*/"\"\"",
           "Device file (JSON); empty: the source tree's data/devices.json">,
    Option<"format", "format", "std::string", /*default=*/"\"table\"",
           "Output format: 'table' or 'json'">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "File to write the report to; '-' is stdout">,
    Option<"top", "top", "unsigned", /*default=*/"10",
           "Number of most expensive ops listed in the table">,
    Option<"sort", "sort", "std::string", /*default=*/"\"eager\"",
           "Order of the top ops: by 'eager' or by 'compiled' time">,
    Option<"precision", "precision", "std::string", /*default=*/"\"\"",
           "Peak to use (e.g. 'tf32'); empty: the element type's "
           "(fp32, fp16, bf16, fp64)">,
    Option<"gpuConv", "gpu-conv", "std::string", /*default=*/"\"model\"",
           "How the compiled column runs convolutions and linear layers "
           "(GPU devices): 'model' (every GEMM at compute_efficiency and the "
           "library tiles), or gpuopt-compile --gpu-conv's 'generated', "
           "'library' or 'auto'">,
    Option<"workgroupTileMinBlocks", "workgroup-tile-min-blocks", "int64_t",
           /*default=*/"132",
           "gpu-conv other than model: the generated kernels' "
           "workgroup-tile-min-blocks">,
    Option<"workgroupTileMaxThreadOutputs",
           "workgroup-tile-max-thread-outputs", "int64_t", /*default=*/"64",
           "gpu-conv other than model: the generated kernels' "
           "workgroup-tile-max-thread-outputs">,
    Option<"workgroupTileSplitK", "workgroup-tile-split-k", "int64_t",
           /*default=*/"8",
           "gpu-conv other than model: the generated kernels' "
           "workgroup-tile-split-k">,
  ];
  let statistics = [
    Statistic<"numOpsModeled", "ops-modeled", "ops whose cost is modeled">,
    Statistic<"numOpsUnmodeled", "ops-unmodeled",
              "ops costed as a generic memory-bound kernel">,
  ];
}

#endif // GPUOPT_ANALYSIS_PASSES_TD
