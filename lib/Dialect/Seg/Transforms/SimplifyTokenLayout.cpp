//===- SimplifyTokenLayout.cpp - cancel NCHW <-> token switches -----------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Layout changes (seg.reshape, seg.permute) are pushed towards the results
// through elementwise ops and single-axis LayerNorms, token linears become
// 1×1 convolutions, and the permute/reshape folders cancel the round trips
// that meet.
//
//===----------------------------------------------------------------------===//

#include "TokenLayout.h"
#include "gpuopt/Dialect/Seg/Transforms/Passes.h"
#include "gpuopt/Dialect/Seg/Transforms/Transforms.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace gpuopt {
namespace seg {
#define GEN_PASS_DEF_SIMPLIFYTOKENLAYOUTPASS
#include "gpuopt/Dialect/Seg/Transforms/Passes.h.inc"
} // namespace seg
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
using namespace mlir::gpuopt::seg;

namespace {

bool isLayoutOp(Operation *op) {
  return isa_and_nonnull<ReshapeOp, PermuteOp>(op);
}

/// Re-creates the layout op `layout` on `value`; the result keeps the
/// element type of `value`.
Value applyLayout(Operation *layout, Value value, PatternRewriter &rewriter) {
  IRMapping mapping;
  mapping.map(layout->getOperand(0), value);
  return rewriter.clone(*layout, mapping)->getResult(0);
}

/// unary(L(x)) -> L(unary(x)) for a layout op L used only here.
template <typename OpTy> struct UnaryBelowLayout : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Operation *layout = op.getInput().getDefiningOp();
    if (!isLayoutOp(layout) || !layout->hasOneUse())
      return rewriter.notifyMatchFailure(op,
                                         "input is not a one-use layout op");
    Operation *moved = rewriter.clone(*op.getOperation());
    moved->setOperand(0, layout->getOperand(0));
    moved->getResult(0).setType(layout->getOperand(0).getType());
    rewriter.replaceOp(op, applyLayout(layout, moved->getResult(0), rewriter));
    return success();
  }
};

/// A reshape after a permute, done first: `shape` for the reshape of the
/// permute's input and `dims` for the permute after it.
struct SwappedLayout {
  SmallVector<int64_t> shape, dims;
};

/// reshape(permute(x, dims) : mid -> out) as permute(reshape(x)) when the
/// reshape only splits dims of `mid` (each into a run of `out` dims), or
/// nullopt.
std::optional<SwappedLayout> swapSplit(ArrayRef<int64_t> dims,
                                       ArrayRef<int64_t> mid,
                                       ArrayRef<int64_t> out) {
  if (llvm::is_contained(mid, 0) || out.size() <= mid.size())
    return std::nullopt;
  // The run of result dims each permuted dim splits into.
  SmallVector<SmallVector<int64_t>> pieces(mid.size());
  size_t next = 0;
  for (auto [i, size] : llvm::enumerate(mid)) {
    int64_t product = 1;
    do {
      if (next == out.size())
        return std::nullopt;
      product *= out[next];
      pieces[i].push_back(out[next++]);
    } while (product < size);
    if (product != size)
      return std::nullopt;
  }
  if (next != out.size())
    return std::nullopt;
  // Dim d of x is the permuted dim i with dims[i] == d.
  SmallVector<int64_t> of(dims.size()), first(dims.size());
  for (auto [i, d] : llvm::enumerate(dims))
    of[d] = i;
  SwappedLayout swapped;
  for (auto [d, i] : llvm::enumerate(of)) {
    first[d] = swapped.shape.size();
    llvm::append_range(swapped.shape, pieces[i]);
  }
  for (auto [i, d] : llvm::enumerate(dims))
    for (size_t k = 0; k < pieces[i].size(); ++k)
      swapped.dims.push_back(first[d] + k);
  return swapped;
}

/// Whether a permute `dims` producing `v`'s type, inserted before `v`'s
/// users, would meet another permute and compose with it: `v`'s only user is
/// a permute, or a splitting reshape (which swaps with it) used only by one.
bool composesBelow(Value v, ArrayRef<int64_t> dims) {
  if (!v.hasOneUse())
    return false;
  Operation *user = *v.getUsers().begin();
  if (isa<PermuteOp>(user))
    return true;
  auto reshape = dyn_cast<ReshapeOp>(user);
  if (!reshape || !reshape->hasOneUse() ||
      !isa<PermuteOp>(*reshape->getUsers().begin()))
    return false;
  return swapSplit(dims, cast<RankedTensorType>(v.getType()).getShape(),
                   reshape.getType().getShape())
      .has_value();
}

