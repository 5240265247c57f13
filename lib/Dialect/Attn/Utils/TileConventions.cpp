//===- TileConventions.cpp - conventions of the tiling --------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Utils/TileConventions.h"

#include "mlir/IR/AffineExpr.h"

using namespace mlir;

AffineMap mlir::attn::pairedValuesMap(MLIRContext *context) {
  AffineExpr e = getAffineDimExpr(0, context), j = getAffineDimExpr(2, context);
  return AffineMap::get(3, 0, {j.floorDiv(2), e * 2 + j % 2}, context);
}
