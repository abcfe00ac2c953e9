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
      `seg.channel_shift`, `seg.shift`) is a gather `linalg.generic`;
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

    With `remap-conv-inputs` (the GPU pipeline's choice), `seg.conv2d` and
    `seg.fused_conv2d` become one contraction `linalg.generic` over
    (n, o, oh, ow, ci, i, j) whose body reads the input with
    `tensor.extract` at x[n, c, oh·s − p + i·d − dh[c], ow·s − p + j·d −
    dw[c]]: padding and the shift are in the operand load (an index outside
    the map is clamped into it and the value selected to 0; a cyclic shift
    wraps with one compare), so no padded tensor and no gather exist. A
    `seg.fused_conv2d` with an attribute this lowering does not know (e.g.
    `frame_shift`) takes the default lowering.

    Output invariant: no seg op remains; an op without a lowering is an error
    located at it.
  }];
  let options = [
    Option<"remapConvInputs", "remap-conv-inputs", "bool", /*default=*/"false",
           "Read conv2d/fused_conv2d inputs through remapped, guarded indices "
           "(no tensor.pad, no gather of the shifted input)">
  ];
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
      every kernel's `known_block_size` is the block of its launch (the
      NVVM lowering's PTX `.maxntid`, so ptxas fits its registers to it);
    - with `elide-copies`, first, a buffer that is only loaded from and
      stored to and then copied whole into a static subview of (or all of)
      another buffer is replaced by that subview, when nothing between its
      first use and the copy touches the other buffer except through
      disjoint static subviews: the producers of a concat's pieces write
      into the concat's buffer, and the copy is gone;
    - with `fuse`, adjacent loops with the same bounds are fused first when
      every buffer they share is accessed point-wise at the same indices
      (fill, convolution, bias and activation of one seg op become one
      kernel); allocations and pure ops between them move above the first.
      Loops over the same dims in another order (read off the buffers they
      share: a depthwise convolution's (h, w, c) and its fill's (c, h, w))
      fuse the same way, in the first loop's order. Loops that share no
      buffer fuse too (one launch for two convolutions of one input). With
      `workgroup-tile-fuse-nests=false` (and `workgroup-tile`) a loop the
      workgroup tiles would take does not fuse with a loop that has a nest
      of its own: each keeps its kernel and is tiled (a kernel of two nests
      is not one tiled product); independent tiled neighbours then share
      one launch (the blocks of the first, then those of the second, the
      block index choosing the body; their workgroup tiles side by side).
      Then a loop whose bounds extend the previous loop's (its indices
      include one with the same bounds for each index of the first, as read
      off the buffers they share) fuses into it when the shared buffers are
      accessed point-wise at the first loop's indices and the first loop
      already runs a sequential loop at least as long as the extra indices:
      those run as `scf.for` loops in the first loop's thread (a LayerNorm's
      row statistics and its normalisation become one kernel, one thread
      per row); a loop over the dims of such a kernel's loop nest that
      accesses what the nest wrote point-wise at all of its indices (the
      LayerNorm's elementwise consumer) joins the innermost `scf.for`;
    - with `warp-rows` (and a block size that is a multiple of 32), such a
      row kernel whose loops sum into per-row elements (a statistic) and then
      write one element per iteration (the normalisation) gets `row-lanes`
      lanes of a warp per row (0: 32 when its first sum reads along the
      innermost dimension longer than 1, else 4, so that the 8 rows of a
      warp read 32 contiguous bytes): each lane strides every loop of the
      row by the lane
      count, sums in registers (`iter_args`), and a `gpu.shuffle xor`
      butterfly gives every lane the row's sums. The thread count is rounded
      up to whole warps; lanes past the last row take its indices, run no
      loop iterations and store nothing, so every lane of a warp reaches
      every shuffle. A statistic is stored once per row, by the row's first
      lane, and not at all into an allocation nothing else reads:
      ```mlir
      scf.parallel (%r) = (%c0) to (%c6) step (%c1) {  // rows of 8
        memref.store %zero, %sum[%r]
        scf.for %k = %c0 to %c8 step %c1 {
          %s = arith.addf (memref.load %sum[%r]), (memref.load %x[%r, %k])
          memref.store %s, %sum[%r]
        }
        scf.for %k = %c0 to %c8 step %c1 {
          memref.store (... memref.load %sum[%r] ...), %y[%r, %k]
        }
      }
      // becomes (6 rows, 32 lanes each: 192 threads)
      scf.parallel (%t) = (%c0) to (%c192) step (%c1) {
        // lane %l = %t mod 32, row %r = min(%t / 32, 5)
        %p = scf.for %k = %l to %c8 step %c32 iter_args(%a = %zero) {...}
        %o = gpu.shuffle xor %p, 16, 32   // ... 8, 4, 2, 1, adding each
        scf.for %k = %l to %c8 step %c32 { ... %y[%r, %k] }
      }
      ```
    - with `register-tile=T` (T > 1), a loop whose body accumulates into
      an element inside `scf.for` loops (a convolution's or a linear's
      reduction) while loading one operand whose indices do not depend on a
      parallel index `d` (the input, for the output channel) and one whose
      indices do (the weight) computes T consecutive values of `d` per
      iteration (fewer when `d` is shorter): the T bodies are interleaved op
      by op in one nest of `scf.for` loops, the loads that do not depend on
      `d` (from buffers the loop does not write) and pure ops on them are
      emitted once, so each reduction step loads the input once for T
      multiply-adds into T accumulators (which `--promote-loop-accumulators`
      then keeps in registers). `d` is the outermost such index (the
      innermost one longer than 1 only when no other qualifies, since
      neighbouring threads read neighbouring elements along it). When T
      does not divide `d`'s trip count, the last iteration of the new range
      runs the remaining values one after another with the original body:
      ```mlir
      scf.parallel (%o, %w) = (%c0, %c0) to (%c6, %c8) step (%c1, %c1) {
        scf.for %k = %c0 to %c16 step %c1 {
          %a = memref.load %acc[%o, %w]            // accumulator
          %x = memref.load %in[%k, %w]             // does not depend on %o
          %f = memref.load %wt[%o, %k]
          memref.store (%a + %x * %f), %acc[%o, %w]
        }
      }
      // becomes, with register-tile=4 (6 = 4 + 2)
      scf.parallel (%t, %w) = (%c0, %c0) to (%c2, %c8) step (%c1, %c1) {
        %o0 = arith.muli %t, %c4    // %o1 = %o0 + 1, ..., %o3 = %o0 + 3
        scf.if (%t < 1) {
          scf.for %k = %c0 to %c16 step %c1 {
            %x = memref.load %in[%k, %w]           // once
            // 4 x: load %acc[%oJ, %w], load %wt[%oJ, %k], store %acc[%oJ, %w]
          }
        } else {
          scf.for %o = %o0 to %c6 step %c1 { ... the original body ... }
        }
      }
      ```
    - with `workgroup-tile` (tried before `register-tile`), a loop whose
      body is, besides ops before and after it, one perfect nest of
      `scf.for` loops with constant bounds accumulating
      `acc[p] = acc[p] + x * y` (a convolution's or a linear's reduction,
      the remapped input's shifts and guards included), where `x` depends
      on parallel indices M (at least 16 iterations) that `y` does not
      depend on, `y` and `x` are computed by pure ops and loads from buffers
      the loop does not write, and the reduction has at least 8 steps, runs
      as a matrix product in thread blocks of 256: each block computes a
      BM x BN tile of (M) x (the other indices) outputs, each thread RM x RN
      of them in registers (4 x 4, or 4 x 2, 2 x 4, 2 x 2 where 4 x 4 tiles
      would give fewer than `workgroup-tile-min-blocks` blocks; with
      `workgroup-tile-max-thread-outputs` 32 or 64 also 8 x 4, 4 x 8 and
      8 x 8 where an estimate — whole tiles per multiprocessor times the
      FMAs and workgroup reads per output, also for the TF32 tiles —
      predicts them faster, with at most 5% more padding and at least
      `workgroup-tile-min-blocks` blocks; with `workgroup-tile-split-k` a
      deep reduction whose tiles would leave multiprocessors idle or run
      2 x 2 thread tiles is split into parts computed by separate blocks,
      whose sums a second kernel adds before the ops after the nest); for
      each 16 reduction
      steps the block's threads store the x and y tiles into workgroup
      memory (`memref.alloca`s that become the kernel's workgroup
      attributions, 16-byte aligned: `llvm.align`), `gpu.barrier`, and
      multiply-add from there (each thread's rows read as one vector, its
      columns as 8-byte pairs: `ld.shared.v4`/`.v2`); with
      `workgroup-tile-prefetch` (the default) each thread loads its elements
      of the next step's tiles from global memory into registers before it
      multiplies (carried by the loop of steps), so that those loads are in
      flight during the step; with `workgroup-tile-double-buffer` (the
      default, where there are at least 2 steps) the tiles have two
      buffers used in turn: step t multiplies from one while the threads
      store step t + 1's operands into the other, one `gpu.barrier` per
      step instead of two; with `workgroup-tile-vector-loads` (the
      default) a weight operand contiguous along the reduction (a buffer
      the plan places, its last indices the nest's over whole dimensions,
      K a multiple of 4) is loaded 4 elements per `vector.load` (alignment
      16, PTX `ld.global.nc.v4.b32`), and so are an input contiguous along
      the pixels and operands stored transposed (contiguous along M or k). The ops before the nest
      run per output before the first step, those after it after the last;
      each output adds its terms in the nest's order, so the results equal
      the untiled kernel's bit for bit (but for a split reduction, whose
      parts are added in part order). With `workgroup-tile-tensor-cores`
      the 8 warps of a block split its tile, each computing its part with
      TF32 `nvgpu.mma.sync` (m16n8k8) fragments read from the same
      workgroup tiles (rows padded by 8 so that a fragment's lanes hit
      distinct banks): the operands lose 13 mantissa bits and each 8
      reduction steps are summed by the tensor core. With
      `workgroup-tile-async-copy` (tiles with two buffers, without
      prefetch, or of one step) an operand that is a plain read of a plan
      buffer, or a guarded one (`select(c, load, +0.0)`, `c` not reading
      the load: a padded or remapped input), is
      copied into its tile with `nvgpu.device_async_copy` (PTX cp.async: 4
      bytes, or 16 for a vector along the FP32 tile's rows; 0 source
      elements, a zero fill, where `c` is false or past the tile's edge)
      instead of through registers; one `nvgpu.device_async_create_group`
      per step and a `nvgpu.device_async_wait` before the barrier that
      publishes it (with tensor cores each thread first rounds the elements
      it copied to TF32 in place):
      ```mlir
      scf.parallel (%o, %w) = (%c0, %c0) to (%c64, %c64) step (%c1, %c1) {
        memref.store %zero, %acc[%o, %w]
        scf.for %k = %c0 to %c32 step %c1 {
          %a = memref.load %acc[%o, %w]
          %x = memref.load %wt[%o, %k]             // M = (%o)
          %y = memref.load %in[%k, %w]             // N = (%w)
          memref.store (%a + %x * %y), %acc[%o, %w]
        }
        memref.store (... memref.load %acc[%o, %w] ...), %out[%o, %w]
      }
      // becomes one 64 x 64 block tile
      scf.parallel (%b, %t) = (%c0, %c0) to (%c1, %c256) step (%c1, %c1) {
        %xs = memref.alloca() {alignment = 16 : i64} : memref<2x16x68xf32, #gpu.address_space<workgroup>>
        %ys = memref.alloca() {alignment = 16 : i64} : memref<2x16x64xf32, #gpu.address_space<workgroup>>
        // 16 initial values (scf.if: the fill per output, then its load)
        // step 0: 1 + 1 vector loads per thread, stored into buffer 0; gpu.barrier
        %r = scf.for %s = %c0 to %c1 step %c1 iter_args(...) {
          // step s + 1's vector loads (in flight during the step)
          // 16 steps: 1 + 2 vector reads of buffer s % 2, 16 multiply-adds
          // stores into buffer (s + 1) % 2; gpu.barrier
        }
        // the last step: 16 steps from buffer 1
        // 16 x scf.if: store the accumulator, then the ops after the nest
      } {gpuopt.thread_block}
      ```
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
    Option<"elideCopiesOpt", "elide-copies", "bool", /*default=*/"true",
           "Let a copied buffer's producers write into the copy's target">,
    Option<"moduleName", "module-name", "std::string", /*default=*/"\"kernels\"",
           "Name of the gpu.module that receives the kernels">,
    Option<"warpRows", "warp-rows", "bool", /*default=*/"true",
           "Give the rows of a row-reduction kernel (a LayerNorm) several "
           "lanes of a warp, combined by shuffles">,
    Option<"rowLanes", "row-lanes", "int64_t", /*default=*/"0",
           "Lanes per row with warp-rows: 1, 2, 4, 8, 16 or 32; 0 chooses "
           "by the layout">,
    Option<"workgroupTile", "workgroup-tile", "bool", /*default=*/"false",
           "Compute a reduction that is a matrix product (a convolution, a "
           "linear) in thread blocks whose operand tiles are staged in "
           "workgroup memory">,
    Option<"workgroupTileMinBlocks", "workgroup-tile-min-blocks", "int64_t",
           /*default=*/"1",
           "Blocks a workgroup-tiled kernel should have at least (the "
           "device's multiprocessors; at least 1): smaller tiles where larger "
           "ones give fewer">,
    Option<"workgroupTileTensorCores", "workgroup-tile-tensor-cores", "bool",
           /*default=*/"false",
           "Compute the workgroup tiles with TF32 tensor cores "
           "(nvgpu.mma.sync m16n8k8; sm_80 and newer)">,
    Option<"workgroupTileFuseNests", "workgroup-tile-fuse-nests", "bool",
           /*default=*/"true",
           "With fuse: a reduction the workgroup tiles would take may fuse "
           "with a loop of another nest (one launch; neither is tiled then); "
           "false: it keeps its own kernel and its tiles">,
    Option<"workgroupTilePrefetch", "workgroup-tile-prefetch", "bool",
           /*default=*/"true",
           "Load a workgroup tile step's operands into registers while the "
           "step before multiplies (false: load them at the step)">,
    Option<"workgroupTileDoubleBuffer", "workgroup-tile-double-buffer",
           "bool", /*default=*/"true",
           "Two buffers of each workgroup tile used in turn, one barrier per "
           "step (false: one buffer, two barriers per step)">,
    Option<"workgroupTileVectorLoads", "workgroup-tile-vector-loads", "bool",
           /*default=*/"true",
           "Load the weight tile 4 reduction elements at a time "
           "(vector.load, alignment 16) where it is contiguous along the "
           "reduction (false: scalar loads)">,
    Option<"workgroupTileAsyncCopy", "workgroup-tile-async-copy", "bool",
           /*default=*/"false",
           "Copy the workgroup tiles' operands that are plain (or "
           "zero-guarded) reads of plan buffers from global to workgroup "
           "memory without registers (nvgpu.device_async_copy, PTX "
           "cp.async; sm_80 and newer)">,
    Option<"workgroupTileStages", "workgroup-tile-stages", "int64_t",
           /*default=*/"2",
           "Buffers of each workgroup tile where both operands are copied "
           "asynchronously a step ahead (at least 2; more: copies of that "
           "many steps minus one in flight, as many as fit 48 KiB)">,
    Option<"workgroupTileMaxThreadOutputs",
           "workgroup-tile-max-thread-outputs", "int64_t", /*default=*/"16",
           "Outputs a thread of a workgroup tile may compute (at least 4): "
           "16 for the 4 x 4 thread tiles and smaller, 32 adds 8 x 4 and "
           "4 x 8, 64 adds 8 x 8">,
    Option<"workgroupTileSplitK", "workgroup-tile-split-k", "int64_t",
           /*default=*/"1",
           "Parts (a power of two, at least 1) a deep reduction may be split "
           "into where its workgroup tiles would leave multiprocessors idle "
           "or run 2 x 2 thread tiles: each part's sums go to a workspace "
           "that a second kernel adds up (1: never)">,
    Option<"registerTile", "register-tile", "int64_t", /*default=*/"1",
           "Outputs per thread of a reduction kernel along a parallel index "
           "one of its operands does not depend on (1: one output per "
           "thread; at least 1)">
  ];
  let statistics = [
    Statistic<"numKernels", "kernels", "Kernels created">,
    Statistic<"numFused", "fused-loops", "Loops fused into a preceding loop">,
    Statistic<"numMergedBlockLoops", "merged-block-loops",
              "Workgroup-tiled loops sharing a launch with the one before">,
    Statistic<"numBatchedCopies", "batched-copies",
              "Copies moved by a kernel shared with other copies">,
    Statistic<"numWarpRows", "warp-row-kernels",
              "Row kernels whose rows share the lanes of a warp">,
    Statistic<"numWorkgroupTiled", "workgroup-tiled-kernels",
              "Reduction kernels computing tiles of a matrix product per "
              "block from workgroup memory">,
    Statistic<"numRegisterTiled", "register-tiled-kernels",
              "Reduction kernels computing several outputs per thread">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect", "::mlir::ub::UBDialect",
    "::mlir::vector::VectorDialect"
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
    runtime/cpu/CpuKernels.cpp, which compute them as register-tiled GEMMs
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

def ConvertSegToCudaLibraryPass
    : Pass<"convert-seg-to-cuda-library", "::mlir::ModuleOp"> {
  let summary = "Lower the seg convolutions and linear layers the CUDA "
                "libraries compute to calls that become Library steps";
  let description = [{
    The `--gpu-conv=library` route of the CUDA target (docs/CUDABackend.md):
    the ops that cuDNN (convolution + bias + activation) and cuBLASLt
    (GEMM + bias) compute become calls of the CpuKernelAbi.def routine of the
    same semantics, built on tensors-made-buffers by the call builder
    `--convert-seg-to-cpu-kernels` uses (KernelCalls.h). After bufferization
    `--convert-parallel-loops-to-kernels` leaves each call on the host, and
    the CUDA target emits it as a Library step of the launch plan (the
    routine's name, its memref operands as strided views of plan buffers,
    its integer arguments), which the GPU runtime runs with cuDNN/cuBLASLt
    and the emulator with the CPU kernel.

    ```mlir
    %y = seg.fused_conv2d %x, %w, %b {activation = relu, ...}
    // becomes
    %out = memref.alloc() {alignment = 64 : i64} : memref<1x8x16x16xf32>
    call @gpuopt_cpu_conv2d(%outc, %xc, %wc, %bc, %xc, %none, %none, %none,
                            %c1, %c1, %c1, %c1, %c1, %c1, %c1, %c0, %c1, %c1)
    %y = bufferization.to_tensor %out restrict writable : ...
    ```

    Eligible (the subset the CUDA runtime executes, Artifact.fbs):
    - `seg.conv2d`; `seg.fused_conv2d` without a shift (empty or all-zero
      offsets, no frame shift) whose activation is none (a residual allowed)
      or relu without a residual. Weights are passed dense (a strided view is
      copied by bufferization): the libraries take packed OIHW filters.
    - `seg.conv_transpose2d` in the CPU kernel's domain: kernel equal to the
      stride, no padding, output padding or dilation, one group.
    - `seg.linear` (on its input collapsed to [rows, K]).
    Each must be static and f32, as for the CPU kernels.

    Ineligible ops stay for `--convert-seg-to-linalg` (generated kernels):
    a shifted `seg.fused_conv2d` (the libraries have no per-channel shift;
    the generated convolution applies it in its operand loads), GELU (no
    GELU epilogue in the cuDNN convolution subset used), ReLU with a
    residual (cuDNN's fused form adds the residual before the activation,
    seg after it), and everything else.

    With `select=auto` (`gpuopt-compile --gpu-conv=auto`) an eligible op
    becomes a library call only where the cost model (docs/CostModel.md)
    predicts the library faster on `device` in `precision`:
    - library: max(FLOPs / (peak · compute_efficiency · the tile and wave
      quantization of the library's tiles, or the utilization of the
      workgroup tiling where that is better: the libraries have small
      tiles and split-K too),
      bytes / bandwidth) + a launch + `library_call_s`;
    - generated: max(FLOPs / (peak · generated_compute_efficiency · the
      utilization of the units by the workgroup tiling the kernel pass
      chooses (chooseWorkgroupTiling with `workgroup-tile-min-blocks`,
      `workgroup-tile-max-thread-outputs` and `workgroup-tile-split-k`, as
      the pipeline sets them: defaults 132, 64 and 8, not the kernel
      pass's); none for a product the workgroup tiles leave to register
      tiles), bytes / bandwidth) + a launch; a split reduction writes its
      parts' sums instead of the output and adds a second kernel (read the
      parts, write the output) and its launch.
    Large compute-bound convolutions go to the library, small ones (where
    the call's fixed cost dominates) stay generated. `explain` emits a
    remark per eligible op with both predictions and the choice:

    ```mlir
    // remark: library call: predicted 81.5 us, 141.7 us as a generated
    //         kernel (h200, fp32)
    ```
    An op computed at load time (from parameters only) is a library call,
    as with `select=all`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let options = [
    Option<"select", "select", "std::string", /*default=*/"\"all\"",
           "Which eligible ops become library calls: all, or auto (where "
           "the cost model predicts the library faster)">,
    Option<"device", "device", "std::string", /*default=*/"\"h200\"",
           "select=auto: the device to predict for (a key of the device "
           "file)">,
    Option<"devices", "devices", "std::string", /*default=*/"\"\"",
           "select=auto: the device file (JSON); empty: the source tree's "
           "data/devices.json">,
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "select=auto: the arithmetic both routes run in (fp32 or tf32)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "select=auto: a remark per eligible op with both predictions">,
    Option<"workgroupTileMinBlocks", "workgroup-tile-min-blocks", "int64_t",
           /*default=*/"132",
           "select=auto: the generated kernels' workgroup-tile-min-blocks "
           "(--convert-parallel-loops-to-kernels), for their tile shapes">,
    Option<"workgroupTileMaxThreadOutputs",
           "workgroup-tile-max-thread-outputs", "int64_t", /*default=*/"64",
           "select=auto: the generated kernels' "
           "workgroup-tile-max-thread-outputs "
           "(--convert-parallel-loops-to-kernels), for their tile shapes">,
    Option<"workgroupTileSplitK", "workgroup-tile-split-k", "int64_t",
           /*default=*/"8",
           "select=auto: the generated kernels' workgroup-tile-split-k "
           "(--convert-parallel-loops-to-kernels), for their split "
           "reductions">
  ];
  let statistics = [
    Statistic<"numLibraryCalls", "library-calls",
              "Ops rewritten into library calls">,
    Statistic<"numGenerated", "generated",
              "Convolutions and linear layers left to the generated kernels">,
    Statistic<"numPredictedFaster", "predicted-faster-generated",
              "Eligible ops select=auto left generated (predicted faster)">
  ];
}

def FreeBuffersAfterLastUsePass
    : Pass<"free-buffers-after-last-use", "::mlir::func::FuncOp"> {
  let summary = "Free every heap buffer of a bufferized function right after "
                "its last use";
  let description = [{
    A linear-time replacement, for gpuopt's bufferized graphs, of upstream's
    `ownership-based-buffer-deallocation` + `buffer-deallocation-simplification`
    + `bufferization-lower-deallocations`, whose simplification step is
    quadratic in the number of buffers of a function (18 s of 51 s on
    Rolling-UNet-L). The graphs have static shapes and no control flow
    around their buffers, so ownership is never in doubt: each `memref.alloc`
    is owned by the block it is in, and freeing it after the last op of that
    block that uses it or any view of it (subviews, casts, reshapes: any
    result of an op that takes it) frees it exactly once, as late as needed
    and no later.

    ```mlir
    %a = memref.alloc() : memref<4xf32>
    %v = memref.subview %a[0] [2] [1] : memref<4xf32> to memref<2xf32>
    linalg.fill ins(%c : f32) outs(%v : memref<2xf32>)
    memref.copy %v, %out : memref<2xf32> to memref<2xf32>
    // gets, after the copy:
    memref.dealloc %a : memref<4xf32>
    ```

    Input invariant: results are out-parameters
    (`--buffer-results-to-out-params`), so no buffer leaves its block.
    A buffer that does (through a terminator, a tensor, or a use in another
    block), or is freed already, is an error located at its allocation.
    Output invariant: one `memref.dealloc` per `memref.alloc`.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numFreed", "buffers-freed", "Buffers given a memref.dealloc">
  ];
}

def OutlineLinalgOpsPass : Pass<"outline-linalg-ops", "::mlir::ModuleOp"> {
  let summary = "Move each linalg op on buffers of a function's body into a "
                "private function of its own";
  let description = [{
    Lowering a linalg op to loops and the loops to branches splits the block
    it is in, and LLVM's optimizations and code generation are super-linear
    in the size of a function: a graph of 10^4 ops lowered into one function
    took minutes, most of it in `convert-scf-to-cf` (each split moves the
    rest of the block) and in LLVM. Outlining every op of the top-level block
    that implements the linalg interface into a private function that LLVM
    must not inline (`passthrough = ["noinline"]`)
    (`@<function>_op<N>`, the op's operands and the values its regions use as
    arguments, constants cloned in) makes each of those steps work on
    functions of one op, so compile time grows linearly with the graph; a
    call per op costs nothing next to the op's loops. Ops whose outlined
    functions would be identical (a graph repeats its blocks) share one
    function, so LLVM optimizes each distinct op once.

    ```mlir
    linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
    // becomes
    call @forward_op0(%a) : (memref<4xf32>) -> ()
    func.func private @forward_op0(%arg0: memref<4xf32>)
        attributes {passthrough = ["noinline"]} {
      %c = arith.constant 0.0 : f32
      linalg.fill ins(%c : f32) outs(%arg0 : memref<4xf32>)
      return
    }
    ```

    Only ops with buffer semantics (no tensor operands or results) in the
    entry block of a `func.func` are outlined; the rest of the IR is
    unchanged.

    When every memref argument has a static shape, strides and offset, the
    function gets `llvm.bareptr` (each memref becomes one pointer in LLVM)
    and `llvm.noalias` on each memref argument that no other argument can
    overlap while one of them is written: an argument viewing a fresh
    `memref.alloc` overlaps only views of that allocation; two arguments of
    the enclosing function may be the same buffer. LLVM then vectorises the
    loops without run-time alias checks. Calls with a different aliasing
    outline to different functions.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numOutlined", "ops-outlined", "Linalg ops outlined">
  ];
}

def UniqueReturnBuffersPass
    : Pass<"unique-return-buffers", "::mlir::func::FuncOp"> {
  let summary = "Return each buffer at most once: repeats become copies";
  let description = [{
    After bufferization a function can return one memref value at several
    positions (CSE merges identical ops whose results are all returned).
    Upstream `--buffer-results-to-out-params{hoist-static-allocs=1}` turns a
    returned allocation into its out-parameter once per position and erases
    it, so the second position uses an erased op (a crash, found by the
    seg-lowering fuzzer). This pass gives every position after the first a
    fresh `memref.alloc` and a `memref.copy` of the value. A repeated buffer
    without a static identity layout is a located error.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numCopies", "copies", "Repeated results given a copy">
  ];
}

def InterchangeReductionsInnermostPass
    : Pass<"interchange-reductions-innermost", "::mlir::func::FuncOp"> {
  let summary = "Permute each linalg.generic's iteration space so that its "
                "reduction dims are innermost";
  let description = [{
    Moves the parallel dims of every `linalg.generic` first and its
    reduction (and other non-parallel) dims last, each group in its
    original order (upstream's `interchangeGenericOp`; the indexing maps
    change, the op's semantics do not). A sum over the middle dim of a
    (M, K, I) tensor, iterated (m, k, i), becomes (m, i, k):
    `--convert-linalg-to-parallel-loops` then gives one `scf.parallel` over
    (m, i) with a sequential `scf.for` over k inside, which the GPU lowering
    runs as one thread per output (the (m, k, i) order gives an `scf.for`
    around an `scf.parallel`, a one-thread kernel). Every output element
    accumulates its terms in the same order as before: results are bitwise
    equal. The CUDA pipeline runs it (a LayerNorm over the channels of NCHW,
    `seg.layer_norm axis = 1`); the CPU pipeline does not, whose inner loop
    over i is contiguous and vectorizes.

    ```mlir
    %s = linalg.generic {indexing_maps = [affine_map<(m, k, i) -> (m, k, i)>,
                                          affine_map<(m, k, i) -> (m, i)>],
                         iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%x : tensor<2x8x3xf32>) outs(%z : tensor<2x3xf32>) {...}
    // becomes
    %s = linalg.generic {indexing_maps = [affine_map<(m, i, k) -> (m, k, i)>,
                                          affine_map<(m, i, k) -> (m, i)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x : tensor<2x8x3xf32>) outs(%z : tensor<2x3xf32>) {...}
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numInterchanged", "interchanged", "Generics interchanged">
  ];
}

def UnshareInitTensorsPass
    : Pass<"unshare-init-tensors", "::mlir::func::FuncOp"> {
  let summary = "Give every destination-style op its own tensor.empty (or "
                "linalg.fill of one) as init";
  let description = [{
    CSE merges all `tensor.empty` ops of one type, and all `linalg.fill`s of
    one value into them, so in a graph every op of a given output shape
    takes the same value as its init (`outs`). One-Shot Bufferize then
    compares each write into that value with every other use of it, which
    is quadratic in the graph (95% of the compile time of a 10^5-op graph
    for CUDA), and resolves the conflicts with copies of the shared buffer.
    This pass clones the `tensor.empty` (or the `linalg.fill` and its
    `tensor.empty`) right before each destination-style op that uses it as
    a tensor init, except the first, which keeps the original; an init that
    is a reshape (`tensor.expand_shape`, `tensor.collapse_shape`,
    `tensor.cast`) of such a value, which CSE merges as well, is cloned with
    its chain. Uses as an input, and inits defined by anything else, are left
    alone.

    ```mlir
    %e = tensor.empty() : tensor<4xf32>
    %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %b = linalg.exp ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    // becomes
    %e = tensor.empty() : tensor<4xf32>
    %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %e_0 = tensor.empty() : tensor<4xf32>
    %b = linalg.exp ins(%a : tensor<4xf32>) outs(%e_0 : tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numUnshared", "inits-unshared", "Init uses given their own clone">
  ];
}

def FuseGathersIntoElementwisePass
    : Pass<"fuse-gathers-into-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse gathers (lowered shifts) into their one elementwise "
                "consumer";
  let description = [{
    Upstream's elementwise fusion (the patterns of
    `--linalg-fuse-elementwise-ops`), restricted to producers that are
    gathers: a `linalg.generic` with no inputs whose body reads a float
    tensor with `tensor.extract` (the lowering of `seg.shift` and
    `seg.channel_shift`), with one use. The CPU pipeline runs it so that a
    shift no consumer absorbs (ShiftViT's `x + shift(x)`) is one loop nest
    with its consumer; other elementwise producers are left alone (with
    upstream's unrestricted fusion, the relu + add of cpu-levels.mlir came
    out as scalar, unrolled code at x86-64-v3, no longer vectorized; the
    cause was not investigated).
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def SplitLongBlocksPass : Pass<"split-long-blocks", "::mlir::func::FuncOp"> {
  let summary = "Cut a function's single block into a chain of blocks of at "
                "most max-ops ops";
  let description = [{
    MLIR numbers the ops of a block lazily and renumbers the whole block
    when an insertion finds no free number between its neighbours. The
    dialect conversions to LLVM insert several ops in front of nearly every
    op they convert and then compare positions, so on one block of N ops
    they renumber N times: O(N^2), 10 of 18 s of the CPU lowering of a
    4,000-op graph. Cutting the block into a chain of blocks joined by
    `cf.br` bounds each renumbering by max-ops; the branches are free (LLVM
    merges the blocks back).

    ```mlir
    func.func @f() {
      op1
      op2
      op3
      return
    }
    // with max-ops=2 becomes
    func.func @f() {
      op1
      cf.br ^bb1
    ^bb1:
      op2
      cf.br ^bb2
    ^bb2:
      op3
      return
    }
    ```

    Only functions with one block are cut (values then dominate every later
    block, so no block arguments are needed); run it after the last
    canonicalization, which would merge the blocks again.
  }];
  let options = [
    Option<"maxOps", "max-ops", "unsigned", "256",
           "Most ops per block, its branch included (at least 2)">
  ];
  let dependentDialects = ["::mlir::cf::ControlFlowDialect"];
  let statistics = [
    Statistic<"numSplits", "blocks-split-off", "Blocks split off">
  ];
}

def DeduplicateGpuKernelsPass
    : Pass<"deduplicate-gpu-kernels", "::mlir::ModuleOp"> {
  let summary = "Merge the kernels of a gpu.module that differ only in name";
  let description = [{
    `--convert-parallel-loops-to-kernels` makes one kernel per loop nest, and
    a graph repeats its blocks: most kernels are copies of another on other
    buffers (the same layer norm, the same GELU). The NVPTX back end and
    ptxas cost about 20 ms per kernel, so a 10^4-op graph spent minutes
    compiling copies. Kernels whose generic form is equal but for the name
    are merged into the first of them and every `gpu.launch_func` is pointed
    at it. Locations are not compared: before merging, each launch's location
    is fused with those of its kernel's body, so that every launch still
    names the source ops it computes (the CUDA launch plan's step sources).

    ```mlir
    gpu.launch_func @kernels::@k0 ...
    gpu.launch_func @kernels::@k1 ...   // k1's body equals k0's
    // becomes
    gpu.launch_func @kernels::@k0 ...
    gpu.launch_func @kernels::@k0 ...
    ```

    Functions of a gpu.module that are not kernels are left alone.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
  let statistics = [
    Statistic<"numMerged", "kernels-merged", "Duplicate kernels removed">
  ];
}

def PromoteLoopAccumulatorsPass
    : Pass<"promote-loop-accumulators", "::mlir::ModuleOp"> {
  let summary = "Keep a loop's accumulator in a register: a loop-invariant "
                "load/store pair becomes an iter_arg";
  let description = [{
    Scalar replacement in `scf.for` loops: when the body of a loop loads
    `%m[%i...]` and later stores to `%m[%i...]` (the same memref value and
    the same index values, all defined outside the loop), the load moves
    before the loop, the store after it, and the value travels in an
    `iter_arg`. What `--convert-linalg-to-parallel-loops` makes of a
    reduction (a convolution's or a linear's accumulator, a pooling window's
    maximum, a row sum) then keeps the accumulator in a register instead of
    loading and storing it in global memory per iteration. Inner loops are
    promoted first, so the pair that the promotion leaves around an inner
    loop is promoted out of the enclosing one in turn.

    ```mlir
    scf.for %k = %c0 to %c16 step %c1 {
      %a = memref.load %acc[%i] : memref<4xf32>
      %x = memref.load %in[%i, %k] : memref<4x16xf32>
      %s = arith.addf %a, %x : f32
      memref.store %s, %acc[%i] : memref<4xf32>
    }
    // becomes
    %a0 = memref.load %acc[%i] : memref<4xf32>
    %r = scf.for %k = %c0 to %c16 step %c1 iter_args(%a = %a0) -> (f32) {
      %x = memref.load %in[%i, %k] : memref<4x16xf32>
      %s = arith.addf %a, %x : f32
      scf.yield %s : f32
    }
    memref.store %r, %acc[%i] : memref<4xf32>
    ```

    Legal only when nothing else in the loop may touch that element:
    - the loop runs at least once (constant bounds, lower < upper), so the
      hoisted load and store access only what the loop accessed;
    - the pair is in the loop's own body (it runs every iteration), the load
      before the store, and it is the only load and the only store of that
      memref and indices;
    - every other access in the loop (nested regions included) is to memory
      that cannot overlap the accumulator's: a different root allocation
      (`memref.alloc`/`alloca`, a different `memref.get_global`, traced
      through view ops), or, in a `gpu.func` kernel only, a global against
      a kernel argument (arguments are the launch plan's arena buffers) and a
      different kernel argument that the kernel never writes. That last rule
      rests on the
      CUDA runtime's plan checks (docs/CUDABackend.md, "Plan checks at
      load"): a launch whose written argument overlaps another argument is
      refused unless both are the same buffer and both parameters are in
      place, i.e. both written. An access through the same memref value at
      indices that provably name another element (in some dimension the two
      indices are the same value plus different constants: `%o` and
      `%o + 1`) cannot overlap either, so the several accumulators of a
      register tile (`--convert-parallel-loops-to-kernels`'s
      `register-tile`) are promoted together. Any access to the same root
      through another view or other indices, to another written kernel
      argument, to an
      argument of a function that is not a kernel, or through an op whose
      memory effects are unknown blocks the promotion.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numPromoted", "accumulators-promoted",
              "Load/store pairs turned into loop-carried values">
  ];
}

def EliminatePrivateKernelBuffersPass
    : Pass<"eliminate-private-kernel-buffers", "::mlir::ModuleOp"> {
  let summary = "Drop the scratch buffers a kernel writes before it reads: "
                "their values stay in registers";
  let description = [{
    A kernel argument is a *private buffer* when, in every launch of the
    kernel, it is a `memref.alloc` of the host function that this launch
    alone uses (once; deallocations aside): no other launch reads what the
    kernel leaves in it, and no other argument of the launch overlaps it.
    When every use of the argument in the kernel is a `memref.load` or
    `memref.store` of it, and each load has a certain stored value — the
    nearest store before it, in its block or in the blocks enclosing it
    through `scf.if` regions (which run at most once), that has the load's
    indices, with every store between at indices that provably name another
    element (in some dimension one base plus different constants, as the
    accumulators of a register tile) and no loop or other region between
    that stores to it — each load is replaced by that value, the stores are
    erased, and the argument leaves the kernel and its launches; the
    allocation and its deallocations go.

    This is what a convolution's accumulator looks like after
    `--convert-parallel-loops-to-kernels` (its zero fill, reduction and
    epilogue fused into one kernel) and `--promote-loop-accumulators`:

    ```mlir
    memref.store %zero, %acc[%n, %o, %h, %w] : memref<1x8x4x4xf32>
    %a0 = memref.load %acc[%n, %o, %h, %w] : memref<1x8x4x4xf32>
    %s = scf.for %k = %c0 to %c9 step %c1 iter_args(%a = %a0) -> (f32) { ... }
    memref.store %s, %acc[%n, %o, %h, %w] : memref<1x8x4x4xf32>
    %r = memref.load %acc[%n, %o, %h, %w] : memref<1x8x4x4xf32>
    %y = arith.addf %r, %bias : f32
    // becomes
    %s = scf.for %k = %c0 to %c9 step %c1 iter_args(%a = %zero) -> (f32) { ... }
    %y = arith.addf %s, %bias : f32
    ```

    A global store of the fill, one of the accumulator and a load go per
    output, and the buffer leaves the arena. A load whose store lies before
    a `gpu.barrier` or `gpu.shuffle` (or a region holding one) has no
    certain value (another thread may have stored since); such an argument
    is left alone, as is any argument used otherwise (a view, a copy) or
    loaded without a certain stored value.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numEliminated", "buffers-eliminated",
              "Private buffer arguments removed from kernels">
  ];
}

def FuseMultiplyAddPass : Pass<"fuse-multiply-add", "::mlir::ModuleOp"> {
  let summary = "Turn the multiply-adds of GPU kernels into math.fma";
  let description = [{
    In every `gpu.func` of the module, `arith.addf %c, %p` (either operand
    order) where `%p = arith.mulf %a, %b` has no other use becomes
    `math.fma %a, %b, %c`: one rounding instead of two, `fma.rn.f32` in the
    PTX. The fused operation is explicit, so the host build of the same
    kernels (the CUDA emulator's image) computes it bit for bit as the GPU
    does, unlike a `contract` flag each back end may or may not honour.
    When both operands are such products, the right-hand one is fused.
    A subtraction fuses the same way, through an exact negation:
    `%c - %p` becomes `math.fma (-%a), %b, %c`, `%p - %c` becomes
    `math.fma %a, %b, (-%c)`.

    ```mlir
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    // becomes
    %s = math.fma %a, %b, %c : f32
    ```
  }];
  let dependentDialects = ["::mlir::math::MathDialect"];
  let statistics = [
    Statistic<"numFused", "multiply-adds-fused", "arith.mulf + arith.addf "
              "pairs fused into math.fma">
  ];
}

def MarkKernelArgumentsNoAliasPass
    : Pass<"mark-kernel-arguments-noalias", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Mark the memref arguments of CUDA kernels llvm.noalias "
                "(and llvm.readonly when never written)";
  let description = [{
    For the NVVM lowering of gpuopt's kernels (bare-pointer calling
    convention, which turns the attributes into LLVM's `noalias` and
    `readonly` parameter attributes). Sound only because of the CUDA
    runtime's plan checks (docs/CUDABackend.md, "Plan checks at load"), which
    refuse, before any launch, a step whose written argument overlaps
    another argument, unless both are the same buffer and both parameters
    are in place (read and written). LLVM's `noalias` only constrains memory
    that is modified during the call, so:

    - an argument the kernel never writes gets `llvm.noalias` and
      `llvm.readonly`: nothing overlapping it is written (a written argument
      overlaps no argument that is not in place);
    - an argument the kernel writes gets `llvm.noalias` unless another
      argument may also be in place (written and read: an in-place pair may
      be the same buffer); the read/write test is conservative (any load or
      store through the argument or a view of it; any other use counts as
      both).

    The host image of the emulator is built before this pass runs (it never
    sees the attributes), so a plan run with `--skip-plan-checks` is not
    undefined behaviour there.
  }];
}

def VerifyKernelTargetsPass
    : Pass<"verify-kernel-targets", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Refuse kernel ops that one of the gpu.module's NVVM targets "
                "does not have";
  let description = [{
    Run on a `gpu.module` after `nvvm-attach-target`: an op its kernels use
    that one of the module's `#nvvm.target` chips cannot run is an error
    located at the op and naming the chip, where the NVPTX back end would
    stop the compiler with a fatal "Cannot select" instead. Checked today:
    `nvgpu.mma.sync` (the TF32 tensor-core m16n8k* shapes need sm_80 or
    newer) and the asynchronous copies (`nvgpu.device_async_copy`,
    `_create_group`, `_wait`: PTX cp.async, sm_80 or newer). A module
    without targets, or with targets other than NVVM, is
    left alone.
  }];
}

def ConvertGpuKernelsToHostPass
    : Pass<"convert-gpu-kernels-to-host", "::mlir::ModuleOp"> {
  let summary = "Turn the kernels of each gpu.module into host functions of "
                "one GPU thread";
  let description = [{
    The host build of a CUDA artifact's kernels (`gpuopt-compile
    --target=cuda --cuda-host-image`, docs/CUDABackend.md, "Emulation on the
    host"): each `gpu.func` kernel of a `gpu.module` becomes a `func.func` of
    the same name that runs one thread of it. Its twelve leading `index`
    arguments are the block id (x, y, z), the thread id (x, y, z), the block
    size (x, y, z) and the grid size (x, y, z); the kernel's memref arguments
    follow, unchanged (lowered with the bare-pointer convention, as for
    NVVM, so the launch plan's buffer addresses are the arguments). A
    runtime runs a launch by calling it for every block and every thread of
    the block, in any order.

    ```mlir
    gpu.module @kernels {
      gpu.func @k(%a: memref<4xf32>) kernel {
        %t = gpu.thread_id x
        %v = memref.load %a[%t] : memref<4xf32>
        gpu.return
      }
    }
    // becomes
    func.func @k(%bx: index, %by: index, %bz: index, %tx: index, %ty: index,
                 %tz: index, %nx: index, %ny: index, %nz: index, %gx: index,
                 %gy: index, %gz: index, %a: memref<4xf32>)
        attributes {gpuopt.host_kernel,
                    gpuopt.host_workgroup = array<i64: 0>} {
      %v = memref.load %a[%tx] : memref<4xf32>
      return
    }
    ```

    `gpu.block_id`, `gpu.thread_id`, `gpu.block_dim`, `gpu.grid_dim` and
    `gpu.global_id` become those arguments; `gpu.lane_id`, `gpu.subgroup_id`,
    `gpu.subgroup_size` and `gpu.num_subgroups` are computed from them
    (32-lane warps of consecutive linear thread ids, x fastest);
    `memref.global`s of the gpu.module move to the module; the gpu.module
    is erased.

    Threads that communicate: each workgroup attribution becomes one more
    memref argument after the kernel's (in the default memory space; the
    emulator passes one block's memory, laid out as the function's
    `gpuopt.host_workgroup` attribute says: [total bytes, offset of each
    attribution], 16-byte aligned, at most 48 KiB); each private
    attribution becomes a `memref.alloca`. `gpu.barrier` becomes a call of
    `@__gpuopt_host_barrier(site)` and `gpu.shuffle` (i32 or f32) of
    `@__gpuopt_host_shuffle(site, mode, bits, offset, width) -> i64` (the
    value read in bits 0..31, `valid` in bit 32), private declarations the
    host image defines as calls of the emulator's hooks (CudaArtifact.h);
    `nvgpu.mma.sync` (TF32, `tf32Enabled`, f32 operands; shape 16x8x8 with A
    `vector<4x1xf32>` and B `vector<2x1xf32>`, or 16x8x4 with A
    `vector<2x1xf32>` and B `vector<1x1xf32>`; C and D `vector<2x2xf32>`, as
    PTX's `mma.sync.aligned.m16n8kK.row.col.f32.tf32.tf32.f32`) becomes a
    call of `@__gpuopt_host_mma(site, shape, a, b, c)` on three
    `memref.alloca`s holding the lane's fragments (allocated at the
    function's entry), D read back from `c`: the emulator multiplies the
    warp's tile once all 32 lanes have arrived (the fragment layout is in
    CudaArtifact.h, `kCudaMma*`). `site` numbers the kernel's barriers, and
    separately its shuffles and its mmas, in the order of its text.
    Asynchronous copies follow PTX's cp.async: `nvgpu.device_async_copy`
    (int or float elements of 1 to 8 bytes, global to workgroup memory)
    becomes, per element, a load of the source element if it is within
    `srcElements` (else 0, the zero fill), a store of poison (all bits set:
    NaN) to the destination element and a call of
    `@__gpuopt_host_async_copy(address, bits, bytes)`: the emulator writes
    the value when the thread's `nvgpu.device_async_wait` (a call of
    `@__gpuopt_host_async_wait(numGroups)`) leaves at most `numGroups` of
    its committed groups pending; `nvgpu.device_async_create_group`
    (`@__gpuopt_host_async_commit()`) commits every copy of the thread not
    yet committed, whatever tokens it names. A read of the destination
    before the wait sees NaN, and a thread that returns with copies it never
    waited for is an error of the emulator. A copy's token may only feed
    create_group ops, a group's only waits. With bounds checks, a copy of
    more than one element first checks that both ends' byte offsets are
    multiples of its size (cp.async's rule; kind 3 below) and is skipped
    otherwise. A kernel with any of these ops gets the `gpuopt.host_syncs`
    attribute: the emulator
    runs each thread of its blocks as a fiber that the hooks suspend until
    the block (for a barrier) or the warp (for a shuffle or an mma) has
    arrived, so the kernel's private memory must be static and at most 64
    KiB per thread.

    Input invariant: a copy of the kernels that nothing launches (no
    `gpu.launch_func` in the module). Anything the emulation does not run
    exactly is an error located at it: other GPU ops (`gpu.subgroup_reduce`,
    `gpu.subgroup_mma_*`, `gpu.dynamic_shared_memory`, ...),
    other nvgpu ops and other mma shapes or types, shuffles of other types,
    vector ops that access memory (`vector.store`, `vector.transfer_read`,
    ...) but a `vector.load` of a 1-D float vector from global memory (run
    as scalar loads; below), workgroup memory other than attributions (an alloca, a global, a
    memory space cast), memrefs in the global memory space, functions that
    are not kernels, and ops of dialects other than arith, math, memref,
    scf, cf, affine, index, ub and vector.

    With `bounds-checks=true` (what the host image is built with), every
    `memref.load` and `memref.store` of a kernel is guarded: each index must
    lie in its dimension of the accessed memref (0 <= i < dim, unsigned
    compare), and the element it addresses, the linearised offset of the
    view plus the sum of index times stride, must lie inside the allocation
    the view is of (a kernel argument, a `memref.global` or an allocation,
    traced through subview, expand/collapse_shape, cast, reinterpret_cast and
    transpose). A violating access is skipped (a load yields NaN, or 0 for an
    integer) and reported into one more, trailing kernel argument, the
    violation record `memref<24xi64>`: [0] the number of violations, then,
    written by the first only, [1] 0 load / 1 store / 2 misaligned vector
    load / 3 misaligned end of an asynchronous copy, [2] the kernel argument
    the memory belongs to (-1 a memref.global, -2 an allocation of the
    kernel, -3 - k workgroup attribution k), [3] the element offset, [4] the
    allocation's element count (kinds 2 and 3: the alignment in bytes),
    [5] the rank, [6..14) the indices and [14..22) the dimensions (the first
    eight). Any other op that reads or writes memory (affine.load/store,
    memref.copy, atomics, ...) and an access whose memref cannot be traced
    to its allocation are errors located at them: every access of an
    accepted kernel is checked. A `vector.load` becomes one guarded scalar
    load per element; with an `alignment` above the element's, first the
    check that its first element's byte offset in its allocation, which
    must be a kernel argument (a plan buffer, 256-byte aligned on the GPU),
    is a multiple of it: a misaligned load is skipped (NaNs) and reported
    as kind 2.
  }];
  let options = [
    Option<"boundsChecks", "bounds-checks", "bool", /*default=*/"false",
           "Guard every memref access and report violations into a trailing "
           "memref<24xi64> argument (the host image of the emulator)">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
  let statistics = [
    Statistic<"numKernels", "kernels", "Kernels turned into host functions">,
    Statistic<"numChecked", "checked-accesses",
              "Loads and stores given a bounds check">,
    Statistic<"numSyncPoints", "sync-points",
              "Barriers, shuffles and mmas turned into calls of the "
              "emulator's hooks">
  ];
}

#endif // GPUOPT_CONVERSION_PASSES_TD
