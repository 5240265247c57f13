//===- IrBuilder.h - the scalar IR every kernel builder emits ---*- C++ -*-===//
//
// Part of the attn project.
//
// The base of the kernel builders (the CPU microkernels' KernelBuilder, the
// CPU backward's GradEmitter, the GPU kernels' builders): the builder and
// location they emit with, and the index and scalar arithmetic they all use,
// written once.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_IRBUILDER_H
#define ATTN_DIALECT_ATTN_UTILS_IRBUILDER_H

#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <cstdint>

namespace mlir::attn {

struct IrBuilder {
  IrBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// An index constant.
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  /// An f32 constant.
  Value f32(float v) { return createF32Constant(b, loc, v); }
  /// Integer (index) arithmetic.
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value minU(Value x, Value y) { return arith::MinUIOp::create(b, loc, x, y); }
  Value minS(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value maxS(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// A scalar as f32 (integers as signed).
  Value toF32(Value x) {
    return convertScalarToDtype(b, loc, x, b.getF32Type(), false);
  }
  /// Runs `body` under `cond` (no results).
  void ifThen(Value cond, function_ref<void()> body) {
    auto op = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(op.thenBlock()->getTerminator());
    body();
  }

  OpBuilder &b;
  Location loc;
};

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_UTILS_IRBUILDER_H
