// The optimization pipelines, with the verifier after every pass, on every
// case of the dialect tests (the pass tests run them themselves).
// RUN: gpuopt-opt %S/../Dialect/Seg/ops.mlir --gpuopt-optimize --verify-each -o /dev/null
// RUN: gpuopt-opt %S/../Dialect/Seg/ops.mlir --gpuopt-optimize=deform-conv=true --verify-each -o /dev/null
// RUN: gpuopt-opt %S/../Dialect/Seg/canonicalize.mlir -split-input-file --gpuopt-optimize --verify-each -o /dev/null
// RUN: gpuopt-opt %S/../Dialect/Seg/canonicalize.mlir -split-input-file --gpuopt-optimize=deform-conv=true --verify-each -o /dev/null
// RUN: gpuopt-opt %S/shape-overflow.mlir -split-input-file --gpuopt-optimize --verify-each -verify-diagnostics -o /dev/null
