//===- WorkgroupTile.h - block tiles of a reduction in workgroup memory -*- C++
//-*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The workgroup tiling of --convert-parallel-loops-to-kernels
// (`workgroup-tile`): a convolution's or linear layer's loop nest, read as
// a matrix product over (output channels) x (pixels) x (reduction), becomes
// a loop over thread blocks, each computing a tile of outputs from operand
// tiles its threads stage together in workgroup memory.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_CONVERSION_PARALLELLOOPSTOKERNELS_WORKGROUPTILE_H
#define GPUOPT_CONVERSION_PARALLELLOOPSTOKERNELS_WORKGROUPTILE_H

#include "gpuopt/Analysis/WorkgroupTiling.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace gpuopt {

/// The unit attribute of a loop (a result of tileReductionInWorkgroupMemory)
/// whose last index is the thread of a block and whose other indices are the
/// block: the kernel outlining launches exactly those threads, unguarded,
/// and gives its workgroup-memory `memref.alloca`s to the kernel as
/// workgroup attributions.
constexpr llvm::StringLiteral kThreadBlockAttrName = "gpuopt.thread_block";

/// How tileReductionInWorkgroupMemory builds its tiles.
struct WorkgroupTileOptions {
  /// Blocks the tile shape should give at least.
  int64_t minBlocks = 132;
  /// TF32 tensor cores (nvgpu.mma.sync) instead of FMAs.
  bool tensorCores = false;
  /// Operands of step t + 1 loaded during step t.
  bool prefetch = true;
  /// Two buffers of each operand tile, used in turn: one barrier per step.
  bool doubleBuffer = true;
  /// 128-bit loads of an operand where it is contiguous along the
  /// reduction or its tile side.
  bool vectorLoads = true;
  /// Operands that are plain reads of a plan buffer copied into the tiles
  /// asynchronously (nvgpu.device_async_copy, PTX cp.async; sm_80 and
  /// newer), not through registers; TF32 tiles round them in place once
  /// they are complete.
  bool asyncCopy = false;
  /// Buffers of each tile where both operands are copied asynchronously a
  /// step ahead (at least 2): steps t + 1 .. t + stages - 1 in flight while
  /// step t multiplies, as many as fit 48 KiB and the steps.
  int64_t stages = 2;
  /// Outputs a thread may compute (RM x RN of its tile shape): 16 keeps
  /// the 4 x 4 shapes and smaller, 32 adds 8 x 4 and 4 x 8, 64 adds 8 x 8
  /// (at least 4, the 2 x 2 shapes).
  int64_t maxThreadOutputs = 16;
  /// Parts a deep reduction may be split into where its blocks would leave
  /// multiprocessors idle or run 2 x 2 thread tiles (split-K: the parts'
  /// sums in a workspace, added by a second loop); 1: never.
  int64_t maxSplits = 1;
};

