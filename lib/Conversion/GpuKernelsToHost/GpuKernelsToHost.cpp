//===- GpuKernelsToHost.cpp - GPU kernels as host functions of a thread ---===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --convert-gpu-kernels-to-host: every gpu.func kernel of a
// gpu.module becomes a func.func that runs one thread of it, given the block
// id, thread id, block size and grid size as leading index arguments. Its
// workgroup attributions become arguments (one block's memory, which the
// emulator provides) and its private attributions allocas; gpu.barrier and
// gpu.shuffle become calls of the emulator's hooks (CudaArtifact.h), which
// suspend the thread, run as a fiber, until its block (or warp) has arrived;
// so does nvgpu.mma.sync (TF32 m16n8k8 and m16n8k4), whose fragments the
// emulator gathers from the warp's lanes. An asynchronous copy
// (nvgpu.device_async_copy, PTX cp.async) reads its source when issued,
// poisons its destination and hands the value to the emulator, which writes
// it when the thread waits for its group (nvgpu.device_async_wait): a read
// of the destination before that wait sees the poison (NaN).
// With bounds-checks, every load and store is guarded and a violation is
// reported into a trailing record argument instead of happening (the
// emulator's out-of-bounds error).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Runtime/CudaArtifact.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>
#include <optional>

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_CONVERTGPUKERNELSTOHOSTPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

/// The leading index arguments of a host kernel, in order: block id, thread
/// id, block size, grid size, each (x, y, z).
enum HostKernelArg : unsigned {
  kBlockId = 0,
  kThreadId = 3,
  kBlockDim = 6,
  kGridDim = 9,
  kNumIdArgs = 12
};

/// The violation record, the trailing argument of a checked host kernel
/// (Passes.td; the emulator's CudaEmulator.cpp reads it).
enum RecordField : int64_t {
  kRecCount = 0,
  kRecKind = 1,
  kRecArg = 2,
  kRecLinear = 3,
  kRecExtent = 4,
  kRecRank = 5,
  kRecIndices = 6,
  kRecDims = 14,
  kRecordSize = 24
};
/// Indices and dimensions recorded per violation.
constexpr unsigned kRecordedRank = 8;
/// The record's kinds: a load or store out of bounds, a vector load or an
/// end of an asynchronous copy misaligned for its alignment (then
/// kRecExtent holds the alignment in bytes).
constexpr int64_t kKindLoad = 0, kKindStore = 1, kKindMisaligned = 2,
                  kKindMisalignedCopy = 3;
/// The record's root kinds beside a kernel argument number; workgroup
/// attribution k is kRootWorkgroup - k.
constexpr int64_t kRootGlobal = -1, kRootLocal = -2, kRootWorkgroup = -3;
/// The private function that fills the record.
constexpr const char *kReportFn = "__gpuopt_report_out_of_bounds";
/// The declarations a barrier and a shuffle call (defined by the host image
/// as calls of the emulator's hooks, CudaHostImage.cpp).
constexpr const char *kBarrierFn = "__gpuopt_host_barrier";
constexpr const char *kShuffleFn = "__gpuopt_host_shuffle";
constexpr const char *kMmaFn = "__gpuopt_host_mma";
constexpr const char *kAsyncCopyFn = "__gpuopt_host_async_copy";
constexpr const char *kAsyncCommitFn = "__gpuopt_host_async_commit";
constexpr const char *kAsyncWaitFn = "__gpuopt_host_async_wait";
/// The lanes of a warp.
constexpr int64_t kWarpSize = 32;
/// Alignment of each workgroup attribution in a block's workgroup memory.
constexpr int64_t kWorkgroupAlignment = 16;

namespace rt = ::gpuopt::runtime;

/// The gpu address space of a memref type, if it has one.
std::optional<gpu::AddressSpace> gpuSpace(Type type) {
  auto memref = dyn_cast<BaseMemRefType>(type);
  if (!memref)
    return std::nullopt;
  if (auto space =
          dyn_cast_or_null<gpu::AddressSpaceAttr>(memref.getMemorySpace()))
    return space.getValue();
  return std::nullopt;
}

/// Whether `type` (or, for a memref, its memory space) can live in host
/// memory shared by every thread.
bool isHostType(Type type) {
  auto memref = dyn_cast<BaseMemRefType>(type);
  return !memref || !memref.getMemorySpace();
}

/// Whether `type` is memory the emulation provides: host memory, one
/// block's workgroup memory or one thread's private memory.
bool isEmulatedType(Type type) {
  std::optional<gpu::AddressSpace> space = gpuSpace(type);
  return isHostType(type) || (space && *space != gpu::AddressSpace::Global);
}

/// `type` in the default memory space.
Type stripMemorySpace(Type type) {
  if (!gpuSpace(type))
    return type;
  if (auto m = dyn_cast<MemRefType>(type))
    return MemRefType::get(m.getShape(), m.getElementType(), m.getLayout());
  auto u = cast<UnrankedMemRefType>(type);
  return UnrankedMemRefType::get(u.getElementType(), Attribute());
}

/// The bytes of a statically shaped memref of int, float or index elements
/// with the identity layout; nullopt for any other type.
std::optional<int64_t> staticBytes(Type type) {
  auto m = dyn_cast<MemRefType>(type);
  if (!m || !m.hasStaticShape() || !m.getLayout().isIdentity())
    return std::nullopt;
  Type e = m.getElementType();
  int64_t size;
  if (isa<IndexType>(e))
    size = 8;
  else if (e.isIntOrFloat())
    size = (e.getIntOrFloatBitWidth() + 7) / 8;
  else
    return std::nullopt;
  return size * m.getNumElements();
}

/// Whether `op` is one of the asynchronous copy ops (PTX cp.async).
bool isAsyncCopyOp(Operation *op) {
  return isa<nvgpu::DeviceAsyncCopyOp, nvgpu::DeviceAsyncCreateGroupOp,
             nvgpu::DeviceAsyncWaitOp>(op);
}

/// Whether `op` makes the kernel's threads synchronize, or keep state
/// between hook calls (pending copies), and so run as fibers.
bool isSync(Operation *op) {
  return isa<gpu::BarrierOp, gpu::ShuffleOp, nvgpu::MmaSyncOp>(op) ||
         isAsyncCopyOp(op);
}

Value traceAllocation(Value view);