/// reshape(permute(x)) -> permute'(reshape'(x)) when the reshape only splits
/// dims: reshape' splits the same dims of x, permute' moves the pieces. The
/// permute moves on towards the results, where it can meet its inverse
/// (tokens (N, H·W, C) -> (N, H, W, C) -> NCHW is the flatten-transpose
/// undone).
struct ReshapeAbovePermute : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto permute = op.getInput().getDefiningOp<PermuteOp>();
    if (!permute)
      return rewriter.notifyMatchFailure(op, "input is not a permute");
    // With other users the permute stays for them; the moved one must then
    // compose with a permute after the reshape, or it would be one more.
    if (!permute->hasOneUse() &&
        !(op->hasOneUse() && isa<PermuteOp>(*op->getUsers().begin())))
      return rewriter.notifyMatchFailure(
          op, "the permute has other users and nothing to compose with");
    std::optional<SwappedLayout> swapped =
        swapSplit(permute.getDims(), permute.getType().getShape(),
                  op.getType().getShape());
    if (!swapped)
      return rewriter.notifyMatchFailure(op, "not a split of dims");
    Value split = ReshapeOp::create(
        rewriter, op.getLoc(),
        RankedTensorType::get(swapped->shape, op.getType().getElementType()),
        permute.getInput());
    rewriter.replaceOpWithNewOp<PermuteOp>(op, split, swapped->dims);
    return success();
  }
};

/// layer_norm(L(x)) over one axis -> L(layer_norm(x)) over the axis of x
/// that L moves there, for a layout op L that keeps it whole: a LayerNorm
/// over tokens' channels becomes one over the NCHW map's. L must be used only
/// here, be a reshape (a view: a copy of it costs nothing), or be a permute
/// that composes with one below the LayerNorm (UNeXt's tokens feed both the
/// LayerNorm and the residual add).
struct LayerNormBelowLayout : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Operation *layout = op.getInput().getDefiningOp();
    if (!isLayoutOp(layout))
      return rewriter.notifyMatchFailure(op, "input is not a layout op");
    auto permute = dyn_cast<PermuteOp>(layout);
    if (permute && !permute->hasOneUse() &&
        !composesBelow(op.getResult(), permute.getDims()))
      return rewriter.notifyMatchFailure(
          op, "the permute has other users and would not compose below");
    auto type = cast<RankedTensorType>(op.getType());
    int64_t axis = type.getRank() - 1;
    if (std::optional<uint64_t> attr = op.getAxis())
      axis = static_cast<int64_t>(*attr);
    else if (cast<RankedTensorType>(op.getWeight().getType()).getRank() != 1)
      return rewriter.notifyMatchFailure(op, "normalizes over several dims");
    Value source = layout->getOperand(0);
    auto sourceType = cast<RankedTensorType>(source.getType());
    std::optional<int64_t> sourceAxis;
    if (permute)
      sourceAxis = permute.getDims()[axis];
    else
      sourceAxis = reshapedAxis(type.getShape(), sourceType.getShape(), axis);
    if (!sourceAxis)
      return rewriter.notifyMatchFailure(
          op, "the reshape splits the normalized dim");
    // The trailing form is the canonical spelling of a last-axis LayerNorm.
    IntegerAttr axisAttr;
    if (*sourceAxis != sourceType.getRank() - 1)
      axisAttr = rewriter.getI64IntegerAttr(*sourceAxis);
    Value moved =
        LayerNormOp::create(rewriter, op.getLoc(), source, op.getWeight(),
                            op.getBias(), axisAttr, op.getEpsilonAttr());
    rewriter.replaceOp(op, applyLayout(layout, moved, rewriter));
    return success();
  }
};

/// Whether `a` and `b` are the same layout change of same-typed values.
bool sameLayout(Operation *a, Operation *b) {
  if (!isLayoutOp(a) || !isLayoutOp(b) || a->getName() != b->getName() ||
      a->getOperand(0).getType() != b->getOperand(0).getType() ||
      a->getResult(0).getType() != b->getResult(0).getType())
    return false;
  return a->getPropertiesAsAttribute() == b->getPropertiesAsAttribute();
}

