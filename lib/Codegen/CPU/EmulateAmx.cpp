//===- EmulateAmx.cpp - the amx dialect's tile ops as vector code ---------===//
//
// Part of the attn project.
//
// The amx kernels (CpuKernelsAmx.cpp) build their products from four amx
// ops: tile_zero, tile_load, tile_mulf and tile_store. This pass rewrites
// them into vector code with the instructions' results, so that the kernels'
// tiling, packing and pair layouts run, and are checked against the f64
// reference, on a CPU without AMX (attn-lower-cpu's emulate-amx). A tile
// becomes a 2-D vector; a tile product a call of one private function per
// tile shape (its body fully unrolled: 1,664 vector ops for 16 x 16 x
// 32), so that a kernel's dozens of products do not each inline that body.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/CPU/Passes.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEMULATEAMX
#include "attn/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

VectorType vectorOf(amx::TileType tile) {
  return VectorType::get(tile.getShape(), tile.getElementType());
}

/// The indices of row `row` of a tile at `indices` of `base`: with an
/// explicit `stride` (elements), the innermost index plus row * stride; else
/// the second innermost plus row (its stride is the memref's).
SmallVector<Value> rowIndices(OpBuilder &b, Location loc, ValueRange indices,
                              Value stride, int64_t row) {
  SmallVector<Value> at(indices);
  if (row == 0)
    return at;
  Value r = arith::ConstantIndexOp::create(b, loc, row);
  if (stride) {
    at.back() = arith::AddIOp::create(b, loc, at.back(),
                                      arith::MulIOp::create(b, loc, r, stride));
    return at;
  }
  Value &outer = at[at.size() - 2];
  outer = arith::AddIOp::create(b, loc, outer, r);
  return at;
}

/// A tile of zeros (tile_zero's, and the start of a tile loaded by rows).
Value zeroTile(OpBuilder &b, Location loc, VectorType type) {
  return arith::ConstantOp::create(b, loc, type,
                                   cast<TypedAttr>(b.getZeroAttr(type)));
}

struct ZeroTile : OpConversionPattern<amx::TileZeroOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(amx::TileZeroOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, zeroTile(rewriter, op.getLoc(), vectorOf(op.getTileType())));
    return success();
  }
};

struct LoadTile : OpConversionPattern<amx::TileLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(amx::TileLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    VectorType type = vectorOf(op.getTileType());
    auto rowType = VectorType::get({type.getDimSize(1)}, type.getElementType());
    Value tile = zeroTile(rewriter, loc, type);
    for (int64_t r = 0; r < type.getDimSize(0); ++r) {
      Value row =
          vector::LoadOp::create(rewriter, loc, rowType, adaptor.getBase(),
                                 rowIndices(rewriter, loc, adaptor.getIndices(),
                                            adaptor.getStride(), r));
      tile = vector::InsertOp::create(rewriter, loc, row, tile, r);
    }
    rewriter.replaceOp(op, tile);
    return success();
  }
};