/// Checks an asynchronous copy op for the host emulation: a copy of int or
/// float elements of 1 to 8 bytes from the default (global) memory space
/// into workgroup memory, its token used only by create_group ops; a group
/// token used only by waits.
LogicalResult checkAsyncCopyOp(Operation *op) {
  auto tokenUsedBy = [&](Value token, auto isUser,
                         StringRef what) -> LogicalResult {
    for (Operation *user : token.getUsers())
      if (!isUser(user))
        return op->emitOpError("passes its token to ")
               << user->getName() << "; the host emulation takes " << what;
    return success();
  };
  if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op)) {
    Type element = copy.getDst().getType().getElementType();
    if (!isa<IntegerType, FloatType>(element) ||
        element.getIntOrFloatBitWidth() % 8 != 0 ||
        element.getIntOrFloatBitWidth() > 64 ||
        copy.getSrc().getType().getElementType() != element)
      return op->emitOpError("copies ")
             << copy.getSrc().getType().getElementType() << " to " << element
             << "; the host emulation copies int and float elements of 1 to "
                "8 bytes, the same type on both sides";
    if (!isHostType(copy.getSrc().getType()) ||
        gpuSpace(copy.getDst().getType()) != gpu::AddressSpace::Workgroup)
      return op->emitOpError("copies from ")
             << copy.getSrc().getType() << " to " << copy.getDst().getType()
             << "; the host emulation copies from global memory (the default "
                "memory space) to workgroup attributions";
    // An allocation of the kernel is local memory on the GPU, not global.
    if (Value root = traceAllocation(copy.getSrc());
        root && isa_and_nonnull<memref::AllocaOp, memref::AllocOp>(
                    root.getDefiningOp()))
      return op->emitOpError("copies from an allocation of the kernel (local "
                             "memory on the GPU); cp.async reads global "
                             "memory: a kernel argument or memref.global");
    if (copy.getDst().getType().getRank() == 0 ||
        copy.getSrc().getType().getRank() == 0)
      return op->emitOpError("copies a rank-0 memref; the host emulation "
                             "runs copies along a memref's last dimension");
    return tokenUsedBy(
        copy.getAsyncToken(),
        [](Operation *u) { return isa<nvgpu::DeviceAsyncCreateGroupOp>(u); },
        "a copy's token only into nvgpu.device_async_create_group");
  }
  if (auto group = dyn_cast<nvgpu::DeviceAsyncCreateGroupOp>(op))
    return tokenUsedBy(
        group.getAsyncToken(),
        [](Operation *u) { return isa<nvgpu::DeviceAsyncWaitOp>(u); },
        "a group's token only into nvgpu.device_async_wait");
  return success();
}

/// The kCudaMma* shape of an nvgpu.mma.sync the emulation runs: TF32
/// (tf32Enabled, f32 operands), 16x8x8 with A vector<4x1xf32>, B
/// vector<2x1xf32>, or 16x8x4 with A vector<2x1xf32>, B vector<1x1xf32>; C
/// and D vector<2x2xf32>.
std::optional<int64_t> emulatedMmaShape(nvgpu::MmaSyncOp mma) {
  std::array<int64_t, 3> shape = mma.getMmaShapeAsArray();
  if (!mma.getTf32Enabled() || shape[0] != 16 || shape[1] != 8 ||
      (shape[2] != 8 && shape[2] != 4))
    return std::nullopt;
  const int64_t k = shape[2];
  auto is = [](Value v, int64_t rows, int64_t cols) {
    auto t = dyn_cast<VectorType>(v.getType());
    return t && t.getElementType().isF32() &&
           t.getShape() == ArrayRef<int64_t>{rows, cols};
  };
  if (!is(mma.getMatrixA(), k / 2, 1) || !is(mma.getMatrixB(), k / 4, 1) ||
      !is(mma.getMatrixC(), 2, 2) || !is(mma.getRes(), 2, 2))
    return std::nullopt;
  return k == 8 ? rt::kCudaMmaM16N8K8Tf32 : rt::kCudaMmaM16N8K4Tf32;
}

/// Checks that `op`, inside a kernel, runs the same on the host when the
/// threads run one at a time, each until it returns or reaches a barrier or
/// shuffle; emits a located error otherwise.
LogicalResult checkHostOp(Operation *op, bool boundsChecks) {
  for (Type t :
       llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
    if (!isEmulatedType(t))
      return op->emitOpError("uses ")
             << t
             << " in a memory space the host emulation does not provide "
                "(only the default one, workgroup attributions and private "
                "memory)";
  if (isa<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp>(op) &&
      !isHostType(op->getResult(0).getType()) &&
      !(isa<memref::AllocaOp>(op) &&
        gpuSpace(op->getResult(0).getType()) == gpu::AddressSpace::Private))
    return op->emitOpError("makes ")
           << op->getResult(0).getType()
           << "; the host emulation provides workgroup memory only as "
              "gpu.func workgroup attributions (and private memory as "
              "allocas and private attributions)";
  if (isa<memref::MemorySpaceCastOp>(op))
    return op->emitOpError("changes a memref's memory space, which the host "
                           "emulation does not model");
  if (isa<gpu::BlockIdOp, gpu::ThreadIdOp, gpu::BlockDimOp, gpu::GridDimOp,
          gpu::GlobalIdOp, gpu::ReturnOp, gpu::BarrierOp, gpu::LaneIdOp,
          gpu::SubgroupIdOp, gpu::SubgroupSizeOp, gpu::NumSubgroupsOp>(op))
    return success();
  if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
    Type t = shuffle.getValue().getType();
    if (!t.isInteger(32) && !t.isF32())
      return op->emitOpError("shuffles ")
             << t << "; the host emulation shuffles i32 and f32 only";
    return success();
  }
  if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
    if (!emulatedMmaShape(mma))
      return op->emitOpError(
          "cannot run on the host emulation: only TF32 mma.sync "
          "(tf32Enabled) of shape 16x8x8 (A vector<4x1xf32>, B "
          "vector<2x1xf32>) or 16x8x4 (A vector<2x1xf32>, B vector<1x1xf32>) "
          "with C and D vector<2x2xf32> is emulated");
    return success();
  }
  if (isAsyncCopyOp(op))
    return checkAsyncCopyOp(op);
  if (isa<nvgpu::NVGPUDialect>(op->getDialect()))
    return op->emitOpError(
        "cannot run on the host emulation: of the nvgpu dialect only "
        "nvgpu.mma.sync (TF32) and the asynchronous copies "
        "(device_async_copy, _create_group, _wait) are emulated");
  if (auto load = dyn_cast<vector::LoadOp>(op)) {
    // Run as scalar loads, each bounds-checked, after an alignment check.
    if (load.getVectorType().getRank() != 1 ||
        load.getVectorType().isScalable() ||
        !isa<FloatType>(load.getVectorType().getElementType()) ||
        gpuSpace(load.getBase().getType())
                .value_or(gpu::AddressSpace::Workgroup) !=
            gpu::AddressSpace::Workgroup)
      return op->emitOpError("loads ")
             << load.getVectorType() << " from " << load.getBase().getType()
             << "; the host emulation runs vector.load of a fixed 1-D float "
                "vector from global or workgroup memory only";
    return success();
  }
  if (isa<vector::VectorDialect>(op->getDialect())) {
    // Register values only: a vector store would escape the bounds checks.
    if (!isMemoryEffectFree(op))
      return op->emitOpError(
          "accesses memory in a way the host emulation does not "
          "bounds-check (only memref.load and memref.store are checked)");
    return success();
  }
  if (isa<gpu::DynamicSharedMemoryOp>(op))
    return op->emitOpError(
        "uses dynamic workgroup memory, which the launch plan does not size; "
        "the host emulation provides static workgroup attributions only");
  if (isa<gpu::GPUDialect>(op->getDialect()))
    return op->emitOpError("cannot run on the host emulation: only "
                           "gpu.barrier, gpu.shuffle of 32-bit values and "
                           "the id ops are emulated");
  if (boundsChecks &&
      isa<memref::MemRefDialect, affine::AffineDialect>(op->getDialect()) &&
      !isa<memref::LoadOp, memref::StoreOp>(op)) {
    // Only loads and stores are guarded: anything else that touches memory
    // would escape the check.
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    bool accesses = effects
                        ? effects.hasEffect<MemoryEffects::Read>() ||
                              effects.hasEffect<MemoryEffects::Write>()
                        : !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
    if (accesses)
      return op->emitOpError("accesses memory in a way the host emulation "
                             "does not bounds-check (only memref.load and "
                             "memref.store are checked)");
  }
  if (isa<arith::ArithDialect, math::MathDialect, memref::MemRefDialect,
          scf::SCFDialect, cf::ControlFlowDialect, affine::AffineDialect,
          index::IndexDialect, ub::UBDialect>(op->getDialect()))
    return success();
  return op->emitOpError("cannot run on the host emulation (ops of the ")
         << op->getDialect()->getNamespace() << " dialect are not emulated)";
}

