//===- CudaTarget.cpp - compile a seg graph for NVIDIA GPUs ---------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Runs the NVPTX pipeline in two halves. Between them the host function is a
// straight sequence of memref.alloc and gpu.launch_func over root buffers
// (--convert-parallel-loops-to-kernels guarantees it); it becomes the launch
// plan: buffers placed in one arena (temporaries by liveness), the launches
// of @<entry>_init (--seg-split-load-time's initializer, run once at load)
// and those of @<entry> (per inference). A copy of the gpu.module is built
// for the host (CudaHostImage.h) for the CUDA emulator; the second half
// turns the gpu.module into a cubin or PTX image.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/Cuda/CudaTarget.h"
#include "CudaHostImage.h"
#include "gpuopt/Conversion/SegToCpuKernels/KernelCallRoutine.h"
#include "gpuopt/Dialect/Seg/IR/SegOps.h"
#include "gpuopt/Dialect/Seg/Transforms/LoadTime.h"

#include "gpuopt/Pipelines/GpuPipeline.h"
#include "gpuopt/Runtime/Artifact.h"
#include "gpuopt/Runtime/CudaArtifact.h"
#include "gpuopt/Runtime/CudaModel.h"
#include "gpuopt/Runtime/FileIO.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>

using namespace mlir;
using namespace mlir::gpuopt;
namespace rt = ::gpuopt::runtime;
namespace fb = ::gpuopt::artifact;

namespace {

struct Buffer {
  std::string kind;
  std::string name;
  MemRefType type;
  uint64_t bytes = 0;
  uint64_t offset = 0;
};

/// One memref operand of a Library step (CudaOperand of Artifact.fbs).
struct Operand {
  unsigned buffer = 0;
  int64_t offset = 0;
  SmallVector<int64_t> sizes, strides;
};

struct Step {
  /// A Library step calls `library` (a CpuKernelAbi.def routine) with
  /// `operands` and `scalars`; `kernel`, `grid` and `block` are unused.
  bool isLibrary = false;
  std::string library;
  SmallVector<Operand> operands;
  SmallVector<int64_t> scalars;
  unsigned kernel = 0;
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  SmallVector<unsigned> args;
  std::string loc;
  SmallVector<std::string> sources;
};

/// One parameter of a kernel: its dtype, byte size and access.
struct KernelArg {
  rt::DType dtype;
  uint64_t bytes;
  bool reads = false, writes = false;
};

struct Plan {
  std::vector<Buffer> buffers;
  std::vector<unsigned> inputs, outputs;
  std::vector<std::string> kernels;
  /// Per kernel, the dtype, byte size and access of each (memref)
  /// parameter: the runtime checks every launch against it.
  std::vector<SmallVector<KernelArg>> kernelArgs;
  std::vector<Step> init, run;
  uint64_t arenaBytes = 0;
};

uint64_t alignUp(uint64_t v) {
  return (v + rt::kCudaArenaAlignment - 1) / rt::kCudaArenaAlignment *
         rt::kCudaArenaAlignment;
}

/// The runtime's dtype of an element type, if it has one.
std::optional<rt::DType> toRuntimeDType(Type t) {
  if (t.isF32())
    return rt::DType::F32;
  if (t.isF16())
    return rt::DType::F16;
  if (t.isBF16())
    return rt::DType::BF16;
  if (t.isF64())
    return rt::DType::F64;
  if (t.isInteger(64))
    return rt::DType::I64;
  if (t.isInteger(32))
    return rt::DType::I32;
  if (t.isInteger(8))
    return rt::DType::I8;
  return std::nullopt;
}

/// The distinct file:line:col locations in `loc`, in walk order.
SmallVector<std::string> formatLocs(Location loc) {
  SmallVector<std::string> out;
  loc->walk([&](Location l) {
    if (auto flc = dyn_cast<FileLineColLoc>(l)) {
      std::string text = (flc.getFilename().getValue() + ":" +
                          Twine(flc.getLine()) + ":" + Twine(flc.getColumn()))
                             .str();
      if (!llvm::is_contained(out, text))
        out.push_back(std::move(text));
    }
    return WalkResult::advance();
  });
  return out;
}

std::string formatLoc(Location loc) {
  SmallVector<std::string> locs = formatLocs(loc);
  return locs.empty() ? std::string() : locs.front();
}

/// The loads and stores through kernel parameter `v` (or a view of it), and
/// whether any other use reads or writes it; `unknown` receives a use whose
/// access this cannot tell.
LogicalResult collectAccesses(Value v, SmallVectorImpl<memref::LoadOp> &loads,
                              SmallVectorImpl<memref::StoreOp> &stores,
                              bool &read, bool &write, Operation *&unknown) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (auto load = dyn_cast<memref::LoadOp>(user)) {
      loads.push_back(load);
    } else if (auto store = dyn_cast<memref::StoreOp>(user)) {
      stores.push_back(store); // a memref is never the stored value
    } else if (isa<vector::LoadOp>(user)) {
      read = true; // (the workgroup tiles' weight loads)
    } else if (auto copy = dyn_cast<memref::CopyOp>(user)) {
      (use.get() == copy.getSource() ? read : write) = true;
    } else if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(user)) {
      // (The workgroup tiles' cp.async; the destination is workgroup
      // memory, no parameter.)
      (use.get() == copy.getSrc() ? read : write) = true;
    } else if (isa<memref::AtomicRMWOp, memref::GenericAtomicRMWOp>(user)) {
      read = write = true;
    } else if (isa<memref::DimOp>(user)) {
      continue;
    } else if (isa<ViewLikeOpInterface, memref::CastOp>(user)) {
      for (Value r : user->getResults())
        if (failed(collectAccesses(r, loads, stores, read, write, unknown)))
          return failure();
    } else {
      unknown = user;
      return failure();
    }
  }
  return success();
}

