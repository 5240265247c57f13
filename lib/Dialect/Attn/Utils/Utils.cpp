//===- Utils.cpp - helpers shared by the attn lowerings -------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Utils/Utils.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::attn;

SmallVector<utils::IteratorType>
mlir::attn::getIteratorTypes(unsigned numParallel, unsigned numReduction) {
  SmallVector<utils::IteratorType> types(numParallel,
                                         utils::IteratorType::parallel);
  types.append(numReduction, utils::IteratorType::reduction);
  return types;
}

Value mlir::attn::createF32Constant(OpBuilder &b, Location loc, float value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

Value mlir::attn::createFilledF32Tensor(OpBuilder &b, Location loc,
                                        ArrayRef<OpFoldResult> shape,
                                        float value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  return linalg::FillOp::create(b, loc, createF32Constant(b, loc, value), empty)
      .getResult(0);
}

void mlir::attn::buildMultiplyAccumulateBody(OpBuilder &b, Location loc,
                                             ValueRange args) {
  auto toF32 = [&](Value v) {
    return convertScalarToDtype(b, loc, v, b.getF32Type(),
                                /*isUnsignedCast=*/false);
  };
  Value prod = arith::MulFOp::create(b, loc, toF32(args[0]), toF32(args[1]));
  linalg::YieldOp::create(
      b, loc, arith::AddFOp::create(b, loc, args[2], prod).getResult());
}

SmallVector<Value>
mlir::attn::getDynamicMaskLastIndices(OpBuilder &b, Location loc, Value mask) {
  auto maskType = cast<RankedTensorType>(mask.getType());
  SmallVector<Value> last(maskType.getRank());
  if (maskType.hasStaticShape())
    return last;
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t dim = 0; dim < maskType.getRank(); ++dim)
    if (maskType.isDynamicDim(dim))
      last[dim] = arith::SubIOp::create(
          b, loc, tensor::DimOp::create(b, loc, mask, dim), one);
  return last;
}

Value mlir::attn::clampMaskIndex(OpBuilder &b, Location loc,
                                 RankedTensorType maskType,
                                 ArrayRef<Value> dynamicLastIndices,
                                 int64_t dim, Value index) {
  if (maskType.getDimSize(dim) == 1)
    return arith::ConstantIndexOp::create(b, loc, 0);
  if (Value last = dynamicLastIndices[dim])
    return arith::MinUIOp::create(b, loc, index, last);
  return index;
}

void mlir::attn::replaceOpWithCastValues(RewriterBase &rewriter, Operation *op,
                                         ValueRange values) {
  SmallVector<Value> results;
  for (auto [value, type] : llvm::zip_equal(values, op->getResultTypes()))
    results.push_back(
        value.getType() == type
            ? value
            : tensor::CastOp::create(rewriter, op->getLoc(), type, value)
                  .getResult());
  rewriter.replaceOp(op, results);
}

LogicalResult mlir::attn::verifyOptionBounds(Location loc, StringRef passName,
                                             ArrayRef<BoundedOption> options) {
  for (const BoundedOption &option : options)
    if (std::optional<std::string> bound =
            tuning::violatedBound(option.bounds, option.value))
      return mlir::emitError(loc) << passName << ": " << option.name << " ("
                                  << option.value << ") must be " << *bound;
  return success();
}

LogicalResult mlir::attn::checkF32TableSize(Operation *op, StringRef what,
                                            ArrayRef<int64_t> dims) {
  std::optional<int64_t> bytes = int64_t(4);
  for (int64_t dim : dims)
    if (!ShapedType::isDynamic(dim))
      bytes = bytes ? llvm::checkedMul(*bytes, dim) : std::nullopt;
  if (bytes)
    return success();
  InFlightDiagnostic diag = op->emitOpError("expected the f32 ")
                            << what << " [";
  llvm::interleaveComma(dims, diag);
  return diag << "] to fit in 2^63 bytes";
}

LogicalResult mlir::attn::reportSdpaLeft(Operation *root, StringRef message) {
  WalkResult left = root->walk([&](SdpaOp op) {
    op.emitOpError(message);
    return WalkResult::interrupt();
  });
  return failure(left.wasInterrupted());
}