/// The allocation `view` is a view of, through the views whose element
/// offsets extract_strided_metadata gives relative to their source's base;
/// null for anything else (a memref.view, a memref yielded by a region, ...).
Value traceAllocation(Value view) {
  while (Operation *def = view.getDefiningOp()) {
    if (isa<memref::GetGlobalOp, memref::AllocaOp, memref::AllocOp>(def))
      return view;
    if (auto v = dyn_cast<memref::SubViewOp>(def))
      view = v.getSource();
    else if (auto v = dyn_cast<memref::ExpandShapeOp>(def))
      view = v.getSrc();
    else if (auto v = dyn_cast<memref::CollapseShapeOp>(def))
      view = v.getSrc();
    else if (auto v = dyn_cast<memref::CastOp>(def))
      view = v.getSource();
    else if (auto v = dyn_cast<memref::ReinterpretCastOp>(def))
      view = v.getSource();
    else if (auto v = dyn_cast<memref::TransposeOp>(def))
      view = v.getIn();
    else
      return nullptr;
  }
  return view;
}

/// Adds `void __gpuopt_report_out_of_bounds(record, kind, arg, linear,
/// extent, rank, i0..i7, d0..d7)` (all index but the record) to `module`:
/// counts the violation and, for the first, records the rest.
func::FuncOp createReportFunction(ModuleOp module, Location loc) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Type index = b.getIndexType();
  auto recordType = MemRefType::get({kRecordSize}, b.getI64Type());
  SmallVector<Type> inputs = {recordType};
  inputs.append(kRecIndices - kRecKind + 2 * kRecordedRank, index);
  auto fn = func::FuncOp::create(b, loc, kReportFn,
                                 FunctionType::get(ctx, inputs, {}));
  fn.setPrivate();
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value record = entry->getArgument(0);
  auto at = [&](int64_t i) {
    return arith::ConstantIndexOp::create(b, loc, i).getResult();
  };
  Value count = memref::LoadOp::create(b, loc, record, at(kRecCount));
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0);
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, count, zero);
  auto ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  {
    OpBuilder tb = ifFirst.getThenBodyBuilder();
    for (unsigned i = 1; i < entry->getNumArguments(); ++i) {
      Value v = arith::IndexCastOp::create(tb, loc, tb.getI64Type(),
                                           entry->getArgument(i));
      memref::StoreOp::create(
          tb, loc, v, record,
          arith::ConstantIndexOp::create(tb, loc, kRecKind + i - 1)
              .getResult());
    }
  }
  Value one = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 1);
  Value next = arith::AddIOp::create(b, loc, count, one);
  memref::StoreOp::create(b, loc, next, record, at(kRecCount));
  func::ReturnOp::create(b, loc);
  return fn;
}

/// The allocation `memref` is a view of in host kernel `fn` (whose last
/// argument is the record and whose arguments from kNumIdArgs on are the
/// kernel's `numBuffers` memrefs, then its workgroup attributions) and the
/// record's kind of it: the kernel argument's number,
/// or kRootGlobal, kRootLocal, kRootWorkgroup - k. Failure (reported at
/// `op`) for a memref the emulation cannot check.
FailureOr<std::pair<Value, int64_t>> getCheckedRoot(Operation *op, Value memref,
                                                    func::FuncOp fn,
                                                    unsigned numBuffers) {
  Value root = traceAllocation(memref);
  int64_t rootKind = 0;
  Block &entry = fn.getBody().front();
  if (root && isa<BlockArgument>(root)) {
    auto arg = cast<BlockArgument>(root);
    if (arg.getOwner() != &entry || arg.getArgNumber() < kNumIdArgs ||
        arg.getArgNumber() + 1 >= entry.getNumArguments())
      root = nullptr;
    else if (arg.getArgNumber() - kNumIdArgs < numBuffers)
      rootKind = arg.getArgNumber() - kNumIdArgs;
    else
      rootKind =
          kRootWorkgroup - (arg.getArgNumber() - kNumIdArgs - numBuffers);
  } else if (root) {
    rootKind = isa<memref::GetGlobalOp>(root.getDefiningOp()) ? kRootGlobal
                                                              : kRootLocal;
  }
  if (!root)
    return op->emitOpError("accesses a memref that is not a view of a kernel "
                           "argument, workgroup attribution, memref.global "
                           "or allocation, so the host emulation cannot "
                           "bounds-check it");
  auto rootType = cast<MemRefType>(root.getType());
  if (!rootType.getLayout().isIdentity())
    return op->emitOpError("accesses a view of ")
           << rootType
           << ", an allocation with a non-identity layout, which the host "
              "emulation cannot bounds-check";
  return std::make_pair(root, rootKind);
}

/// The offset of `memref[indices]` from the first element of its allocation.
Value getLinearOffset(OpBuilder &b, Location loc, Value memref,
                      ValueRange indices) {
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value linear = metadata.getOffset();
  for (auto [i, stride] : llvm::zip(indices, metadata.getStrides()))
    linear = arith::AddIOp::create(b, loc, linear,
                                   arith::MulIOp::create(b, loc, i, stride));
  return linear;
}

/// Calls the report function of host kernel `fn` for a violation of `kind`
/// at `op`.
void reportViolation(OpBuilder &b, Location loc, func::FuncOp fn,
                     func::FuncOp report, int64_t kind, int64_t rootKind,
                     Value linear, Value extent, ValueRange indices,
                     ValueRange dims) {
  auto c = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  SmallVector<Value> args = {fn.getBody().front().getArguments().back()};
  args.push_back(c(kind));
  args.push_back(c(rootKind));
  args.push_back(linear);
  args.push_back(extent);
  args.push_back(c(indices.size()));
  for (unsigned k = 0; k < kRecordedRank; ++k)
    args.push_back(k < indices.size() ? indices[k] : c(0));
  for (unsigned k = 0; k < kRecordedRank; ++k)
    args.push_back(k < dims.size() ? dims[k] : c(0));
  func::CallOp::create(b, loc, report, args);
}