/// Whether the kernel reads what kernel parameter `v` held before the launch
/// and whether it writes it. A load of an element the same thread stored
/// first (a store to the same view at the same indices that dominates it,
/// e.g. an accumulator's initial value) reads nothing from before.
LogicalResult classifyAccess(Value v, DominanceInfo &dom, bool &read,
                             bool &write, Operation *&unknown) {
  SmallVector<memref::LoadOp> loads;
  SmallVector<memref::StoreOp> stores;
  if (failed(collectAccesses(v, loads, stores, read, write, unknown)))
    return failure();
  write |= !stores.empty();
  for (memref::LoadOp load : loads) {
    bool ownValue = llvm::any_of(stores, [&](memref::StoreOp store) {
      return store.getMemRef() == load.getMemRef() &&
             llvm::equal(store.getIndices(), load.getIndices()) &&
             dom.properlyDominates(store.getOperation(), load.getOperation());
    });
    read |= !ownValue;
  }
  return success();
}

/// The static strided view `v` is of its root buffer: through casts (to
/// the first type with a static layout) and the views bufferization makes
/// (subviews, reshapes, transposes), which keep the root's base, so the
/// view's type gives its offset and strides in elements of the root.
/// Failure, with the reason in `why`, for anything else.
FailureOr<std::pair<Value, MemRefType>> getStaticView(Value v,
                                                      std::string &why) {
  auto isStatic = [](MemRefType t) {
    SmallVector<int64_t> strides;
    int64_t offset;
    return t.hasStaticShape() &&
           succeeded(t.getStridesAndOffset(strides, offset)) &&
           !ShapedType::isDynamic(offset) &&
           llvm::none_of(strides, ShapedType::isDynamic);
  };
  while (auto c = v.getDefiningOp<memref::CastOp>()) {
    if (isStatic(cast<MemRefType>(v.getType())))
      break;
    v = c.getSource();
  }
  auto type = cast<MemRefType>(v.getType());
  if (!isStatic(type)) {
    why = "has no static shape, offset and strides";
    return failure();
  }
  Value root = v;
  while (Operation *def = root.getDefiningOp()) {
    if (!isa<memref::CastOp, memref::SubViewOp, memref::CollapseShapeOp,
             memref::ExpandShapeOp, memref::TransposeOp>(def))
      break;
    root = def->getOperand(0);
  }
  return std::make_pair(root, type);
}

