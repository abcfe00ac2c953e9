//===- VerifyLowerable.cpp - reject what the lowerings cannot compile -----===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The first pass of every lowering pipeline. One-Shot Bufferize recurses on a
// call cycle (a stack overflow or a spin for minutes), a call to a
// declaration links to nothing, and the lowerings and runtimes compute byte
// sizes in int64: each is a located error here instead.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/Seg/Transforms/Passes.h"

#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir {
namespace gpuopt {
namespace seg {
#define GEN_PASS_DEF_VERIFYLOWERABLEPASS
#include "gpuopt/Dialect/Seg/Transforms/Passes.h.inc"
} // namespace seg
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
using namespace mlir::gpuopt::seg;

namespace {

/// A resolved call: the op and the function it calls.
struct Call {
  CallOpInterface op;
  FunctionOpInterface callee;
};

std::string symbolOf(FunctionOpInterface fn) {
  return ("@" + fn.getName()).str();
}

struct VerifyLowerablePass
    : mlir::gpuopt::seg::impl::VerifyLowerablePassBase<VerifyLowerablePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool ok =
        succeeded(checkSizes(module)) && succeeded(checkPaddedInputs(module));
    SymbolTableCollection symbols;
    llvm::DenseMap<Operation *, SmallVector<Call>> calls;
    SmallVector<FunctionOpInterface> functions;
    module.walk([&](FunctionOpInterface fn) {
      functions.push_back(fn);
      SmallVector<Call> &out = calls[fn];
      fn->walk([&](CallOpInterface call) {
        ++numCalls;
        FailureOr<FunctionOpInterface> callee = resolve(call, symbols);
        if (failed(callee))
          ok = false;
        else
          out.push_back({call, *callee});
      });
    });
    if (failed(checkCycles(functions, calls)) || !ok)
      signalPassFailure();
  }

  /// The function `call` calls, or an error when it is not one with a body.
  static FailureOr<FunctionOpInterface>
  resolve(CallOpInterface call, SymbolTableCollection &symbols) {
    auto callee = dyn_cast<SymbolRefAttr>(call.getCallableForCallee());
    if (!callee)
      return call->emitOpError("is an indirect call; the lowerings compile "
                               "only direct calls of functions in the module");
    auto fn = dyn_cast_or_null<FunctionOpInterface>(
        call.resolveCallableInTable(&symbols));
    if (!fn)
      return call->emitOpError("calls ")
             << callee << ", which is not a function of the module";
    if (fn.isExternal())
      return call->emitOpError("calls ")
             << callee
             << ", which has no body; the lowerings compile only functions "
                "defined in the module";
    return fn;
  }

  /// Reports every call that closes a cycle of the call graph. Iterative
  /// depth-first search: a chain of thousands of calls must not overflow the
  /// stack here either.
  static LogicalResult
  checkCycles(ArrayRef<FunctionOpInterface> functions,
              const llvm::DenseMap<Operation *, SmallVector<Call>> &calls) {
    enum class State { New, OnPath, Done };
    llvm::DenseMap<Operation *, State> state;
    bool ok = true;
    for (FunctionOpInterface root : functions) {
      if (state.lookup(root) != State::New)
        continue;
      // The path from `root`: each function and the next of its calls.
      SmallVector<std::pair<FunctionOpInterface, size_t>> path = {{root, 0}};
      state[root] = State::OnPath;
      while (!path.empty()) {
        auto &[fn, next] = path.back();
        const SmallVector<Call> &out = calls.at(fn);
        if (next == out.size()) {
          state[fn] = State::Done;
          path.pop_back();
          continue;
        }
        const Call &call = out[next++];
        State calleeState = state.lookup(call.callee);
        if (calleeState == State::New) {
          state[call.callee] = State::OnPath;
          path.push_back({call.callee, 0});
        } else if (calleeState == State::OnPath) {
          std::string cycle;
          bool onCycle = false;
          for (auto &entry : path) {
            onCycle |= entry.first == call.callee;
            if (onCycle)
              cycle += symbolOf(entry.first) + " -> ";
          }
          cycle += symbolOf(call.callee);
          call.op->emitOpError("calls ")
              << symbolOf(call.callee) << " recursively (call cycle: " << cycle
              << "); the lowerings compile no recursion";
          ok = false;
        }
      }
    }
    return success(ok);
  }