/// binary(L(a), L(b)) -> L(binary(a, b)) when both operands have the same
/// layout change (no broadcasting involved).
template <typename OpTy> struct BinaryBelowLayout : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Operation *lhs = op.getLhs().getDefiningOp();
    Operation *rhs = op.getRhs().getDefiningOp();
    if (!lhs || !rhs || !sameLayout(lhs, rhs))
      return rewriter.notifyMatchFailure(op, "operands differ in layout");
    if (!lhs->hasOneUse() && !(lhs == rhs && op.getLhs() == op.getRhs()))
      return rewriter.notifyMatchFailure(op, "layout op has other uses");
    Value inner = OpTy::create(rewriter, op.getLoc(), lhs->getOperand(0),
                               rhs->getOperand(0));
    rewriter.replaceOp(op, applyLayout(lhs, inner, rewriter));
    return success();
  }
};

/// concat(L(a), L(b), ...) -> L'(concat(a, b, ...)) when every operand is
/// the same kind of one-use layout op, applied alike: the same permute, or
/// reshapes that keep the concat axis whole at the same dim of same-shaped
/// (but along it) inputs. Rolling-UNet concatenates tokens of NCHW maps.
struct ConcatBelowLayout : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    auto axis = static_cast<int64_t>(op.getDim());
    Operation *first = op.getInputs().front().getDefiningOp();
    if (!isLayoutOp(first))
      return rewriter.notifyMatchFailure(op, "operands are not layout ops");
    SmallVector<Value> sources;
    std::optional<int64_t> sourceAxis;
    for (Value input : op.getInputs()) {
      Operation *layout = input.getDefiningOp();
      if (!layout || layout->getName() != first->getName() ||
          !layout->hasOneUse())
        return rewriter.notifyMatchFailure(
            op, "operands are not one-use layout ops of one kind");
      Value source = layout->getOperand(0);
      auto sourceType = cast<RankedTensorType>(source.getType());
      std::optional<int64_t> inner;
      if (auto permute = dyn_cast<PermuteOp>(layout)) {
        if (permute.getDims() != cast<PermuteOp>(first).getDims())
          return rewriter.notifyMatchFailure(op, "different permutes");
        inner = permute.getDims()[axis];
      } else {
        inner = reshapedAxis(cast<RankedTensorType>(input.getType()).getShape(),
                             sourceType.getShape(), axis);
      }
      if (!inner || (sourceAxis && *inner != *sourceAxis))
        return rewriter.notifyMatchFailure(
            op, "the layout ops move the concat axis differently");
      sourceAxis = inner;
      if (!sources.empty()) {
        auto firstType = cast<RankedTensorType>(sources.front().getType());
        for (int64_t d = 0; d < sourceType.getRank(); ++d)
          if (d != *sourceAxis &&
              (firstType.getRank() != sourceType.getRank() ||
               firstType.getDimSize(d) != sourceType.getDimSize(d)))
            return rewriter.notifyMatchFailure(
                op, "the layout ops' inputs differ off the concat axis");
      }
      sources.push_back(source);
    }
    Value inner = ConcatOp::create(rewriter, op.getLoc(), sources,
                                   static_cast<uint64_t>(*sourceAxis));
    if (auto permute = dyn_cast<PermuteOp>(first))
      rewriter.replaceOpWithNewOp<PermuteOp>(op, inner, permute.getDims());
    else
      rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), inner);
    return success();
  }
};

/// linear(tokens(X)) -> tokens(conv2d 1×1(X)).
struct TokenLinearToConv : OpRewritePattern<LinearOp> {
  TokenLinearToConv(MLIRContext *context, int64_t &counter)
      : OpRewritePattern(context), counter(counter) {}

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<TokenView> view = matchTokenView(op.getInput());
    if (failed(view))
      return rewriter.notifyMatchFailure(op, "input is not a token view");
    rewriteTokenLinearAsConv(op, *view, rewriter);
    ++counter;
    return success();
  }

  int64_t &counter;
};

struct SimplifyTokenLayoutPass
    : mlir::gpuopt::seg::impl::SimplifyTokenLayoutPassBase<
          SimplifyTokenLayoutPass> {
  void runOnOperation() override {
    int64_t converted = 0;
    RewritePatternSet patterns(&getContext());
    populateSimplifyTokenLayoutPatterns(patterns);
    patterns.add<TokenLinearToConv>(&getContext(), converted);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numLinearsToConv += converted;
  }
};
} // namespace

void mlir::gpuopt::seg::populateSimplifyTokenLayoutPatterns(
    RewritePatternSet &patterns) {
  patterns.add<UnaryBelowLayout<ReluOp>, UnaryBelowLayout<GeluOp>,
               UnaryBelowLayout<SigmoidOp>, BinaryBelowLayout<AddOp>,
               BinaryBelowLayout<MulOp>, LayerNormBelowLayout,
               ReshapeAbovePermute, ConcatBelowLayout>(patterns.getContext());
}