/// Builds the plan from the bufferized host functions of the split
/// (LoadTime.h): the launches of @<entry>_init are the load-time steps, those
/// of @<entry> the per-inference steps. `init` takes the parameters and its
/// `numDerived` results as out-parameters; `func` takes `numInputs` inputs
/// first, then parameters and the initializer's results (seg.derived), and
/// its `numOutputs` results last.
LogicalResult extractPlan(func::FuncOp init, func::FuncOp func,
                          unsigned numDerived, unsigned numInputs,
                          unsigned numOutputs, Plan &plan) {
  llvm::DenseMap<Value, unsigned> ids;
  auto addBuffer = [&](Value v, StringRef kind, StringRef name,
                       Operation *at) -> FailureOr<unsigned> {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity())
      return at->emitOpError("needs buffers of static shape and identity "
                             "layout in the CUDA launch plan, got ")
             << v.getType();
    std::optional<rt::DType> dtype = toRuntimeDType(type.getElementType());
    if (!dtype || (kind != "temp" && *dtype != rt::DType::F32))
      return at->emitOpError("has a ")
             << kind << " buffer of element type " << type.getElementType()
             << " that the CUDA runtime cannot bind";
    Buffer b;
    b.kind = kind.str();
    b.name = name.str();
    b.type = type;
    // The same limit as the seg verifiers' (a lowering may add buffers of
    // its own): within it, byte counts and their sums fit uint64.
    std::optional<int64_t> bytes = seg::getTensorBytes(
        RankedTensorType::get(type.getShape(), type.getElementType()));
    if (!bytes)
      return at->emitOpError("needs a buffer of type ")
             << type << ", which exceeds the limit of " << seg::kMaxTensorBytes
             << " bytes (1 TiB) per tensor";
    b.bytes = *bytes;
    ids[v] = plan.buffers.size();
    plan.buffers.push_back(b);
    return plan.buffers.size() - 1;
  };
  // One buffer per parameter name, shared by both functions; one per
  // result of the initializer, written by it and read by the forward.
  llvm::StringMap<unsigned> paramIds;
  SmallVector<unsigned> derivedIds;
  auto addArguments = [&](func::FuncOp fn, unsigned numIn,
                          unsigned numOut) -> LogicalResult {
    unsigned numArgs = fn.getNumArguments();
    if (numArgs < numIn + numOut)
      return fn.emitOpError("has ")
             << numArgs << " arguments after bufferization, expected at least "
             << numIn + numOut;
    bool isInit = fn == init;
    for (unsigned i = 0; i < numArgs; ++i) {
      Value arg = fn.getArgument(i);
      auto param = fn.getArgAttrOfType<StringAttr>(i, "seg.param");
      auto derived = fn.getArgAttrOfType<IntegerAttr>(i, seg::kDerivedAttrName);
      bool out = i >= numArgs - numOut;
      if (i < numIn || (out && !isInit)) {
        if (param || derived)
          return fn.emitOpError("argument ")
                 << i << " is expected to be an " << (out ? "output" : "input")
                 << " after bufferization";
        FailureOr<unsigned> id =
            addBuffer(arg, out ? "output" : "input", "", fn);
        if (failed(id))
          return failure();
        (out ? plan.outputs : plan.inputs).push_back(*id);
        continue;
      }
      if (out) {
        // A result of the initializer: persistent, relabelled below.
        FailureOr<unsigned> id = addBuffer(arg, "temp", "", fn);
        if (failed(id))
          return failure();
        derivedIds.push_back(*id);
        continue;
      }
      if (derived && !isInit) {
        int64_t index = derived.getInt();
        if (index < 0 || index >= static_cast<int64_t>(derivedIds.size()) ||
            plan.buffers[derivedIds[index]].type != arg.getType())
          return fn.emitOpError("argument ")
                 << i << " is seg.derived = " << index
                 << ", which does not name a result of @" << init.getSymName()
                 << " of type " << arg.getType();
        ids[arg] = derivedIds[index];
        continue;
      }
      if (!param)
        return fn.emitOpError("argument ")
               << i << " is expected to be a param after bufferization";
      auto [it, inserted] = paramIds.try_emplace(param.getValue(), 0);
      if (!inserted) {
        if (plan.buffers[it->second].type != arg.getType())
          return fn.emitOpError("parameter '")
                 << param.getValue() << "' is used with two types: "
                 << plan.buffers[it->second].type << " and " << arg.getType();
        ids[arg] = it->second;
        continue;
      }
      FailureOr<unsigned> id = addBuffer(arg, "param", param.getValue(), fn);
      if (failed(id))
        return failure();
      it->second = *id;
    }
    return success();
  };
  if (failed(addArguments(init, 0, numDerived)) ||
      failed(addArguments(func, numInputs, numOutputs)))
    return failure();

  // A call of a CpuKernelAbi.def routine: each memref operand a static view
  // of a plan buffer (none for an empty one), each integer a constant.
  auto getLibraryStep = [&](func::CallOp call,
                            rt::CpuKernel routine) -> FailureOr<Step> {
    const rt::CpuKernelSignature &sig = rt::getCpuKernelSignature(routine);
    StringRef name = StringRef(sig.name).drop_front(strlen("gpuopt_cpu_"));
    if (routine != rt::CpuKernel::conv2d &&
        routine != rt::CpuKernel::conv_transpose2d &&
        routine != rt::CpuKernel::linear)
      return call.emitOpError("calls '")
             << name
             << "', which the CUDA runtime's libraries do not provide "
                "(conv2d, conv_transpose2d and linear)";
    if (call.getNumOperands() != unsigned(sig.numArgs))
      return call.emitOpError("calls '")
             << name << "' with " << call.getNumOperands()
             << " arguments; the routine takes " << sig.numArgs;
    Step step;
    step.isLibrary = true;
    step.library = name.str();
    for (auto [index, value] : llvm::enumerate(call.getOperands())) {
      const rt::CpuKernelArg &arg = sig.args[index];
      auto bad = [&, index = index]() {
        return call.emitOpError("passes operand ")
               << index << " of library routine '" << name << "' as ";
      };
      if (arg.rank == 0) {
        std::optional<int64_t> c = getConstantIntValue(value);
        if (!c)
          return bad() << "a value the CUDA launch plan cannot express "
                          "(not a constant)";
        step.scalars.push_back(*c);
        continue;
      }
      std::string why;
      FailureOr<std::pair<Value, MemRefType>> view = getStaticView(value, why);
      if (failed(view))
        return bad() << "a view the CUDA launch plan cannot express: it "
                     << why;
      auto [root, type] = *view;
      Operand operand;
      operand.sizes.assign(type.getShape().begin(), type.getShape().end());
      if (type.getNumElements() == 0) {
        // Absent (an empty bias or shift): no buffer.
        operand.strides.assign(type.getRank(), 1);
        step.operands.push_back(std::move(operand));
        continue;
      }
      (void)type.getStridesAndOffset(operand.strides, operand.offset);
      auto found = ids.find(root);
      if (found == ids.end())
        return bad() << "a view the CUDA launch plan cannot express: it is "
                        "not a view of an argument or allocation of the "
                        "host function";
      operand.buffer = found->second;
      // The contract of Library steps (Artifact.fbs): packed weights, and
      // rows of unit stride for the matrix product.
      int64_t rank = type.getRank();
      if (index == 2) {
        int64_t expect = 1;
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (operand.sizes[d] != 1 && operand.strides[d] != expect)
            return bad() << "a view the CUDA launch plan cannot express: a "
                            "weight must be contiguous, got "
                         << type;
          expect *= operand.sizes[d];
        }
      } else if (name == "linear" && operand.sizes[rank - 1] != 1 &&
                 operand.strides[rank - 1] != 1) {
        return bad() << "a view the CUDA launch plan cannot express: its "
                        "rows must have unit stride, got "
                     << type;
      }
      step.operands.push_back(std::move(operand));
    }
    for (const Operand &o : step.operands)
      if (!llvm::is_contained(o.sizes, 0) &&
          !llvm::is_contained(step.args, o.buffer))
        step.args.push_back(o.buffer);
    step.loc = formatLoc(call.getLoc());
    step.sources = formatLocs(call.getLoc());
    return step;
  };

  llvm::StringMap<unsigned> kernelIds;
  auto addSteps = [&](func::FuncOp host,
                      std::vector<Step> &steps) -> LogicalResult {
    for (Operation &op : host.getBody().front()) {
      if (isa<arith::ConstantOp, memref::DeallocOp>(op))
        continue;
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        if (failed(addBuffer(alloc.getResult(), "temp", "", alloc)))
          return failure();
        continue;
      }
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        if (ret.getNumOperands() != 0)
          return ret.emitOpError("returns values; the CUDA launch plan needs "
                                 "results as out-parameters");
        continue;
      }
      // Views and constants of library calls' operands: read there.
      if (isa<memref::CastOp, ViewLikeOpInterface, memref::GetGlobalOp>(op))
        continue;
      if (auto call = dyn_cast<func::CallOp>(op)) {
        std::optional<rt::CpuKernel> routine = getKernelCallRoutine(call);
        if (!routine)
          return op.emitOpError("cannot be expressed in the CUDA launch plan "
                                "(only buffer allocations, kernel launches "
                                "and library calls run on the host)");
        FailureOr<Step> step = getLibraryStep(call, *routine);
        if (failed(step))
          return failure();
        steps.push_back(std::move(*step));
        continue;
      }
      auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
      if (!launch)
        return op.emitOpError("cannot be expressed in the CUDA launch plan "
                              "(only buffer allocations, kernel launches "
                              "and library calls run on the host)");
      Step step;
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      Value dims[6] = {grid.x, grid.y, grid.z, block.x, block.y, block.z};
      for (int d = 0; d < 6; ++d) {
        std::optional<int64_t> c = getConstantIntValue(dims[d]);
        if (!c || *c < 1)
          return launch.emitOpError("needs constant positive grid and block "
                                    "sizes in the CUDA launch plan");
        (d < 3 ? step.grid[d] : step.block[d - 3]) = *c;
      }
      if (launch.getDynamicSharedMemorySize() || launch.getAsyncToken() ||
          launch.hasClusterSize())
        return launch.emitOpError("uses dynamic shared memory, clusters or "
                                  "async tokens, which the CUDA launch plan "
                                  "does not express");
      auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (!kernel)
        return launch.emitOpError("launches an unknown kernel");
      StringRef name = launch.getKernelName().getValue();
      auto [it, inserted] = kernelIds.try_emplace(name, plan.kernels.size());
      if (inserted) {
        plan.kernels.push_back(name.str());
        auto &signature = plan.kernelArgs.emplace_back();
        DominanceInfo dom(kernel);
        for (auto [index, t] : llvm::enumerate(kernel.getArgumentTypes())) {
          auto type = dyn_cast<MemRefType>(t);
          std::optional<rt::DType> dtype =
              type ? toRuntimeDType(type.getElementType()) : std::nullopt;
          if (!type || !type.hasStaticShape() || !dtype)
            return launch.emitOpError("launches a kernel with a parameter of "
                                      "type ")
                   << t << ", which the CUDA launch plan cannot pass";
          KernelArg arg{
              *dtype, static_cast<uint64_t>(type.getNumElements() *
                                            type.getElementTypeBitWidth() / 8)};
          // The runtime's plan checks (and in_place) need the access.
          Operation *unknown = nullptr;
          if (failed(classifyAccess(kernel.getArgument(index), dom, arg.reads,
                                    arg.writes, unknown)))
            return unknown->emitOpError("uses parameter ")
                   << index << " of kernel '" << name
                   << "'; the CUDA launch plan records each parameter's "
                      "reads and writes, and cannot tell them for this op";
          signature.push_back(arg);
        }
      }
      step.kernel = it->second;
      for (auto [index, operand] :
           llvm::enumerate(launch.getKernelOperands())) {
        auto found = ids.find(operand);
        if (found == ids.end())
          return launch.emitOpError("kernel operand ")
                 << index
                 << " is not an argument or allocation of the host function";
        step.args.push_back(found->second);
      }
      step.loc = formatLoc(launch.getLoc());
      // The launch's location also holds its kernel body's, also after the
      // kernel was merged with an identical one (--deduplicate-gpu-kernels).
      step.sources = formatLocs(launch.getLoc());
      steps.push_back(std::move(step));
    }
    return success();
  };
  // Every buffer the initializer writes is persistent ("constant"): its
  // allocations and its results.
  size_t numBeforeInit = plan.buffers.size();
  if (failed(addSteps(init, plan.init)))
    return failure();
  for (size_t id = numBeforeInit; id < plan.buffers.size(); ++id)
    plan.buffers[id].kind = "constant";
  for (unsigned id : derivedIds)
    plan.buffers[id].kind = "constant";
  if (failed(addSteps(func, plan.run)))
    return failure();

  // Persistent buffers first, then temporaries by liveness over the run
  // steps: a temporary takes the best-fitting free gap when first used and
  // returns it after its last use.
  // One device allocation holds every buffer: it obeys the per-tensor limit.
  // Checked after each step, so that no sum of sizes can wrap.
  auto arenaTooLarge = [&](uint64_t bytes) {
    if (bytes <= static_cast<uint64_t>(seg::kMaxTensorBytes))
      return false;
    func.emitOpError("needs a CUDA arena of more than ")
        << seg::kMaxTensorBytes << " bytes (1 TiB), the limit per allocation";
    return true;
  };
  uint64_t top = 0;
  for (Buffer &b : plan.buffers)
    if (b.kind != "temp") {
      b.offset = top;
      top = alignUp(top + std::max<uint64_t>(b.bytes, 1));
      if (arenaTooLarge(top))
        return failure();
    }
  std::vector<int64_t> first(plan.buffers.size(), -1),
      last(plan.buffers.size(), -1);
  for (auto [index, s] : llvm::enumerate(plan.run))
    for (unsigned id : s.args) {
      if (first[id] < 0)
        first[id] = index;
      last[id] = index;
    }
  std::map<uint64_t, uint64_t> freeGaps; // offset -> size, above `top`
  uint64_t end = top;
  auto release = [&](uint64_t off, uint64_t size) {
    auto next = freeGaps.lower_bound(off);
    if (next != freeGaps.end() && off + size == next->first) {
      size += next->second;
      next = freeGaps.erase(next);
    }
    if (next != freeGaps.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == off) {
        prev->second += size;
        return;
      }
    }
    freeGaps[off] = size;
  };
  for (size_t index = 0; index < plan.run.size(); ++index) {
    for (unsigned id : plan.run[index].args) {
      Buffer &b = plan.buffers[id];
      if (b.kind != "temp" || first[id] != static_cast<int64_t>(index))
        continue;
      first[id] = -2; // placed
      uint64_t size = alignUp(std::max<uint64_t>(b.bytes, 1));
      auto best = freeGaps.end();
      for (auto g = freeGaps.begin(); g != freeGaps.end(); ++g)
        if (g->second >= size &&
            (best == freeGaps.end() || g->second < best->second))
          best = g;
      if (best != freeGaps.end()) {
        b.offset = best->first;
        uint64_t rest = best->second - size;
        uint64_t restOff = best->first + size;
        freeGaps.erase(best);
        if (rest)
          freeGaps[restOff] = rest;
      } else {
        b.offset = end;
        end += size;
        if (arenaTooLarge(end))
          return failure();
      }
    }
    for (unsigned id : plan.run[index].args) {
      Buffer &b = plan.buffers[id];
      if (b.kind == "temp" && last[id] == static_cast<int64_t>(index)) {
        last[id] = -2; // released once
        release(b.offset, alignUp(std::max<uint64_t>(b.bytes, 1)));
      }
    }
  }
  plan.arenaBytes = std::max<uint64_t>(end, rt::kCudaArenaAlignment);
  return success();
}