  /// The linalg lowering copies the input of a convolution or a max-pool
  /// into a padded tensor of its own (lib/Conversion/SegToLinalg: convolve,
  /// MaxPool2dLowering, ConvTranspose2dLowering), whose dims it computes in
  /// int64: that tensor obeys the limit too. A padding of 2^62 with a stride
  /// of 2^63 - 1 verifies (the output is small). In 128 bits, where sums and
  /// products of two int64 values cannot overflow.
  static LogicalResult checkPaddedInputs(ModuleOp module) {
    using Wide = __int128;
    constexpr Wide kLimit = kMaxTensorBytes;
    bool ok = true;
    module.walk([&](Operation *op) {
      // The padded spatial dims (H, W) of the op's NCHW input.
      SmallVector<Wide, 2> padded;
      Value input;
      auto convDims = [&](auto conv) {
        input = conv.getInput();
        auto in = cast<RankedTensorType>(input.getType());
        for (int i = 0; i < 2; ++i)
          padded.push_back(Wide(in.getDimSize(2 + i)) +
                           2 * Wide(conv.getPadding()[i]));
      };
      if (auto conv = dyn_cast<Conv2dOp>(op)) {
        convDims(conv);
      } else if (auto fused = dyn_cast<FusedConv2dOp>(op)) {
        convDims(fused);
      } else if (auto pool = dyn_cast<MaxPool2dOp>(op)) {
        input = pool.getInput();
        auto in = cast<RankedTensorType>(input.getType());
        auto out = cast<RankedTensorType>(pool.getType());
        for (int i = 0; i < 2; ++i) {
          Wide h = in.getDimSize(2 + i), p = pool.getPadding()[i];
          Wide needed =
              Wide(out.getDimSize(2 + i) - 1) * pool.getStride()[i] +
              Wide(pool.getDilation()[i]) * (pool.getKernel()[i] - 1) + 1;
          padded.push_back(std::max(h + p, needed) + p);
        }
      } else if (auto convT = dyn_cast<ConvTranspose2dOp>(op)) {
        input = convT.getInput();
        auto in = cast<RankedTensorType>(input.getType());
        auto w = cast<RankedTensorType>(convT.getWeight().getType());
        for (int i = 0; i < 2; ++i) {
          // Upsampled by the stride, then padded by d (k - 1) - p on each
          // side (+ output_padding at the end); cropped where negative.
          Wide up = Wide(in.getDimSize(2 + i) - 1) * convT.getStride()[i] + 1;
          Wide edge = Wide(convT.getDilation()[i]) * (w.getDimSize(2 + i) - 1) -
                      convT.getPadding()[i];
          padded.push_back(
              up + std::max<Wide>(edge, 0) +
              std::max<Wide>(edge + convT.getOutputPadding()[i], 0));
        }
      } else {
        return;
      }
      auto in = cast<RankedTensorType>(input.getType());
      Wide bytes = Wide(in.getElementTypeBitWidth() / 8) * in.getDimSize(0) *
                   in.getDimSize(1);
      // Each factor is checked before the next multiplies it: no overflow.
      for (Wide dim : padded) {
        if (bytes == 0 || dim == 0) {
          bytes = 0;
          break;
        }
        if (dim > kLimit || bytes > kLimit)
          bytes = kLimit + 1;
        else
          bytes *= dim;
      }
      if (bytes <= kLimit)
        return;
      op->emitOpError("needs a padded copy of its input of more than ")
          << kMaxTensorBytes
          << " bytes (1 TiB), the limit per tensor (the lowering pads the "
             "input)";
      ok = false;
    });
    return success(ok);
  }

  /// Checks every tensor type in the module against kMaxTensorBytes:
  /// function signatures (declarations included), block arguments and
  /// results of every op, seg or not.
  static LogicalResult checkSizes(ModuleOp module) {
    bool ok = true;
    module.walk([&](Operation *op) {
      auto emit = [&] { return op->emitOpError(); };
      auto check = [&](Type type, const Twine &what) {
        if (failed(verifyTensorSize(type, what.str(), emit)))
          ok = false;
      };
      if (auto fn = dyn_cast<FunctionOpInterface>(op)) {
        for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes()))
          check(type, "argument #" + Twine(i));
        for (auto [i, type] : llvm::enumerate(fn.getResultTypes()))
          check(type, "result #" + Twine(i));
      } else {
        for (Region &region : op->getRegions())
          for (Block &block : region)
            for (BlockArgument arg : block.getArguments())
              check(arg.getType(),
                    "block argument #" + Twine(arg.getArgNumber()));
        for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
          check(type, "result #" + Twine(i));
      }
    });
    return success(ok);
  }
};

} // namespace
