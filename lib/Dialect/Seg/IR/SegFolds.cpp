//===- SegFolds.cpp - seg op folders --------------------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The `fold` hooks of the seg ops (hasFolder in SegOps.td): each returns an
// existing value, or updates the op in place and returns its result.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/Seg/IR/SegOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gpuopt::seg;

namespace {
/// Exact for every sum or product of two int64 values.
using Wide = __int128;
} // namespace

//===----------------------------------------------------------------------===//
// Folders
//===----------------------------------------------------------------------===//

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  // reshape(x) -> x when the shapes agree.
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) -> reshape(x): only the final shape matters.
  if (auto prev = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(prev.getInput());
    return getResult();
  }
  return {};
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  return {};
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  auto in = cast<RankedTensorType>(getInput().getType());
  bool whole = llvm::all_of(getStart(), [](int64_t s) { return s == 0; }) &&
               llvm::all_of(getStep(), [](int64_t s) { return s == 1; }) &&
               getSize() == in.getShape();
  if (whole)
    return getInput();
  // slice(slice(x)) -> slice(x): index i of the outer slice reads
  // start1 + (start2 + i * step2) * step1 of x.
  if (auto prev = getInput().getDefiningOp<SliceOp>()) {
    SmallVector<int64_t> start, step;
    for (auto [s1, t1, s2, t2] : llvm::zip_equal(
             prev.getStart(), prev.getStep(), getStart(), getStep())) {
      // Verified slices keep the composed start in range, but not the step
      // of a dim the outer slice reads once: left unfolded if it overflows.
      std::optional<int64_t> composed = llvm::checkedMul(t1, t2);
      if (!composed)
        return {};
      start.push_back(s1 + s2 * t1);
      step.push_back(*composed);
    }
    getInputMutable().assign(prev.getInput());
    setStart(start);
    setStep(step);
    return getResult();
  }
  return {};
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  auto isZero = [](int64_t v) { return v == 0; };
  if (llvm::all_of(getLow(), isZero) && llvm::all_of(getHigh(), isZero))
    return getInput();
  return {};
}

OpFoldResult RollOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> shape = getType().getShape();
  // Rolling an empty tensor does nothing (and has no size to reduce by).
  if (llvm::is_contained(shape, 0))
    return getInput();
  auto isIdentity = [&](ArrayRef<int64_t> shifts) {
    for (auto [s, d] : llvm::zip_equal(shifts, getDims()))
      if (s % shape[d] != 0)
        return false;
    return true;
  };
  if (isIdentity(getShifts()))
    return getInput();
  // roll(roll(x, a, dims), b, dims) -> roll(x, a + b, dims).
  if (auto prev = getInput().getDefiningOp<RollOp>()) {
    if (prev.getDims() != getDims())
      return {};
    SmallVector<int64_t> sum;
    for (auto [a, b, d] :
         llvm::zip_equal(prev.getShifts(), getShifts(), getDims()))
      sum.push_back(
          static_cast<int64_t>((Wide(a % shape[d]) + b % shape[d]) % shape[d]));
    getInputMutable().assign(prev.getInput());
    setShifts(sum);
    if (isIdentity(sum))
      return getInput();
    return getResult();
  }
  return {};
}

OpFoldResult ChannelShiftOp::fold(FoldAdaptor) {
  auto isZero = [](int64_t v) { return v == 0; };
  if (llvm::all_of(getOffsetsH(), isZero) &&
      llvm::all_of(getOffsetsW(), isZero))
    return getInput();
  // Cyclic shifts compose: the offsets add (mod the map's size).
  auto prev = getInput().getDefiningOp<ChannelShiftOp>();
  if (!prev || getMode() != ShiftMode::Cyclic ||
      prev.getMode() != ShiftMode::Cyclic)
    return {};
  ArrayRef<int64_t> shape = getType().getShape();
  // An empty map has no size to reduce the offsets by.
  if (shape[2] == 0 || shape[3] == 0)
    return {};
  auto add = [](ArrayRef<int64_t> a, ArrayRef<int64_t> b, int64_t size) {
    SmallVector<int64_t> sum(std::max(a.size(), b.size()), 0);
    for (auto [i, v] : llvm::enumerate(sum))
      v = static_cast<int64_t>(
          (Wide(i < a.size() ? a[i] : 0) + (i < b.size() ? b[i] : 0)) % size);
    for (int64_t &v : sum)
      v = static_cast<int64_t>((Wide(v) + size) % size);
    return sum;
  };
  SmallVector<int64_t> h = add(prev.getOffsetsH(), getOffsetsH(), shape[2]);
  SmallVector<int64_t> w = add(prev.getOffsetsW(), getOffsetsW(), shape[3]);
  getInputMutable().assign(prev.getInput());
  setOffsetsH(h);
  setOffsetsW(w);
  if (llvm::all_of(h, isZero) && llvm::all_of(w, isZero))
    return getInput();
  return getResult();
}

OpFoldResult PermuteOp::fold(FoldAdaptor) {
  // permute(permute(x, p), q) -> permute(x, p ∘ q): result dim i is dim
  // p[q[i]] of x.
  bool changed = false;
  if (auto prev = getInput().getDefiningOp<PermuteOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t d : getDims())
      composed.push_back(prev.getDims()[d]);
    getInputMutable().assign(prev.getInput());
    setDims(composed);
    changed = true;
  }
  for (auto [i, d] : llvm::enumerate(getDims()))
    if (static_cast<int64_t>(i) != d)
      return changed ? OpFoldResult(getResult()) : OpFoldResult();
  return getInput();
}

SmallVector<int64_t> ShiftOp::getNormalizedOffsets() {
  ArrayRef<int64_t> shape = getType().getShape();
  int64_t groups = shape[getGroupDim()];
  bool cyclic = getMode() == ShiftMode::Cyclic;
  SmallVector<int64_t> result;
  for (auto [k, dim] : llvm::enumerate(getDims())) {
    int64_t size = shape[dim];
    for (int64_t offset : getOffsets().slice(k * groups, groups)) {
      if (size == 0)
        result.push_back(0);
      else if (cyclic)
        result.push_back(
            static_cast<int64_t>((Wide(offset) % size + size) % size));
      else
        result.push_back(std::clamp<int64_t>(offset, -size, size));
    }
  }
  return result;
}

OpFoldResult ShiftOp::fold(FoldAdaptor) {
  auto isZero = [](int64_t v) { return v == 0; };
  // An empty tensor has nothing to move.
  if (llvm::is_contained(getType().getShape(), 0))
    return getInput();
  if (llvm::all_of(getNormalizedOffsets(), isZero))
    return getInput();
  // Cyclic shifts over the same groups and dims compose: the offsets add.
  auto prev = getInput().getDefiningOp<ShiftOp>();
  if (!prev || getMode() != ShiftMode::Cyclic ||
      prev.getMode() != ShiftMode::Cyclic ||
      prev.getGroupDim() != getGroupDim() || prev.getDims() != getDims())
    return {};
  SmallVector<int64_t> a = prev.getNormalizedOffsets();
  SmallVector<int64_t> b = getNormalizedOffsets();
  ArrayRef<int64_t> shape = getType().getShape();
  int64_t groups = shape[getGroupDim()];
  SmallVector<int64_t> sum;
  for (auto [i, v] : llvm::enumerate(a))
    sum.push_back((v + b[i]) % shape[getDims()[i / groups]]);
  getInputMutable().assign(prev.getInput());
  setOffsets(sum);
  if (llvm::all_of(sum, isZero))
    return getInput();
  return getResult();
}
