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

def ConvertParallelLoopsToKernelsPass
    : Pass<"convert-parallel-loops-to-kernels", "::mlir::ModuleOp"> {
  let summary = "Outline the loop nests of bufferized host functions into GPU kernels";
  let description = [{
    Turns every function body produced by bufferization and
    `--convert-linalg-to-parallel-loops` into host code that only allocates
    buffers and launches kernels, with all kernels in one `gpu.module`:

    - each top-level `scf.parallel` becomes one kernel over its linearized
      iteration space: thread `blockIdx.x * block-size + threadIdx.x`
      delinearizes into the loop indices (innermost fastest, so neighbouring
      threads touch neighbouring elements) and is guarded against the tail;
      nested `scf.for` loops (reductions) run sequentially in each thread;
    - with `fuse`, adjacent loops with the same bounds are fused first when
      every buffer they share is accessed point-wise at the same indices
      (fill, convolution, bias and activation of one seg op become one
      kernel);
    - each run of independent top-level `memref.copy` ops (with
      `batch-copies`: none reads what another writes, targets in one buffer
      are disjoint static boxes) becomes one elementwise copy kernel whose
      threads find their copy by a balanced tree of index comparisons (a
      roll's halves and a concat's pieces move in one launch); any other op
      with memory effects becomes a one-thread kernel;
    - constants, `memref.get_global` and view ops (`memref.subview`,
      `expand_shape`, ...) used by a kernel are cloned into it (globals into
      the `gpu.module`), so kernel arguments are only whole root buffers —
      function arguments and `memref.alloc`s of static shape and identity
      layout — that the NVVM lowering passes as bare pointers.

    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
      %v = memref.load %a[%i, %j] : memref<4x8xf32>
      memref.store %v, %b[%i, %j] : memref<4x8xf32>
      scf.reduce
    }
    // becomes
    gpu.launch_func @kernels::@forward_kernel blocks in (%c1, %c1, %c1)
        threads in (%c32, %c1, %c1) args(%a : memref<4x8xf32>, %b : memref<4x8xf32>)
    ```

    Input invariant: bufferized functions of one block with static shapes.
    Output invariant: the module has the `gpu.container_module` attribute;
    host functions hold only `memref.alloc`, `gpu.launch_func`, constants
    and `func.return` (plus dead views the canonicalizer removes). A value
    that cannot be passed to a kernel (a dynamic shape, a non-identity root
    buffer, a scalar computed on the host) is an error located at its use.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of the parallel kernels (1 to 1024)">,
    Option<"fuse", "fuse", "bool", /*default=*/"true",
           "Fuse adjacent point-wise dependent loops with equal bounds">,
    Option<"batchCopies", "batch-copies", "bool", /*default=*/"true",
           "Move independent adjacent copies in one kernel">,
    Option<"moduleName", "module-name", "std::string", /*default=*/"\"kernels\"",
           "Name of the gpu.module that receives the kernels">
  ];
  let statistics = [
    Statistic<"numKernels", "kernels", "Kernels created">,
    Statistic<"numFused", "fused-loops", "Loops fused into a preceding loop">,
    Statistic<"numBatchedCopies", "batched-copies",
              "Copies moved by a kernel shared with other copies">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
}

def ConvertSegToCpuKernelsPass
    : Pass<"convert-seg-to-cpu-kernels", "::mlir::ModuleOp"> {
  let summary = "Lower seg convolutions and linear layers to calls of gpuopt's "
                "vectorised, multi-threaded CPU kernels";
  let description = [{
    The contraction-heavy ops — `seg.conv2d`, `seg.fused_conv2d` (shift,
    bias, activation and residual included), `seg.conv_transpose2d` whose
    kernel equals its stride (no padding, output padding or dilation, one
    group) and `seg.linear` — become calls of the C functions of
    lib/Runtime/CpuKernels.cpp, which compute them as register-tiled GEMMs
    (AVX-512/AVX2 micro-kernel, all cores); `seg.deform_conv2d` becomes
    bilinear sampling into a column matrix plus the same GEMM (the usual
    deformable-convolution implementation, so that `--roll-to-deform-conv`
    is measured against `--fuse-roll` fairly); `seg.upsample_bilinear`
    becomes a kernel with precomputed index/weight tables per axis. The call is made on buffers at the
    tensor level, so that One-Shot Bufferize sees ordinary tensors:

    ```mlir
    %y = seg.fused_conv2d %x, %w, %b offsets_h = [0, 1] offsets_w = [] ...
    // becomes
    %xb = bufferization.to_buffer %x read_only : ... to memref<..., strided<[?, ?, ?, ?], offset: ?>>
    ...
    %out = memref.alloc() {alignment = 64 : i64} : memref<1x2x8x8xf32>
    call @gpuopt_cpu_conv2d(%outc, %xc, %wc, %bc, %xc, %offh, %offw, ...)
    %y = bufferization.to_tensor %out restrict writable : ...
    ```

    A per-channel shift is applied where the kernel makes its zero-padded
    copy of the input, so a fused roll costs no extra pass over memory and no
    `mod` in any inner loop. Ops with dynamic shapes or non-f32 types, and
    transposed convolutions of other geometries, are left for
    `--convert-seg-to-linalg`. Callees are declared
    `llvm.emit_c_interface`: they are reached as `_mlir_ciface_<name>`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // GPUOPT_CONVERSION_PASSES_TD