/// Rewrites `loop` when its body, besides ops before and after it, is one
/// perfect nest of `scf.for` loops with constant bounds whose innermost body
/// only accumulates `acc[p] = acc[p] + x * y` (or with the operands of the
/// `+` or `*` swapped), where `x` and `y` are computed by region-free pure
/// ops and loads from buffers the loop does not write, `x` depends on the
/// parallel indices M (at least one, at least 16 iterations in all) and not
/// on the others (N), `y` not on M, and the accumulator's indices not on
/// the nest. The result is an `scf.parallel` over (block, thread) carrying
/// kThreadBlockAttrName: each block computes an (M tile) x (N tile) of
/// outputs, each thread a few of them in registers; per step of 16
/// reduction iterations the block's threads load the `x` and `y` tiles into
/// workgroup memory, synchronise, and multiply-add from there. Each output
/// sums its terms in the original order (the same rounding as `loop`) but
/// where `options.maxSplits` splits a deep reduction (split-K): then the
/// blocks of each part sum its terms from zero into a workspace allocated
/// before the loop, and a second `scf.parallel` after it adds the parts in
/// order to the value before the nest and runs the ops after it.
/// The ops before the nest run per output before, those after it per output
/// after. Among a few tile shapes the one with the least padding that still
/// gives at least `options.minBlocks` blocks is chosen (else the one with the
/// most blocks). Returns the new loop, or failure (IR unchanged) when `loop` is
/// not such a reduction.
///
/// With `options.tensorCores`, each warp of the block computes its part of the
/// tile with TF32 `nvgpu.mma.sync` (m16n8k8) from the same workgroup tiles: the
/// operands are rounded to TF32 and each 8 reduction steps are summed by
/// the tensor core, so results differ from the FP32 kernel within TF32's
/// tolerance.
///
/// With `options.prefetch`, each thread loads its elements of step t + 1's
/// tiles into registers before step t multiplies (a loop-carried copy of
/// them), so that the global loads overlap the multiply-adds; without it,
/// at the start of step t + 1.
///
/// With `options.doubleBuffer` (and more than one step), the tiles have two
/// buffers, [2, 16, rows]: step t multiplies from buffer t % 2 while the
/// threads store step t + 1's operands into the other, then synchronise
/// once. (With one buffer every step synchronises twice: after its stores,
/// and after its multiply-adds before the next step's stores.)
///
/// Without tensor cores each thread owns RM consecutive rows and its RN
/// columns in pairs (neighbouring threads, neighbouring pairs); per step it
/// reads its rows as one aligned vector and each pair as one 8-byte vector
/// from the tiles, which are 16-byte aligned `memref.alloca`s (the
/// `alignment` the kernel outlining turns into the workgroup attribution's
/// `llvm.align`) with rows of a multiple of 4 words.
///
/// With `options.vectorLoads`, when `x` or `y` is a load of a buffer the
/// plan places (a function argument or `memref.alloc`, or a reshape of one
/// made before `loop`, of identity layout: 256-byte aligned) whose last
/// indices, but for trailing size-1 dimensions, run in order over whole
/// dimensions of a group of indices — the nest (k), or the operand's tile
/// side (M for `x`, N for `y`) — with its other indices independent of that
/// group, and the group's size is a multiple of 4, each thread loads 4
/// consecutive elements of the group with one `vector.load` of the buffer
/// collapsed to [..., group] (alignment 16: PTX `ld.global.nc.v4.b32`)
/// instead of 4 scalar loads. With `options.tensorCores` the staged
/// operands are rounded to TF32 (nearest, ties away from zero).
///
/// With `options.asyncCopy` (FP32 tiles, with two buffers, without
/// prefetch, or of one step), an
/// operand that is a load of such a buffer, or `select(c, load, +0.0)` (the
/// guarded read of a padded or remapped input; the load used by nothing
/// else), is not loaded into
/// registers: each thread issues `nvgpu.device_async_copy`s of its elements
/// straight into the tile (4 bytes, or 16 for a vector along the tile's
/// rows, cp.async.cg), with 0 source elements (zero fill) where `c` is false
/// or past M, N or K, from the address of position 0, step 0 there; one
/// `nvgpu.device_async_create_group` per step, and a
/// `nvgpu.device_async_wait` before the barrier that publishes the step.
/// Where both operands are copied and loaded a step ahead with two
/// buffers, `options.stages` > 2 gives each tile up to that many buffers
/// (as many as fit 48 KiB of workgroup memory and the reduction's steps):
/// step s's copies are group s; steps 0 .. S - 2 are issued before the
/// loop, step t issues step t + S - 1 into the buffer step t - 1 read,
/// multiplies, waits until at most S - 2 groups are pending and meets the
/// one barrier of the step.
FailureOr<scf::ParallelOp>
tileReductionInWorkgroupMemory(scf::ParallelOp loop,
                               const WorkgroupTileOptions &options);

/// Whether tileReductionInWorkgroupMemory applies to `loop` (with any
/// options: they choose how, not whether). The IR is not changed.
bool canTileReductionInWorkgroupMemory(scf::ParallelOp loop);

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_CONVERSION_PARALLELLOOPSTOKERNELS_WORKGROUPTILE_H
