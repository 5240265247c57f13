//===- AttnPagedOps.cpp - attn.sdpa_paged ---------------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnPagedOps.h"

#include "VerifyShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::attn;

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnPagedOps.cpp.inc"

using verify::DimRule;
using verify::NamedType;

LogicalResult SdpaPagedOp::verify() {
  if (failed(verify::denseTensors(*this)))
    return failure();
  enum { Q, K, V, Table, Lens, O, Lse };
  auto lseType =
      getLse() ? cast<RankedTensorType>(getLse().getType()) : nullptr;
  NamedType all[] = {
      {"query", getQuery().getType()},
      {"key_cache", getKeyCache().getType()},
      {"value_cache", getValueCache().getType()},
      {"page_table", getPageTable().getType()},
      {"kv_lens", getKvLens().getType()},
      {"out", cast<RankedTensorType>(getOut().getType())},
      {"lse", lseType},
  };
  if (failed(verify::ranksAndElementTypes(*this, all, {4, 4, 4, 2, 1, 4, 3})))
    return failure();

  // Heads and head dims drive the GQA mapping, the default scale and the
  // gathered attn.sdpa's types; the caches' heads dim follows the layout.
  unsigned headsDim = getKeyValueHeadsDim(), slotDim = getPageSlotDim();
  if (failed(verify::staticHeadDims(*this, {all[Q]}, 1, 3)) ||
      failed(verify::staticHeadDims(*this, {all[K], all[V]}, headsDim, 3)))
    return failure();

  SmallVector<DimRule> rules = {
      // The caches share pages, page size and heads; key's D is query's.
      {K, 3, Q, 3},
      {V, 0, K, 0},
      {V, slotDim, K, slotDim},
      {V, headsDim, K, headsDim},
      // One page table row and one length per sequence.
      {Table, 0, Q, 0},
      {Lens, 0, Q, 0},
      // out [B, Hq, Lq, Dv].
      {O, 0, Q, 0},
      {O, 1, Q, 1},
      {O, 2, Q, 2},
      {O, 3, V, 3},
  };
  if (lseType)
    for (unsigned d = 0; d < 3; ++d)
      rules.push_back({Lse, d, Q, d});
  if (failed(verify::dimRules(*this, all, rules)))
    return failure();

  int64_t pageSize = all[K].type.getDimSize(slotDim);
  if (!ShapedType::isDynamic(pageSize) && pageSize <= 0)
    return emitOpError() << "expected key_cache dim " << slotDim
                         << " (page size) to be positive, but got " << pageSize;

  int64_t hq = all[Q].type.getDimSize(1),
          hkv = all[K].type.getDimSize(headsDim);
  // verify::heads names key dim 1; the caches' heads dim follows the layout.
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0)
    return emitOpError() << "expected query heads (query dim 1: " << hq
                         << ") to be a positive multiple of key/value heads "
                            "(key_cache dim "
                         << headsDim << ": " << hkv << ")";
  if (failed(verify::positiveHeadDims(*this, all[Q].type, all[V].type, 3)))
    return failure();

  // ALiBi slopes [Hq] or [B, Hq].
  if (Value slopes = getAlibiSlopes())
    if (failed(verify::alibiSlopes(*this,
                                   cast<RankedTensorType>(slopes.getType()), hq,
                                   all[Q].type.getDimSize(0), "query dim 0 (")))
      return failure();

  // The attributes mean what they mean on attn.sdpa, per sequence.
  return verify::scoreAttributes(*this, getWindow(), getSoftcapAttr(),
                                 getScaleAttr());
}

LogicalResult PagedViewOp::verify() {
  enum { Cache, Table, View };
  auto cacheType = cast<RankedTensorType>(getCache().getType());
  auto tableType = cast<RankedTensorType>(getPageTable().getType());
  auto viewType = cast<RankedTensorType>(getView().getType());
  if (cacheType.getRank() != 4 || viewType.getRank() != 4)
    return emitOpError() << "expected cache and view to have rank 4, but got "
                         << cacheType.getRank() << " and "
                         << viewType.getRank();
  if (tableType.getRank() != 2 || !tableType.getElementType().isInteger(32))
    return emitOpError() << "expected page_table to be a rank-2 i32 tensor, "
                            "but got "
                         << tableType;
  if (viewType.getElementType() != cacheType.getElementType())
    return emitOpError() << "expected view element type ("
                         << viewType.getElementType()
                         << ") to equal cache element type ("
                         << cacheType.getElementType() << ")";
  NamedType all[] = {
      {"cache", cacheType}, {"page_table", tableType}, {"view", viewType}};
  // view [B, Hkv, max_pages * page_size, D].
  if (failed(verify::dimRules(*this, all,
                              {{View, 0, Table, 0},
                               {View, 1, Cache, getHeadsDim()},
                               {View, 3, Cache, 3}})))
    return failure();
  int64_t pages = tableType.getDimSize(1),
          pageSize = cacheType.getDimSize(getPageSlotDim()),
          keys = viewType.getDimSize(2);
  if (!ShapedType::isDynamic(pages) && !ShapedType::isDynamic(pageSize) &&
      !ShapedType::isDynamic(keys) && keys != pages * pageSize)
    return emitOpError() << "expected view dim 2 (" << keys
                         << ") to be page_table dim 1 times the page size ("
                         << pages << " * " << pageSize << ")";
  return success();
}