/// Guards the load or store `op` of host kernel `fn` (whose last argument
/// is the record and whose arguments from kNumIdArgs on are the kernel's
/// `numBuffers` memrefs, then its workgroup attributions): it runs only if
/// every index is inside its dimension and the element inside the
/// allocation; otherwise the report function is called and a load yields
/// NaN (0 for an integer).
LogicalResult guardAccess(Operation *op, func::FuncOp fn, func::FuncOp report,
                          unsigned numBuffers) {
  bool isStore = isa<memref::StoreOp>(op);
  Value memref = isStore ? cast<memref::StoreOp>(op).getMemRef()
                         : cast<memref::LoadOp>(op).getMemRef();
  ValueRange indices = isStore ? cast<memref::StoreOp>(op).getIndices()
                               : cast<memref::LoadOp>(op).getIndices();
  auto type = cast<MemRefType>(memref.getType());
  FailureOr<std::pair<Value, int64_t>> checked =
      getCheckedRoot(op, memref, fn, numBuffers);
  if (failed(checked))
    return failure();
  auto [root, rootKind] = *checked;
  auto rootType = cast<MemRefType>(root.getType());
  Type element = type.getElementType();
  if (!isStore && !isa<FloatType, IntegerType, IndexType>(element))
    return op->emitOpError("loads ")
           << element << ", which the host emulation cannot bounds-check";

  Location loc = op->getLoc();
  OpBuilder b(op);
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value inside = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  SmallVector<Value> dims;
  for (auto [d, i] : llvm::enumerate(indices)) {
    Value dim = b.createOrFold<memref::DimOp>(loc, memref, d);
    dims.push_back(dim);
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, dim);
    inside = arith::AndIOp::create(b, loc, inside, ok);
  }
  Value linear = getLinearOffset(b, loc, memref, indices);
  Value extent = cst(1);
  for (int64_t d = 0; d < rootType.getRank(); ++d)
    extent = arith::MulIOp::create(b, loc, extent,
                                   b.createOrFold<memref::DimOp>(loc, root, d));
  inside = arith::AndIOp::create(
      b, loc, inside,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear, extent));

  auto reportInto = [&](OpBuilder &eb) {
    reportViolation(eb, loc, fn, report, isStore ? kKindStore : kKindLoad,
                    rootKind, linear, extent, indices, dims);
  };

  if (isStore) {
    auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/true);
    op->moveBefore(guard.thenBlock()->getTerminator());
    OpBuilder eb = guard.getElseBodyBuilder();
    reportInto(eb);
    return success();
  }
  auto guard = scf::IfOp::create(b, loc, TypeRange{element}, inside,
                                 /*withElseRegion=*/true);
  {
    OpBuilder tb = OpBuilder::atBlockEnd(guard.thenBlock());
    Operation *load = tb.clone(*op);
    scf::YieldOp::create(tb, loc, load->getResult(0));
  }
  {
    OpBuilder eb = OpBuilder::atBlockEnd(guard.elseBlock());
    reportInto(eb);
    Value skipped;
    if (auto f = dyn_cast<FloatType>(element))
      skipped = arith::ConstantFloatOp::create(
          eb, loc, f, APFloat::getQNaN(f.getFloatSemantics()));
    else
      skipped = arith::ConstantOp::create(eb, loc, eb.getZeroAttr(element));
    scf::YieldOp::create(eb, loc, skipped);
  }
  op->getResult(0).replaceAllUsesWith(guard.getResult(0));
  op->erase();
  return success();
}

/// Emits, before `op`, the check that `base[indices]`'s byte offset in its
/// allocation (elements of `elementBytes`) is a multiple of `alignment`:
/// the allocation must be a kernel argument (a plan buffer,
/// kCudaArenaAlignment-aligned on the GPU) or workgroup attribution k
/// (aligned to `workgroupAlign[k]` bytes on the GPU) of host kernel `fn`. A
/// misaligned offset is reported as `kind` (a GPU faults on it). Returns the i1
/// "aligned"; failure (an error at `op`, which `verb`s `preposition` the
/// memory) where the GPU's alignment of the allocation is unknown or too small.
FailureOr<Value> emitAlignmentCheck(OpBuilder &b, Operation *op, StringRef verb,
                                    StringRef preposition, Value base,
                                    ValueRange indices, int64_t reportKind,
                                    uint64_t alignment, uint64_t elementBytes,
                                    func::FuncOp fn, func::FuncOp report,
                                    unsigned numBuffers,
                                    ArrayRef<int64_t> workgroupAlign) {
  FailureOr<std::pair<Value, int64_t>> checked =
      getCheckedRoot(op, base, fn, numBuffers);
  if (failed(checked))
    return failure();
  int64_t kind = checked->second;
  if (kind < 0 && kind > kRootWorkgroup)
    return op->emitOpError()
           << verb << " with alignment " << alignment << " " << preposition
           << " memory that is no kernel argument or workgroup "
              "attribution, whose alignment on the GPU the host emulation "
              "does not know";
  if (kind >= 0 && rt::kCudaArenaAlignment % alignment != 0)
    return op->emitOpError() << verb << " with alignment " << alignment
                             << ", more than the " << rt::kCudaArenaAlignment
                             << " bytes the launch plan aligns its buffers to";
  if (kind <= kRootWorkgroup &&
      workgroupAlign[kRootWorkgroup - kind] % alignment != 0)
    return op->emitOpError()
           << verb << " with alignment " << alignment << " " << preposition
           << " workgroup attribution " << kRootWorkgroup - kind
           << ", which is aligned to " << workgroupAlign[kRootWorkgroup - kind]
           << " bytes (its llvm.align, else its element's size)";
  Location loc = op->getLoc();
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value linear = getLinearOffset(b, loc, base, indices);
  Value offset = arith::RemUIOp::create(
      b, loc, arith::MulIOp::create(b, loc, linear, cst(elementBytes)),
      cst(alignment));
  Value aligned =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, offset, cst(0));
  Value misaligned = arith::XOrIOp::create(
      b, loc, aligned, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  auto guard = scf::IfOp::create(b, loc, misaligned, /*withElseRegion=*/false);
  OpBuilder eb = guard.getThenBodyBuilder();
  SmallVector<Value> dims;
  for (int64_t d = 0; d < cast<MemRefType>(base.getType()).getRank(); ++d)
    dims.push_back(eb.createOrFold<memref::DimOp>(loc, base, d));
  reportViolation(eb, loc, fn, report, reportKind, kind, linear,
                  arith::ConstantIndexOp::create(eb, loc, alignment), indices,
                  dims);
  return aligned;
}

