//===- Normalize.cpp - tensor.reshape with provable shapes to expand/collapse //
//
// Part of the attn project.
//
// torch-mlir reshapes a dynamic tensor with tensor.reshape and a shape
// computed at run time (tensor.from_elements of i64 arithmetic on the
// source's dims). When every element of that shape is provably the size of
// a source dim (Sizes.cpp), in order, with only unit dims inserted or
// removed or a static dim split into static dims (or merged), the reshape
// is the same row-major reinterpretation as a tensor.expand_shape or
// tensor.collapse_shape, which the matcher follows.
//
//===----------------------------------------------------------------------===//

#include "Sizes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;
using namespace mlir::attn::raise;

namespace {

/// One dim of either side: its canonical size and whether the type has it
/// static.
struct DimInfo {
  Size size;
  bool isStatic;
  bool isUnit() const { return size.isConstant(1) && isStatic; }
};

/// Groups of `big`'s dims, one per dim of `small`: each group holds one dim
/// of the same size and static-ness as the small one, or static dims whose
/// product is the small one's static size (or one unit dim for a unit dim),
/// the big side's other unit dims joining a neighbouring group.
std::optional<SmallVector<ReassociationIndices>>
groupDims(ArrayRef<DimInfo> small, ArrayRef<DimInfo> big) {
  if (small.empty())
    return std::nullopt;
  SmallVector<ReassociationIndices> groups;
  size_t next = 0;
  for (const DimInfo &s : small) {
    ReassociationIndices group;
    if (s.isUnit()) {
      // Exactly one unit dim of `big`.
      if (next >= big.size() || !big[next].isUnit())
        return std::nullopt;
      group.push_back(next++);
    } else {
      // Unit dims, then the dim that matches, or static dims whose product
      // is the static small dim (torch-mlir's [B*H] split into [B, H]).
      while (next < big.size() && big[next].isUnit())
        group.push_back(next++);
      if (next < big.size() && big[next].size == s.size &&
          big[next].isStatic == s.isStatic) {
        group.push_back(next++);
      } else {
        if (!s.isStatic || s.size.base)
          return std::nullopt;
        int64_t product = 1;
        while (product < s.size.constant && next < big.size() &&
               big[next].isStatic && !big[next].size.base &&
               big[next].size.constant > 0) {
          product *= big[next].size.constant;
          group.push_back(next++);
        }
        if (product != s.size.constant)
          return std::nullopt;
      }
    }
    groups.push_back(group);
  }
  // Trailing unit dims join the last group.
  for (; next < big.size(); ++next) {
    if (!big[next].isUnit())
      return std::nullopt;
    groups.back().push_back(next);
  }
  return groups;
}

void normalize(tensor::ReshapeOp reshape) {
  auto srcType = dyn_cast<RankedTensorType>(reshape.getSource().getType());
  auto resType = dyn_cast<RankedTensorType>(reshape.getResult().getType());
  auto elems = reshape.getShape().getDefiningOp<tensor::FromElementsOp>();
  if (!srcType || !resType || !elems || srcType.getRank() == resType.getRank())
    return;
  SmallVector<DimInfo> src, res;
  for (int64_t d = 0; d < srcType.getRank(); ++d) {
    std::optional<Size> s = dimOf(reshape.getSource(), d);
    if (!s)
      return;
    src.push_back({*s, !srcType.isDynamicDim(d)});
  }
  for (int64_t d = 0; d < resType.getRank(); ++d) {
    // The run-time shape is the operand's; a static result dim must agree.
    std::optional<Size> s = sizeOf(elems.getElements()[d]);
    if (!s ||
        (!resType.isDynamicDim(d) && !s->isConstant(resType.getDimSize(d))))
      return;
    res.push_back({*s, !resType.isDynamicDim(d)});
  }
  OpBuilder b(reshape);
  Location loc = reshape.getLoc();
  Value replacement;
  if (resType.getRank() > srcType.getRank()) {
    std::optional<SmallVector<ReassociationIndices>> groups =
        groupDims(src, res);
    if (!groups)
      return;
    SmallVector<OpFoldResult> outputShape(resType.getRank(), b.getIndexAttr(1));
    // The shape's own elements (a tensor.dim of the source would be a use
    // of it outside what the match consumes).
    for (int64_t d = 0; d < resType.getRank(); ++d)
      if (resType.isDynamicDim(d))
        outputShape[d] = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                    elems.getElements()[d])
                             .getResult();
      else
        outputShape[d] = b.getIndexAttr(resType.getDimSize(d));
    replacement = tensor::ExpandShapeOp::create(
        b, loc, resType, reshape.getSource(), *groups, outputShape);
  } else {
    std::optional<SmallVector<ReassociationIndices>> groups =
        groupDims(res, src);
    if (!groups)
      return;
    replacement = tensor::CollapseShapeOp::create(b, loc, resType,
                                                  reshape.getSource(), *groups);
  }
  reshape.getResult().replaceAllUsesWith(replacement);
  reshape.erase();
  if (elems.use_empty())
    elems.erase();
}

} // namespace

void mlir::attn::raise::normalizeReshapes(Operation *root) {
  SmallVector<tensor::ReshapeOp> reshapes;
  root->walk([&](tensor::ReshapeOp op) { reshapes.push_back(op); });
  for (tensor::ReshapeOp op : reshapes)
    normalize(op);
}