/// One kernel object of the artifact.
struct Image {
  std::string chip;
  fb::ImageFormat format;
  std::string bytes;
};

std::unique_ptr<fb::TensorTypeT> tensorType(MemRefType type) {
  auto t = std::make_unique<fb::TensorTypeT>();
  t->dtype = rt::toArtifactDType(*toRuntimeDType(type.getElementType()));
  t->shape.assign(type.getShape().begin(), type.getShape().end());
  return t;
}

fb::BufferKind bufferKind(StringRef kind) {
  return llvm::StringSwitch<fb::BufferKind>(kind)
      .Case("input", fb::BufferKind::Input)
      .Case("output", fb::BufferKind::Output)
      .Case("param", fb::BufferKind::Param)
      .Case("constant", fb::BufferKind::Constant)
      .Default(fb::BufferKind::Temp);
}

/// The artifact (Artifact.fbs, program CudaProgram) of the plan and images.
fb::ModelT planToArtifact(const Plan &plan, const CudaCompileOptions &options,
                          ArrayRef<Image> images) {
  fb::ModelT model;
  model.version = rt::kArtifactVersion;
  model.entry = options.entry;
  auto program = std::make_unique<fb::CudaProgramT>();
  for (const Image &image : images) {
    auto im = std::make_unique<fb::CudaImageT>();
    im->chip = image.chip;
    im->format = image.format;
    im->data.assign(image.bytes.begin(), image.bytes.end());
    program->images.push_back(std::move(im));
  }
  program->arena_bytes = plan.arenaBytes;
  for (const Buffer &b : plan.buffers) {
    auto buf = std::make_unique<fb::CudaBufferT>();
    buf->kind = bufferKind(b.kind);
    buf->name = b.name;
    buf->type = tensorType(b.type);
    buf->bytes = b.bytes;
    buf->offset = b.offset;
    program->buffers.push_back(std::move(buf));
    if (b.kind == "param") {
      auto param = std::make_unique<fb::ParamT>();
      param->name = b.name;
      param->type = tensorType(b.type);
      model.params.push_back(std::move(param));
    }
  }
  program->inputs.assign(plan.inputs.begin(), plan.inputs.end());
  program->outputs.assign(plan.outputs.begin(), plan.outputs.end());
  for (unsigned id : plan.inputs)
    model.inputs.push_back(tensorType(plan.buffers[id].type));
  for (unsigned id : plan.outputs)
    model.outputs.push_back(tensorType(plan.buffers[id].type));
  for (auto [name, signature] :
       llvm::zip_equal(plan.kernels, plan.kernelArgs)) {
    auto kernel = std::make_unique<fb::CudaKernelT>();
    kernel->name = name;
    for (const KernelArg &a : signature) {
      auto arg = std::make_unique<fb::KernelArgT>();
      arg->dtype = rt::toArtifactDType(a.dtype);
      arg->bytes = a.bytes;
      arg->in_place = a.reads && a.writes;
      arg->reads = a.reads;
      arg->writes = a.writes;
      kernel->args.push_back(std::move(arg));
    }
    program->kernels.push_back(std::move(kernel));
  }
  auto steps = [](const std::vector<Step> &list,
                  std::vector<std::unique_ptr<fb::CudaStepT>> &out) {
    for (const Step &s : list) {
      auto step = std::make_unique<fb::CudaStepT>();
      if (s.isLibrary) {
        step->kind = fb::StepKind::Library;
        step->library = s.library;
        for (const Operand &o : s.operands) {
          auto operand = std::make_unique<fb::CudaOperandT>();
          operand->buffer = o.buffer;
          operand->offset = o.offset;
          operand->sizes.assign(o.sizes.begin(), o.sizes.end());
          operand->strides.assign(o.strides.begin(), o.strides.end());
          step->operands.push_back(std::move(operand));
        }
        step->scalars.assign(s.scalars.begin(), s.scalars.end());
        step->grid = std::make_unique<fb::Dim3>(1, 1, 1);
        step->block = std::make_unique<fb::Dim3>(1, 1, 1);
        step->args.assign(s.args.begin(), s.args.end());
        step->loc = s.loc;
        step->sources.assign(s.sources.begin(), s.sources.end());
        out.push_back(std::move(step));
        continue;
      }
      step->kind = fb::StepKind::Kernel;
      step->kernel = s.kernel;
      step->grid = std::make_unique<fb::Dim3>(s.grid[0], s.grid[1], s.grid[2]);
      step->block =
          std::make_unique<fb::Dim3>(s.block[0], s.block[1], s.block[2]);
      step->args.assign(s.args.begin(), s.args.end());
      step->loc = s.loc;
      step->sources.assign(s.sources.begin(), s.sources.end());
      out.push_back(std::move(step));
    }
  };
  steps(plan.init, program->init);
  steps(plan.run, program->run);
  program->precision = options.target.precision == "tf32" ? fb::Precision::TF32
                                                          : fb::Precision::FP32;
  model.program.Set(std::move(*program));
  return model;
}

} // namespace