/// Replaces the 1-D `vector.load` `load` of host kernel `fn` by scalar
/// loads (bounds-checked later like any other) and, with `report`, first
/// checks its `alignment` (emitAlignmentCheck): a misaligned load is
/// reported and loads NaNs.
LogicalResult expandVectorLoad(vector::LoadOp load, func::FuncOp fn,
                               func::FuncOp report, unsigned numBuffers,
                               ArrayRef<int64_t> workgroupAlign) {
  Location loc = load.getLoc();
  OpBuilder b(load);
  VectorType type = load.getVectorType();
  Type element = type.getElementType();
  auto expand = [&](OpBuilder &eb) {
    SmallVector<Value> indices(load.getIndices());
    SmallVector<Value> parts;
    Value last = indices.back();
    for (int64_t j = 0; j < type.getNumElements(); ++j) {
      indices.back() = j == 0 ? last
                              : arith::AddIOp::create(
                                    eb, loc, last,
                                    arith::ConstantIndexOp::create(eb, loc, j));
      parts.push_back(memref::LoadOp::create(eb, loc, load.getBase(), indices));
    }
    return vector::FromElementsOp::create(eb, loc, type, parts).getResult();
  };
  uint64_t bytes = element.getIntOrFloatBitWidth() / 8;
  std::optional<uint64_t> alignment = load.getAlignment();
  if (!report || !alignment || *alignment <= bytes) {
    load.getResult().replaceAllUsesWith(expand(b));
    load.erase();
    return success();
  }
  FailureOr<Value> aligned =
      emitAlignmentCheck(b, load, "loads", "from", load.getBase(),
                         load.getIndices(), kKindMisaligned, *alignment, bytes,
                         fn, report, numBuffers, workgroupAlign);
  if (failed(aligned))
    return failure();
  auto guard = scf::IfOp::create(b, loc, TypeRange{type}, *aligned,
                                 /*withElseRegion=*/true);
  {
    OpBuilder tb = OpBuilder::atBlockEnd(guard.thenBlock());
    scf::YieldOp::create(tb, loc, expand(tb));
  }
  {
    OpBuilder eb = OpBuilder::atBlockEnd(guard.elseBlock());
    auto nan = cast<FloatType>(element);
    Value skipped = arith::ConstantOp::create(
        eb, loc,
        DenseElementsAttr::get(type,
                               APFloat::getQNaN(nan.getFloatSemantics())));
    scf::YieldOp::create(eb, loc, skipped);
  }
  load.getResult().replaceAllUsesWith(guard.getResult(0));
  load.erase();
  return success();
}

/// The host emulation's hook declarations, made on first use.
struct SyncFunctions {
  ModuleOp module;
  func::FuncOp barrier, shuffle, mma, asyncCopy, asyncCommit, asyncWait;

  /// `name`, declared `type` in the module; null (an error emitted at `at`)
  /// if the module has another symbol of that name.
  func::FuncOp get(func::FuncOp &fn, StringRef name, FunctionType type,
                   Operation *at) {
    if (fn)
      return fn;
    if (Operation *clash = module.lookupSymbol(name)) {
      clash->emitOpError("has the name of a host emulation hook (")
          << name << "), which " << at->getName() << " calls";
      return nullptr;
    }
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    fn = func::FuncOp::create(b, module.getLoc(), name, type);
    fn.setPrivate();
    return fn;
  }
};

