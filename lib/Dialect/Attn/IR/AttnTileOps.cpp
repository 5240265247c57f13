//===- AttnTileOps.cpp - ops the tiling leaves to a target ----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnTileOps.h"

#include "VerifyShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::attn;

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnTileOps.cpp.inc"

using verify::DimRule;
using verify::NamedType;

LogicalResult DecodeKeysOp::verify() {
  enum { Q, K, V, M, L, Acc };
  NamedType all[] = {
      {"query", getQueryType()}, {"key", getKeyType()},
      {"value", getValueType()}, {"m", getM().getType()},
      {"l", getL().getType()},   {"acc", getAcc().getType()},
  };
  const int64_t ranks[] = {4, 4, 4, 1, 1, 2};
  for (unsigned t = Q; t <= Acc; ++t)
    if (all[t].type.getRank() != ranks[t])
      return emitOpError() << "expected " << all[t].name << " to have rank "
                           << ranks[t] << ", but got rank "
                           << all[t].type.getRank();
  for (unsigned t : {Q, K, V}) {
    Type elt = all[t].type.getElementType();
    if (!elt.isF32() && !elt.isF16() && !elt.isBF16())
      return emitOpError() << "expected " << all[t].name
                           << " element type to be f32, f16 or bf16, but got "
                           << elt;
  }
  // The kernel unrolls along D and Dv: both static and positive.
  if (failed(verify::staticHeadDims(*this, {all[Q], all[K], all[V]}, 1, 3)) ||
      failed(verify::positiveHeadDims(*this, all[Q].type, all[V].type, 3)))
    return failure();
  // key [B, Hkv, Lk, D], value [B, Hkv, Lk, Dv], acc [Dv, rows].
  if (failed(verify::dimRules(*this, all,
                              {{K, 0, Q, 0},
                               {K, 3, Q, 3},
                               {V, 0, K, 0},
                               {V, 1, K, 1},
                               {V, 2, K, 2},
                               {Acc, 0, V, 3}})))
    return failure();

  int64_t rows = getRows();
  for (unsigned t : {M, L, Acc}) {
    int64_t size = all[t].type.getDimSize(t == Acc ? 1 : 0);
    if (size != rows)
      return emitOpError() << "expected " << all[t].name << " dim "
                           << (t == Acc ? 1 : 0) << " (" << size
                           << ") to equal rows (" << rows << ")";
  }

  // The rows must be queries of the op: each head's Lq, or Lq itself.
  int64_t lq = all[Q].type.getDimSize(2), hq = all[Q].type.getDimSize(1);
  if (std::optional<int64_t> perHead = getRowsPerHead()) {
    if (rows % *perHead != 0)
      return emitOpError() << "expected rows (" << rows
                           << ") to be a multiple of rows_per_head ("
                           << *perHead << ")";
    if (!ShapedType::isDynamic(lq) && lq != *perHead)
      return emitOpError() << "expected rows_per_head (" << *perHead
                           << ") to equal query dim 2 (" << lq << ")";
    if (rows / *perHead > hq)
      return emitOpError() << "expected the rows' " << rows / *perHead
                           << " heads to be at most query dim 1 (" << hq << ")";
  } else if (!ShapedType::isDynamic(lq) && rows > lq) {
    return emitOpError() << "expected rows (" << rows
                         << ") to be at most query dim 2 (" << lq << ")";
  }
  return success();
}