LogicalResult mlir::gpuopt::compileForCuda(ModuleOp module,
                                           const CudaCompileOptions &options) {
  MLIRContext *ctx = module.getContext();
  const CudaTargetOptions &target = options.target;
  const CudaImageFormat *format =
      llvm::find_if(kCudaImageFormats, [&](const CudaImageFormat &f) {
        return target.format == f.format;
      });
  if (format == std::end(kCudaImageFormats))
    return module.emitError("unknown CUDA object format '")
           << target.format << "' (expected bin, isa or fatbin)";
  if (std::string error; failed(parseCudaChips(target.chip, error)))
    return module.emitError("CUDA chip ") << error;
  if (std::string error;
      failed(checkGpuConvOptions(target, /*deviceGiven=*/false, "", error)))
    return module.emitError("CUDA ") << error;
  if (target.blockSize < 1 || target.blockSize > 1024)
    return module.emitError("CUDA block size must be in [1, 1024], got ")
           << target.blockSize;
  if (!options.pipeline.empty()) {
    PassManager pm(ctx);
    std::string error;
    llvm::raw_string_ostream es(error);
    if (failed(parsePassPipeline(options.pipeline, pm, es)))
      return module.emitError("invalid pipeline '")
             << options.pipeline << "': " << error;
    if (failed(pm.run(module)))
      return failure();
  }
  auto entry = module.lookupSymbol<func::FuncOp>(options.entry);
  if (!entry || entry.isExternal())
    return module.emitError("no function '")
           << options.entry << "' with a body to compile";
  unsigned numInputs = entry.getNumArguments();
  unsigned numOutputs = entry.getNumResults();
  // The load-time work (LoadTime.h) moves into @<entry>_init: its launches
  // are the artifact's init steps.
  FailureOr<seg::SplitLoadTimeResult> split =
      seg::splitLoadTime(module, options.entry);
  if (failed(split))
    return failure();
  std::string initName = split->init.getSymName().str();
  unsigned numDerived = split->numDerived;

  {
    PassManager pm(ctx);
    // Verified once at the end, not after every pass: the GPU dialect's
    // verifier looks up each launch's kernel by a linear scan, quadratic
    // while the outlined kernels are not deduplicated yet (nearly all of a
    // 10^5-op compile, found with gdb).
    pm.enableVerifier(false);
    if (failed(buildGpuKernelPipeline(pm, target)))
      return module.emitError("cannot build the GPU kernel pipeline");
    if (failed(pm.run(module)) || failed(verify(module)))
      return failure();
  }
  Plan plan;
  entry = module.lookupSymbol<func::FuncOp>(options.entry);
  auto init = module.lookupSymbol<func::FuncOp>(initName);
  if (!entry || !init)
    return module.emitError("the GPU kernel pipeline removed @")
           << (entry ? initName : options.entry);
  if (failed(extractPlan(init, entry, numDerived, numInputs, numOutputs, plan)))
    return failure();
  // From the IR the PTX is made of: after outlining, before NVVM.
  std::optional<Image> hostImage;
  if (options.hostImage && !plan.kernels.empty()) {
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>("kernels");
    if (!kernels)
      return module.emitError("the GPU kernel pipeline produced no "
                              "gpu.module @kernels");
    if (!options.writeKernels.empty()) {
      std::error_code ec;
      llvm::raw_fd_ostream os(options.writeKernels, ec);
      if (ec)
        return module.emitError("cannot write the kernels to ")
               << options.writeKernels << ": " << ec.message();
      kernels->print(os);
      os << "\n";
    }
    OwningOpRef<ModuleOp> edited;
    if (!options.hostKernels.empty()) {
      // As every MLIR input: a regular file within the read limit.
      std::string text;
      if (rt::Status s = rt::readMlirSource(options.hostKernels, text); !s)
        return module.emitError("cannot read the host kernels: ")
               << s.message();
      edited = parseSourceString<ModuleOp>(text, ParserConfig(ctx),
                                           options.hostKernels);
      if (!edited)
        return module.emitError("cannot read the host kernels of ")
               << options.hostKernels;
      auto replacement = edited->lookupSymbol<gpu::GPUModuleOp>("kernels");
      if (!replacement)
        return module.emitError("")
               << options.hostKernels << " holds no gpu.module @kernels";
      // The plan launches them with the compiled kernels' arguments.
      for (const std::string &name : plan.kernels) {
        auto compiled = kernels.lookupSymbol<gpu::GPUFuncOp>(name);
        auto given = replacement.lookupSymbol<gpu::GPUFuncOp>(name);
        if (!given)
          return replacement.emitOpError("has no kernel @")
                 << name << ", which the plan launches";
        if (compiled && given.getFunctionType() != compiled.getFunctionType())
          return given.emitOpError("has type ")
                 << given.getFunctionType() << ", but the plan launches @"
                 << name << " as " << compiled.getFunctionType();
      }
      kernels = replacement;
    }
    std::string chip;
    FailureOr<std::string> so = buildCudaHostImage(kernels, plan.kernels, chip);
    if (failed(so))
      return failure();
    hostImage = Image{chip, fb::ImageFormat::HostSo, std::move(*so)};
  }
  {
    PassManager pm(ctx);
    if (std::string error;
        failed(buildGpuBinaryPipeline(pm, target, /*serialize=*/true, error)))
      return module.emitError("cannot build the GPU binary pipeline: ")
             << error;
    if (failed(pm.run(module)))
      return failure();
  }

  SmallVector<Image> images;
  fb::ImageFormat imageFormat =
      llvm::StringSwitch<fb::ImageFormat>(format->image)
          .Case("cubin", fb::ImageFormat::Cubin)
          .Case("ptx", fb::ImageFormat::Ptx)
          .Default(fb::ImageFormat::Fatbin);
  uint64_t imageBytes = 0;
  if (!plan.kernels.empty()) {
    auto binary = module.lookupSymbol<gpu::BinaryOp>("kernels");
    if (!binary || binary.getObjects().empty())
      return module.emitError("the GPU pipeline produced no kernel image");
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      auto nvvmTarget = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
      if (!nvvmTarget)
        return binary.emitOpError("holds an object for a non-NVVM target");
      StringRef bytes = object.getObject().getValue();
      // The schema's PTX has no terminating NUL (the reader adds one).
      if (imageFormat == fb::ImageFormat::Ptx)
        bytes = bytes.rtrim('\0');
      images.push_back({nvvmTarget.getChip().str(), imageFormat, bytes.str()});
      imageBytes += bytes.size();
    }
  }
  if (hostImage) {
    imageBytes += hostImage->bytes.size();
    images.push_back(std::move(*hostImage));
  }
  // A FlatBuffer addresses at most 2 GiB and the runtime reads at most
  // kMaxCudaArtifactBytes: a plan and images that cannot fit are refused
  // before building (an upper bound of the bytes each table takes).
  uint64_t estimate = imageBytes + 1024 * (images.size() + 1);
  for (const Buffer &b : plan.buffers)
    estimate += 2 * (96 + 8 * b.type.getRank() + b.name.size());
  for (const auto &[name, signature] :
       llvm::zip_equal(plan.kernels, plan.kernelArgs))
    estimate += 64 + name.size() + 48 * signature.size();
  for (const std::vector<Step> *steps : {&plan.init, &plan.run})
    for (const Step &s : *steps) {
      estimate += 96 + 4 * s.args.size() + s.loc.size() + s.library.size() +
                  8 * s.scalars.size();
      for (const Operand &o : s.operands)
        estimate += 48 + 16 * o.sizes.size();
      for (const std::string &source : s.sources)
        estimate += 8 + source.size();
    }
  if (estimate > rt::kMaxCudaArtifactBytes)
    return module.emitError("the CUDA artifact would take up to ")
           << estimate << " bytes (" << imageBytes
           << " of kernel images), more than the limit of "
           << rt::kMaxCudaArtifactBytes << " bytes the runtime reads";
  fb::ModelT model = planToArtifact(plan, options, images);
  images.clear();
  // Every field is stored, defaults too: --dump then shows each of them.
  std::vector<uint8_t> bytes = rt::packArtifact(model);
  if (bytes.size() > rt::kMaxCudaArtifactBytes)
    return module.emitError("the CUDA artifact takes ")
           << bytes.size() << " bytes, more than the limit of "
           << rt::kMaxCudaArtifactBytes << " bytes the runtime reads";
  if (rt::Status s =
          rt::writeFileBytes(options.outputPath, bytes.data(), bytes.size());
      !s)
    return module.emitError(s.message());
  return success();
}