/// Replaces the asynchronous copy ops of host kernel `fn` by calls of the
/// emulator's hooks: a wait by `__gpuopt_host_async_wait(groups)`, a group
/// by `__gpuopt_host_async_commit()` (PTX's commit_group: every copy of the
/// thread not yet committed, whatever tokens it names), and a copy of n
/// elements, after (with `report`) the check that its source and
/// destination are aligned to its n elements (cp.async's rule; a misaligned
/// copy is reported and skipped), by, per element j: a load of the source
/// element if j < srcElements (else 0: the zero fill; element 0 is loaded,
/// and so bounds-checked, even then: the source address must be valid), a
/// store of poison
/// (all bits set: NaN) to the destination element — the guarded loads and
/// stores report what is out of bounds — and
/// `__gpuopt_host_async_copy(address, bits, bytes)`, which the emulator
/// holds until the thread waits for the copy's group.
LogicalResult expandAsyncCopies(func::FuncOp fn, func::FuncOp report,
                                unsigned numBuffers,
                                ArrayRef<int64_t> workgroupAlign,
                                SyncFunctions &sync) {
  SmallVector<Operation *> waits, groups, copies;
  fn.getBody().walk([&](Operation *op) {
    if (isa<nvgpu::DeviceAsyncWaitOp>(op))
      waits.push_back(op);
    else if (isa<nvgpu::DeviceAsyncCreateGroupOp>(op))
      groups.push_back(op);
    else if (isa<nvgpu::DeviceAsyncCopyOp>(op))
      copies.push_back(op);
  });
  MLIRContext *ctx = fn.getContext();
  Type i64 = IntegerType::get(ctx, 64);
  auto i64Const = [&](OpBuilder &b, Location loc, int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  for (Operation *op : waits) {
    OpBuilder b(op);
    func::FuncOp hook = sync.get(sync.asyncWait, kAsyncWaitFn,
                                 FunctionType::get(ctx, {i64}, {}), op);
    if (!hook)
      return failure();
    std::optional<int32_t> groupsLeft =
        cast<nvgpu::DeviceAsyncWaitOp>(op).getNumGroups();
    func::CallOp::create(
        b, op->getLoc(), hook,
        ValueRange{i64Const(b, op->getLoc(), groupsLeft.value_or(0))});
    op->erase();
  }
  for (Operation *op : groups) {
    OpBuilder b(op);
    func::FuncOp hook = sync.get(sync.asyncCommit, kAsyncCommitFn,
                                 FunctionType::get(ctx, {}, {}), op);
    if (!hook)
      return failure();
    func::CallOp::create(b, op->getLoc(), hook, ValueRange{});
    op->erase();
  }
  for (Operation *op : copies) {
    auto copy = cast<nvgpu::DeviceAsyncCopyOp>(op);
    Location loc = op->getLoc();
    OpBuilder b(op);
    func::FuncOp hook =
        sync.get(sync.asyncCopy, kAsyncCopyFn,
                 FunctionType::get(ctx, {i64, i64, i64}, {}), op);
    if (!hook)
      return failure();
    Type element = copy.getDst().getType().getElementType();
    unsigned width = element.getIntOrFloatBitWidth();
    int64_t bytes = width / 8;
    int64_t n = copy.getDstElements().getSExtValue(); // 1+ (verifier)
    auto cst = [&](OpBuilder &ob, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(ob, loc, v);
    };
    OpBuilder at = b;
    if (report && n > 1) {
      FailureOr<Value> srcAligned = emitAlignmentCheck(
          b, op, "copies", "from", copy.getSrc(), copy.getSrcIndices(),
          kKindMisalignedCopy, n * bytes, bytes, fn, report, numBuffers,
          workgroupAlign);
      if (failed(srcAligned))
        return failure();
      FailureOr<Value> dstAligned = emitAlignmentCheck(
          b, op, "copies", "to", copy.getDst(), copy.getDstIndices(),
          kKindMisalignedCopy, n * bytes, bytes, fn, report, numBuffers,
          workgroupAlign);
      if (failed(dstAligned))
        return failure();
      auto guard = scf::IfOp::create(
          b, loc, arith::AndIOp::create(b, loc, *srcAligned, *dstAligned),
          /*withElseRegion=*/false);
      at = guard.getThenBodyBuilder();
    }
    Type bitsType = IntegerType::get(ctx, width);
    Value poison = arith::ConstantOp::create(
        at, loc, IntegerAttr::get(bitsType, APInt::getAllOnes(width)));
    if (element != bitsType)
      poison = arith::BitcastOp::create(at, loc, element, poison);
    Value zero = arith::ConstantOp::create(at, loc, at.getZeroAttr(element));
    Value base =
        memref::ExtractAlignedPointerAsIndexOp::create(at, loc, copy.getDst());
    Value linear =
        getLinearOffset(at, loc, copy.getDst(), copy.getDstIndices());
    Value first = arith::AddIOp::create(
        at, loc, base, arith::MulIOp::create(at, loc, linear, cst(at, bytes)));
    SmallVector<Value> src(copy.getSrcIndices()), dst(copy.getDstIndices());
    Value srcLast = src.back(), dstLast = dst.back();
    for (int64_t j = 0; j < n; ++j) {
      src.back() =
          j ? arith::AddIOp::create(at, loc, srcLast, cst(at, j)) : srcLast;
      dst.back() =
          j ? arith::AddIOp::create(at, loc, dstLast, cst(at, j)) : dstLast;
      Value count = copy.getSrcElements();
      Value value;
      if (!count || j == 0) {
        // The copy's source address must be valid even when nothing is
        // read (the address the GPU is handed; the tiles clamp it): the
        // first element is loaded, bounds-checked, either way.
        value = memref::LoadOp::create(at, loc, copy.getSrc(), src);
        if (count)
          value = arith::SelectOp::create(
              at, loc,
              arith::CmpIOp::create(at, loc, arith::CmpIPredicate::ugt, count,
                                    cst(at, 0)),
              value, zero);
      } else {
        Value read = arith::CmpIOp::create(at, loc, arith::CmpIPredicate::ult,
                                           cst(at, j), count);
        value = scf::IfOp::create(
                    at, loc, read,
                    [&](OpBuilder &ob, Location) {
                      scf::YieldOp::create(
                          ob, loc,
                          ValueRange{memref::LoadOp::create(ob, loc,
                                                            copy.getSrc(), src)
                                         .getResult()});
                    },
                    [&](OpBuilder &ob, Location) {
                      scf::YieldOp::create(ob, loc, zero);
                    })
                    .getResult(0);
      }
      memref::StoreOp::create(at, loc, poison, copy.getDst(), dst);
      Value bits = value;
      if (element != bitsType)
        bits = arith::BitcastOp::create(at, loc, bitsType, bits);
      if (width < 64)
        bits = arith::ExtUIOp::create(at, loc, i64, bits);
      Value address = arith::IndexCastUIOp::create(
          at, loc, i64,
          arith::AddIOp::create(at, loc, first, cst(at, j * bytes)));
      func::CallOp::create(at, loc, hook,
                           ValueRange{address, bits, i64Const(at, loc, bytes)});
    }
    op->erase();
  }
  return success();
}

/// Replaces `kernel` by a host function of one thread, inserted before
/// `module`'s gpu.module `at`.
LogicalResult convertKernel(gpu::GPUFuncOp kernel, OpBuilder &builder,
                            func::FuncOp report, SyncFunctions &sync,
                            unsigned &numChecked, unsigned &numSyncs) {
  bool boundsChecks = static_cast<bool>(report);
  for (Type t : kernel.getArgumentTypes())
    if (!isa<MemRefType>(t) || !isHostType(t))
      return kernel.emitOpError("takes an argument of type ")
             << t << "; the host emulation passes memrefs in host memory";
  // One block's workgroup memory: the attributions one after another.
  SmallVector<int64_t> layout = {0};
  int64_t privateBytes = 0;
  SmallVector<BlockArgument> attributions(kernel.getWorkgroupAttributions());
  llvm::append_range(attributions, kernel.getPrivateAttributions());
  for (BlockArgument a : attributions) {
    std::optional<int64_t> bytes = staticBytes(a.getType());
    if (!bytes)
      return kernel.emitOpError("has an attribution of type ")
             << a.getType()
             << "; the host emulation provides statically shaped memrefs "
                "of int, float or index elements with the identity layout";
    if (gpuSpace(a.getType()) == gpu::AddressSpace::Private) {
      privateBytes += *bytes;
      continue;
    }
    int64_t at = llvm::alignTo(layout[0], kWorkgroupAlignment);
    layout.push_back(at);
    layout[0] = at + *bytes;
  }
  if (layout[0] > static_cast<int64_t>(rt::kCudaHostMaxWorkgroupBytes))
    return kernel.emitOpError("has ")
           << layout[0] << " bytes of workgroup attributions, more than the "
           << rt::kCudaHostMaxWorkgroupBytes
           << " of static workgroup memory of a block";
  bool syncs = false;
  WalkResult checked = kernel.getBody().walk([&](Operation *op) {
    syncs |= isSync(op);
    return failed(checkHostOp(op, boundsChecks)) ? WalkResult::interrupt()
                                                 : WalkResult::advance();
  });
  if (checked.wasInterrupted())
    return failure();
  if (syncs) {
    // Each thread runs on a fiber stack of its own: its private memory
    // must fit.
    WalkResult sized = kernel.getBody().walk([&](memref::AllocaOp alloca) {
      std::optional<int64_t> bytes = staticBytes(alloca.getType());
      if (!bytes) {
        alloca.emitOpError("allocates ")
            << alloca.getType()
            << " in a kernel whose threads synchronize; the host emulation "
               "runs them on fiber stacks and needs static private memory";
        return WalkResult::interrupt();
      }
      privateBytes += *bytes;
      return WalkResult::advance();
    });
    if (sized.wasInterrupted())
      return failure();
    if (privateBytes > static_cast<int64_t>(rt::kCudaHostMaxPrivateBytes))
      return kernel.emitOpError("has ")
             << privateBytes << " bytes of private memory per thread, more "
             << "than the " << rt::kCudaHostMaxPrivateBytes
             << " the host emulation's fibers provide";
  }

  MLIRContext *ctx = kernel.getContext();
  Location loc = kernel.getLoc();
  unsigned numBuffers = kernel.getNumArguments();
  unsigned numWorkgroup = kernel.getNumWorkgroupAttributions();
  SmallVector<Type> inputs(kNumIdArgs, builder.getIndexType());
  llvm::append_range(inputs, kernel.getArgumentTypes());
  for (BlockArgument a : kernel.getWorkgroupAttributions())
    inputs.push_back(stripMemorySpace(a.getType()));
  if (boundsChecks)
    inputs.push_back(report.getArgumentTypes().front());
  auto fn = func::FuncOp::create(builder, loc, kernel.getName(),
                                 FunctionType::get(ctx, inputs, {}));
  fn->setAttr("gpuopt.host_kernel", UnitAttr::get(ctx));
  // [total bytes, offset of each workgroup attribution]: the host image's
  // entry point passes each its place in the block's workgroup memory.
  fn->setAttr("gpuopt.host_workgroup", DenseI64ArrayAttr::get(ctx, layout));
  if (syncs)
    fn->setAttr("gpuopt.host_syncs", UnitAttr::get(ctx));
  unsigned numPrivate = kernel.getNumPrivateAttributions();
  fn.getBody().takeBody(kernel.getBody());
  Block &entry = fn.getBody().front();
  SmallVector<Value> ids;
  for (unsigned i = 0; i < kNumIdArgs; ++i)
    ids.push_back(entry.insertArgument(i, builder.getIndexType(), loc));
  // Private attributions: allocas of the thread.
  unsigned firstPrivate = kNumIdArgs + numBuffers + numWorkgroup;
  {
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    for (unsigned i = 0; i < numPrivate; ++i) {
      BlockArgument a = entry.getArgument(firstPrivate + i);
      auto alloca = memref::AllocaOp::create(
          b, a.getLoc(), cast<MemRefType>(stripMemorySpace(a.getType())));
      a.replaceAllUsesWith(alloca.getResult());
    }
    entry.eraseArguments(firstPrivate, numPrivate);
  }
  if (boundsChecks)
    entry.addArgument(report.getArgumentTypes().front(), loc);
  // Workgroup and private memory are host memory now.
  fn.getBody().walk([](Operation *op) {
    for (Value v : op->getResults())
      v.setType(stripMemorySpace(v.getType()));
    for (Region &r : op->getRegions())
      for (Block &block : r)
        for (BlockArgument a : block.getArguments())
          a.setType(stripMemorySpace(a.getType()));
  });
  for (Block &block : fn.getBody())
    for (BlockArgument a : block.getArguments())
      a.setType(stripMemorySpace(a.getType()));

  auto idArg = [&](unsigned base, gpu::Dimension dim) {
    return ids[base + static_cast<unsigned>(dim)];
  };
  SmallVector<Operation *> gpuOps;
  fn.getBody().walk([&](Operation *op) {
    // (The asynchronous copies go after the kernel, with the vector loads.)
    if (isa<gpu::GPUDialect>(op->getDialect()) || isa<nvgpu::MmaSyncOp>(op))
      gpuOps.push_back(op);
  });
  // The thread's position in its block, x fastest (warps are made of
  // consecutive positions).
  auto linearThread = [&](OpBuilder &b, Location l) {
    Value y = arith::AddIOp::create(
        b, l, idArg(kThreadId, gpu::Dimension::y),
        arith::MulIOp::create(b, l, idArg(kBlockDim, gpu::Dimension::y),
                              idArg(kThreadId, gpu::Dimension::z)));
    return arith::AddIOp::create(
               b, l, idArg(kThreadId, gpu::Dimension::x),
               arith::MulIOp::create(b, l, idArg(kBlockDim, gpu::Dimension::x),
                                     y))
        .getResult();
  };
  int64_t barriers = 0, shuffles = 0, mmas = 0;
  for (Operation *op : gpuOps) {
    OpBuilder b(op);
    Location l = op->getLoc();
    auto index = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, l, v).getResult();
    };
    auto i64 = [&](int64_t v) {
      return arith::ConstantIntOp::create(b, l, b.getI64Type(), v).getResult();
    };
    Value replacement;
    if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
      replacement = idArg(kBlockId, id.getDimension());
    } else if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
      replacement = idArg(kThreadId, id.getDimension());
    } else if (auto dim = dyn_cast<gpu::BlockDimOp>(op)) {
      replacement = idArg(kBlockDim, dim.getDimension());
    } else if (auto dim = dyn_cast<gpu::GridDimOp>(op)) {
      replacement = idArg(kGridDim, dim.getDimension());
    } else if (auto id = dyn_cast<gpu::GlobalIdOp>(op)) {
      gpu::Dimension d = id.getDimension();
      Value scaled =
          arith::MulIOp::create(b, l, idArg(kBlockId, d), idArg(kBlockDim, d));
      replacement = arith::AddIOp::create(b, l, scaled, idArg(kThreadId, d));
    } else if (isa<gpu::LaneIdOp>(op)) {
      Value linear = linearThread(b, l);
      replacement = arith::RemUIOp::create(b, l, linear, index(kWarpSize));
    } else if (isa<gpu::SubgroupIdOp>(op)) {
      Value linear = linearThread(b, l);
      replacement = arith::DivUIOp::create(b, l, linear, index(kWarpSize));
    } else if (isa<gpu::SubgroupSizeOp>(op)) {
      replacement = index(kWarpSize);
    } else if (isa<gpu::NumSubgroupsOp>(op)) {
      Value yz =
          arith::MulIOp::create(b, l, idArg(kBlockDim, gpu::Dimension::y),
                                idArg(kBlockDim, gpu::Dimension::z));
      Value threads =
          arith::MulIOp::create(b, l, idArg(kBlockDim, gpu::Dimension::x), yz);
      replacement = arith::CeilDivUIOp::create(b, l, threads, index(kWarpSize));
    } else if (isa<gpu::BarrierOp>(op)) {
      func::FuncOp hook =
          sync.get(sync.barrier, kBarrierFn,
                   FunctionType::get(ctx, {b.getI64Type()}, {}), op);
      if (!hook)
        return failure();
      func::CallOp::create(b, l, hook, ValueRange{i64(barriers++)});
      op->erase();
      continue;
    } else if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
      Type i64Type = b.getI64Type();
      func::FuncOp hook = sync.get(
          sync.shuffle, kShuffleFn,
          FunctionType::get(ctx, SmallVector<Type>(5, i64Type), {i64Type}), op);
      if (!hook)
        return failure();
      int64_t mode = 0;
      switch (shuffle.getMode()) {
      case gpu::ShuffleMode::XOR:
        mode = rt::kCudaShuffleXor;
        break;
      case gpu::ShuffleMode::UP:
        mode = rt::kCudaShuffleUp;
        break;
      case gpu::ShuffleMode::DOWN:
        mode = rt::kCudaShuffleDown;
        break;
      case gpu::ShuffleMode::IDX:
        mode = rt::kCudaShuffleIdx;
        break;
      }
      Type valueType = shuffle.getValue().getType();
      Value bits = shuffle.getValue();
      if (!valueType.isInteger(32))
        bits = arith::BitcastOp::create(b, l, b.getI32Type(), bits);
      auto widen = [&](Value v) {
        return arith::ExtUIOp::create(b, l, i64Type, v).getResult();
      };
      Value result =
          func::CallOp::create(
              b, l, hook,
              ValueRange{i64(shuffles++), i64(mode), widen(bits),
                         widen(shuffle.getOffset()), widen(shuffle.getWidth())})
              .getResult(0);
      Value read = arith::TruncIOp::create(b, l, b.getI32Type(), result);
      if (!valueType.isInteger(32))
        read = arith::BitcastOp::create(b, l, valueType, read);
      Value valid = arith::TruncIOp::create(
          b, l, b.getI1Type(), arith::ShRUIOp::create(b, l, result, i64(32)));
      shuffle.getShuffleResult().replaceAllUsesWith(read);
      shuffle.getValid().replaceAllUsesWith(valid);
      op->erase();
      continue;
    } else if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
      // The lane's fragments in private memory (allocated once, at the
      // function's entry: an alloca in a loop would grow the fiber's stack
      // every iteration), the hook's in-place D read back.
      std::optional<int64_t> shape = emulatedMmaShape(mma);
      if (!shape)
        return op->emitOpError("is not emulated"); // checkHostOp refused it
      // The largest shape's sizes (A 4, B 2, C 4 floats) for every shape:
      // one hook signature; a 16x8x4 mma leaves the tails unused.
      Type f32 = b.getF32Type();
      OpBuilder entry = OpBuilder::atBlockBegin(&fn.getBody().front());
      SmallVector<Value, 3> operands = {mma.getMatrixA(), mma.getMatrixB(),
                                        mma.getMatrixC()};
      SmallVector<Value, 3> fragments;
      for (int64_t size : {4, 2, 4})
        fragments.push_back(
            memref::AllocaOp::create(entry, l, MemRefType::get({size}, f32)));
      auto position = [](VectorType t, int64_t e) {
        return SmallVector<int64_t, 2>{e / t.getShape()[1],
                                       e % t.getShape()[1]};
      };
      for (auto [v, buffer] : llvm::zip(operands, fragments)) {
        auto t = cast<VectorType>(v.getType());
        for (int64_t e = 0; e < t.getNumElements(); ++e) {
          Value x = vector::ExtractOp::create(b, l, v, position(t, e));
          memref::StoreOp::create(b, l, x, buffer, ValueRange{index(e)});
        }
      }
      SmallVector<Type> types = {b.getI64Type(), b.getI64Type()};
      for (Value f : fragments)
        types.push_back(f.getType());
      func::FuncOp hook =
          sync.get(sync.mma, kMmaFn, FunctionType::get(ctx, types, {}), op);
      if (!hook)
        return failure();
      func::CallOp::create(b, l, hook,
                           ValueRange{i64(mmas++), i64(*shape), fragments[0],
                                      fragments[1], fragments[2]});
      auto resultType = cast<VectorType>(mma.getRes().getType());
      SmallVector<Value, 4> elements;
      for (int64_t e = 0; e < resultType.getNumElements(); ++e)
        elements.push_back(
            memref::LoadOp::create(b, l, fragments[2], ValueRange{index(e)}));
      replacement = vector::FromElementsOp::create(b, l, resultType, elements);
    } else if (auto ret = dyn_cast<gpu::ReturnOp>(op)) {
      func::ReturnOp::create(b, ret.getLoc(), ret.getOperands());
      ret.erase();
      continue;
    } else {
      return op->emitOpError("is not emulated"); // checkHostOp refused it
    }
    op->getResult(0).replaceAllUsesWith(replacement);
    op->erase();
  }
  numSyncs += barriers + shuffles + mmas;
  // Each workgroup attribution's alignment on the GPU: its llvm.align (the
  // NVVM lowering's shared array alignment) if a power of two, else what
  // its element's size guarantees (1 for index elements, whose size the
  // host does not fix).
  SmallVector<int64_t> workgroupAlign;
  for (unsigned k = 0; k < numWorkgroup; ++k) {
    auto align =
        dyn_cast_or_null<IntegerAttr>(kernel.getWorkgroupAttributionAttr(
            k, LLVM::LLVMDialect::getAlignAttrName()));
    Type element =
        cast<MemRefType>(inputs[kNumIdArgs + numBuffers + k]).getElementType();
    int64_t natural =
        element.isIntOrFloat()
            ? std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8)
            : 1;
    int64_t given = align ? align.getInt() : 0;
    workgroupAlign.push_back(given > 0 && llvm::isPowerOf2_64(given) ? given
                                                                     : natural);
  }
  kernel.erase();
  if (failed(expandAsyncCopies(fn, report, numBuffers, workgroupAlign, sync)))
    return failure();
  SmallVector<vector::LoadOp> vectorLoads;
  fn.getBody().walk([&](vector::LoadOp load) { vectorLoads.push_back(load); });
  for (vector::LoadOp load : vectorLoads)
    if (failed(expandVectorLoad(load, fn, report, numBuffers, workgroupAlign)))
      return failure();
  if (!boundsChecks)
    return success();
  SmallVector<Operation *> accesses;
  fn.getBody().walk([&](Operation *op) {
    if (isa<memref::LoadOp, memref::StoreOp>(op))
      accesses.push_back(op);
  });
  for (Operation *op : accesses) {
    if (failed(guardAccess(op, fn, report, numBuffers)))
      return failure();
    ++numChecked;
  }
  return success();
}