struct StoreTile : OpConversionPattern<amx::TileStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(amx::TileStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t rows = op.getTileType().getDimSize(0);
    for (int64_t r = 0; r < rows; ++r) {
      Value row = vector::ExtractOp::create(rewriter, loc, adaptor.getVal(), r);
      vector::StoreOp::create(rewriter, loc, row, adaptor.getBase(),
                              rowIndices(rewriter, loc, adaptor.getIndices(),
                                         adaptor.getStride(), r));
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// The tile shapes of a product: (a, b, acc).
using ProductShape = std::tuple<Type, Type, Type>;

/// acc [M, N] f32 += a [M, K] . b [K / 2, 2N] (pairs), as tdpbf16ps and
/// tdpfp16ps: for each pair k in order, the even product then the odd, each
/// added by vector.fma (llvm.fmuladd: a product of two bf16 or two f16 is
/// exact in f32 but at the ends of bf16's range, so fused or not each step
/// rounds once).
func::FuncOp buildProduct(OpBuilder &b, Location loc, StringRef name,
                          VectorType aType, VectorType bType,
                          VectorType accType) {
  auto fn = func::FuncOp::create(
      b, loc, name, b.getFunctionType({aType, bType, accType}, {accType}));
  fn.setPrivate();
  // Internal to the library (func-to-llvm keeps a private func external).
  fn->setAttr("llvm.linkage",
              LLVM::LinkageAttr::get(b.getContext(), LLVM::Linkage::Internal));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(fn.addEntryBlock());
  Value a = fn.getArgument(0), pairs = fn.getArgument(1);
  Value acc = fn.getArgument(2);
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1);
  int64_t n = accType.getDimSize(1);
  Type f32 = b.getF32Type();
  auto rowF32 = [&](Value v, int64_t row, int64_t len) -> Value {
    Value narrow = vector::ExtractOp::create(b, loc, v, row);
    return arith::ExtFOp::create(b, loc, VectorType::get({len}, f32), narrow);
  };
  // b's pair rows split into their even and odd elements.
  SmallVector<int64_t> evens, odds;
  for (int64_t j = 0; j < n; ++j) {
    evens.push_back(2 * j);
    odds.push_back(2 * j + 1);
  }
  SmallVector<std::array<Value, 2>> halves;
  for (int64_t p = 0; p < k / 2; ++p) {
    Value row = rowF32(pairs, p, 2 * n);
    halves.push_back(
        {vector::ShuffleOp::create(b, loc, row, row, evens).getResult(),
         vector::ShuffleOp::create(b, loc, row, row, odds).getResult()});
  }
  auto rowType = VectorType::get({n}, f32);
  for (int64_t i = 0; i < m; ++i) {
    Value aRow = rowF32(a, i, k);
    Value c = vector::ExtractOp::create(b, loc, acc, i);
    for (int64_t p = 0; p < k / 2; ++p)
      for (int64_t q = 0; q < 2; ++q) {
        Value x = vector::ExtractOp::create(b, loc, aRow, 2 * p + q);
        Value xs = vector::BroadcastOp::create(b, loc, rowType, x);
        c = vector::FMAOp::create(b, loc, xs, halves[p][q], c);
      }
    acc = vector::InsertOp::create(b, loc, c, acc, i);
  }
  func::ReturnOp::create(b, loc, acc);
  return fn;
}

struct MulTile : OpConversionPattern<amx::TileMulFOp> {
  MulTile(const TypeConverter &types, MLIRContext *context,
          const llvm::MapVector<ProductShape, func::FuncOp> &products)
      : OpConversionPattern(types, context), products(products) {}
  LogicalResult
  matchAndRewrite(amx::TileMulFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    func::FuncOp fn = products.lookup(
        {op.getLhs().getType(), op.getRhs().getType(), op.getAcc().getType()});
    if (!fn)
      return rewriter.notifyMatchFailure(op, "no product function");
    rewriter.replaceOpWithNewOp<func::CallOp>(
        op, fn,
        ValueRange{adaptor.getLhs(), adaptor.getRhs(), adaptor.getAcc()});
    return success();
  }
  const llvm::MapVector<ProductShape, func::FuncOp> &products;
};

struct AttnEmulateAmxPass
    : public mlir::attn::impl::AttnEmulateAmxBase<AttnEmulateAmxPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    // What the rewrite cannot take, said where it is.
    WalkResult refused = module.walk([&](Operation *op) {
      if (isa<amx::TileMulIOp>(op)) {
        op->emitError("attn-emulate-amx: amx.tile_muli (int8 tiles) is not "
                      "emulated");
        return WalkResult::interrupt();
      }
      if (op->getDialect() && isa<amx::AMXDialect>(op->getDialect()))
        return WalkResult::advance();
      for (Value v : op->getResults())
        if (isa<amx::TileType>(v.getType())) {
          op->emitError("attn-emulate-amx: a tile value that is not an amx "
                        "op's result (tiles stay within a block)");
          return WalkResult::interrupt();
        }
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (isa<amx::TileType>(arg.getType())) {
              op->emitError("attn-emulate-amx: a tile carried as a block "
                            "argument (tiles stay within a block)");
              return WalkResult::interrupt();
            }
      return WalkResult::advance();
    });
    if (refused.wasInterrupted())
      return signalPassFailure();

    // One product function per tile shape, at the module's end (renamed
    // if the module has the name already).
    llvm::MapVector<ProductShape, func::FuncOp> products;
    SymbolTable symbols(module);
    OpBuilder b(context);
    module.walk([&](amx::TileMulFOp op) {
      ProductShape shape{op.getLhs().getType(), op.getRhs().getType(),
                         op.getAcc().getType()};
      if (products.count(shape))
        return;
      auto aType = vectorOf(op.getLhsTileType());
      auto bType = vectorOf(op.getRhsTileType());
      auto accType = vectorOf(op.getTileType());
      std::string name;
      llvm::raw_string_ostream os(name);
      os << "__attn_emulated_tile_mulf_" << aType.getDimSize(0) << "x"
         << aType.getDimSize(1) << aType.getElementType() << "_"
         << bType.getDimSize(0) << "x" << bType.getDimSize(1);
      b.setInsertionPointToEnd(module.getBody());
      func::FuncOp fn =
          buildProduct(b, op.getLoc(), name, aType, bType, accType);
      symbols.insert(fn);
      products[shape] = fn;
    });

    TypeConverter types;
    types.addConversion([](Type t) { return t; });
    types.addConversion([](amx::TileType t) -> Type { return vectorOf(t); });
    ConversionTarget target(*context);
    target.addIllegalDialect<amx::AMXDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(context);
    patterns.add<ZeroTile, LoadTile, StoreTile>(types, context);
    patterns.add<MulTile>(types, context, products);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
