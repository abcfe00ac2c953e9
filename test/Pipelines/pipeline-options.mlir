// RUN: gpuopt-opt %s --pass-pipeline='builtin.module(gpuopt-cpu-lowering)' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: gpuopt-opt %s --pass-pipeline='builtin.module(gpuopt-cpu-lowering{kernels=0})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOOPS
// RUN: gpuopt-opt %s --pass-pipeline='builtin.module(gpuopt-gpu-lowering{chip=sm_80,sm_90 features=+ptx81 format=fatbin toolkit="/opt/my cuda" block-size=128 opt-level=2 workgroup-tile-max-thread-outputs=32 workgroup-tile-split-k=2})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: gpuopt-opt %s --pass-pipeline='builtin.module(gpuopt-gpu-lowering{serialize=0})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOBIN
// RUN: not gpuopt-opt %s --gpuopt-gpu-lowering='chip=,' -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOCHIP
// RUN: not gpuopt-opt %s --pass-pipeline='builtin.module(gpuopt-cpu-lowering{kernels=maybe})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADOPT

// The pipelines are built from typed pass options (lib/Pipelines), not from
// pipeline text: every option reaches its pass as given, also a value with a
// blank, which pipeline text would have split. A pipeline that cannot be
// built is an error, not a silently shorter pipeline.

// CPU: seg-verify-lowerable,
// CPU-NEXT: inline{
// CPU-NEXT: convert-seg-to-cpu-kernels,
// CPU-NEXT: convert-seg-to-linalg{remap-conv-inputs=false},
// CPU-NEXT: canonicalize{
// CPU-NEXT: cse,
// CPU-NEXT: func.func(
// CPU-NEXT: fuse-gathers-into-elementwise
// CPU-NEXT: ),
// CPU-NEXT: one-shot-bufferize{{{.*}} bufferize-function-boundaries=true {{.*}} copy-before-write=true {{.*}} function-boundary-type-conversion=identity-layout-map {{.*}}},
// CPU-NEXT: func.func(
// CPU-NEXT: unique-return-buffers
// CPU-NEXT: ),
// CPU-NEXT: buffer-results-to-out-params{{{.*}} hoist-static-allocs=true modify-public-functions=true},
// CPU-NEXT: func.func(
// CPU-NEXT: llvm-request-c-wrappers
// CPU-NEXT: ),
// CPU-NEXT: func.func(
// CPU-NEXT: free-buffers-after-last-use
// CPU-NEXT: ),
// CPU-NEXT: canonicalize{
// CPU-NEXT: outline-linalg-ops,
// CPU-NEXT: func.func(
// CPU-NEXT: convert-linalg-to-loops,
// CPU-NEXT: split-long-blocks{
// CPU-NEXT: ),
// CPU-NEXT: expand-strided-metadata,
// CPU-NEXT: lower-affine,
// CPU-NEXT: convert-scf-to-cf{
// CPU-NEXT: convert-math-to-libm,
// CPU-NEXT: finalize-memref-to-llvm{{{.*}} use-generic-functions=true},
// CPU-NEXT: convert-to-llvm{
// CPU-NEXT: reconcile-unrealized-casts
// CPU-NEXT: )

// LOOPS: inline{
// LOOPS-NEXT: convert-seg-to-linalg{remap-conv-inputs=false},

// GPU: convert-seg-to-linalg{remap-conv-inputs=true},
// GPU-NEXT: canonicalize{
// GPU-NEXT: cse,
// GPU-NEXT: func.func(
// GPU-NEXT: linalg-fuse-elementwise-ops,
// GPU-NEXT: canonicalize{
// GPU-NEXT: interchange-reductions-innermost,
// GPU-NEXT: unshare-init-tensors
// GPU-NEXT: ),
// GPU-NEXT: one-shot-bufferize{{{.*}} bufferize-function-boundaries=true {{.*}} copy-before-write=false {{.*}} function-boundary-type-conversion=identity-layout-map {{.*}}},
// GPU:      convert-parallel-loops-to-kernels{{{.*}} block-size=128 {{.*}} workgroup-tile-max-thread-outputs=32 {{.*}} workgroup-tile-split-k=2 {{.*}}},
// GPU-NEXT: canonicalize{
// GPU-NEXT: cse,
// GPU-NEXT: deduplicate-gpu-kernels,
// GPU-NEXT: promote-loop-accumulators,
// GPU-NEXT: eliminate-private-kernel-buffers,
// GPU-NEXT: fuse-multiply-add,
// GPU-NEXT: canonicalize{
// GPU-NEXT: cse,
// GPU-NEXT: nvvm-attach-target{O=2 chip=sm_80 {{.*}} features=+ptx81 {{.*}}},
// GPU-NEXT: nvvm-attach-target{O=2 chip=sm_90 {{.*}} features=+ptx81 {{.*}}},
// GPU-NEXT: gpu.module(
// GPU-NEXT: verify-kernel-targets,
// GPU-NEXT: mark-kernel-arguments-noalias,
// GPU-NEXT: convert-nvgpu-to-nvvm,
// GPU-NEXT: expand-strided-metadata,
// GPU-NEXT: lower-affine,
// GPU-NEXT: convert-scf-to-cf{
// GPU-NEXT: convert-gpu-to-nvvm{{{.*}} index-bitwidth=64 use-bare-ptr-memref-call-conv=true},
// GPU-NEXT: convert-vector-to-llvm{
// GPU-NEXT: convert-ub-to-llvm{
// GPU-NEXT: canonicalize{
// GPU-NEXT: cse,
// GPU-NEXT: reconcile-unrealized-casts
// GPU-NEXT: ),
// GPU-NEXT: gpu-module-to-binary{format=fatbin {{.*}} toolkit={/opt/my cuda}}
// GPU-NEXT: )

// NOBIN: nvvm-attach-target{O=3 chip=sm_90 {{.*}} features=+ptx80 {{.*}}},
// NOBIN: reconcile-unrealized-casts
// NOBIN-NEXT: )
// NOBIN-NEXT: )
// NOBIN-NOT: gpu-module-to-binary

// An empty chip list is refused by the one chip-list parser (parseCudaChips;
// its other messages: test/Pipelines/gpuopt-gpu-lowering-invalid.mlir).
// NOCHIP: error: chip must be sm_NN[,sm_MM...] with NN >= 50, got ','

// BADOPT: 'maybe' is invalid value for boolean argument
// BADOPT: error: failed to add `gpuopt-cpu-lowering` with options `kernels=maybe`

module {}