struct ConvertGpuKernelsToHostPass
    : public mlir::gpuopt::impl::ConvertGpuKernelsToHostPassBase<
          ConvertGpuKernelsToHostPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult launched = module.walk([](gpu::LaunchFuncOp launch) {
      launch.emitOpError("launches a kernel of the module: "
                         "--convert-gpu-kernels-to-host takes a copy of the "
                         "kernels that nothing launches");
      return WalkResult::interrupt();
    });
    if (launched.wasInterrupted())
      return signalPassFailure();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    func::FuncOp report;
    if (boundsChecks && !gpuModules.empty()) {
      if (Operation *clash = module.lookupSymbol(kReportFn)) {
        clash->emitOpError("has the name of the host emulation's bounds "
                           "check report function");
        return signalPassFailure();
      }
      report = createReportFunction(module, module.getLoc());
    }
    unsigned checkedAccesses = 0, syncPoints = 0;
    SyncFunctions sync{module};
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      OpBuilder builder(gpuModule);
      for (Operation &op :
           llvm::make_early_inc_range(gpuModule.getBody()->getOperations())) {
        if (auto kernel = dyn_cast<gpu::GPUFuncOp>(op)) {
          if (!kernel.isKernel()) {
            kernel.emitOpError("is not a kernel; the host emulation converts "
                               "kernels only");
            return signalPassFailure();
          }
          if (module.lookupSymbol(kernel.getName())) {
            kernel.emitOpError("has the name of a symbol of the module");
            return signalPassFailure();
          }
          if (failed(convertKernel(kernel, builder, report, sync,
                                   checkedAccesses, syncPoints)))
            return signalPassFailure();
          ++numKernels;
          continue;
        }
        if (auto global = dyn_cast<memref::GlobalOp>(op)) {
          if (!isHostType(global.getType())) {
            global.emitOpError("is in a non-default memory space, which the "
                               "host emulation does not provide");
            return signalPassFailure();
          }
          if (module.lookupSymbol(global.getSymName())) {
            global.emitOpError("has the name of a symbol of the module");
            return signalPassFailure();
          }
          global->moveBefore(gpuModule);
          continue;
        }
        op.emitOpError("in a gpu.module cannot run on the host emulation");
        return signalPassFailure();
      }
      gpuModule.erase();
    }
    numChecked += checkedAccesses;
    numSyncPoints += syncPoints;
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
