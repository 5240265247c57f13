//===- CpuScoreModifiers.cpp - CPU kernels of the attention variants ------===//
//
// Part of the attn project.
//
// The vector kernels that attn-cpu-microkernels puts in place of the score
// modifier tile ops (TileScoreModifiers.cpp): the softcap, vectorized op by
// op like the element mask, with math.tanh built from the kernels' own
// polynomial exp2, so that no libm call is left in the key loop.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {

/// Collects the vector math.tanh ops that a builder inserts.
struct TanhCollector : public OpBuilder::Listener {
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override {
    if (auto tanh = dyn_cast<math::TanhOp>(op))
      if (isa<VectorType>(tanh.getType()))
        found.push_back(tanh);
  }
  SmallVector<math::TanhOp> found;
};

} // namespace

/// tanh(x) = sign(x) * t(|x|), with
///   t(a) = a + a^3 * P(a^2), P the Taylor series of (tanh(a) - a) / a^3 to
///          its a^15 term, for a < 0.55 (the series alternates with terms
///          shrinking by < 0.13 each, so its error is below the first term
///          left out, 5.9e-4 * a^17 < 2.3e-8 for a < 0.55);
///   t(a) = (1 - e) / (1 + e), e = 2^(-2 a log2(e)) by the kernels' exp2
///          (relative error < 6e-9 before rounding), for a >= 0.55, where
///          1 - e >= 0.66 so nothing cancels.
/// Measured against double-precision tanh over every f32 in [-20, 20] in
/// steps of 2^-12 (test/Dialect/Attn/Transforms/softcap-tanh-error.mlir):
/// the maximum error is in docs/op.md. NaN propagates (it takes the second
/// branch, and exp2 keeps it); +-inf gives +-1.
Value mlir::attn::detail::emitTanh(KernelBuilder &kernel, Value x) {
  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  Value a = math::AbsFOp::create(b, loc, x);
  Value a2 = arith::MulFOp::create(b, loc, a, a);
  ArrayRef<double> coeffs(kTanhTaylorCoefficients);
  Value p = kernel.splat(static_cast<float>(coeffs[0]));
  for (double coeff : coeffs.drop_front())
    p = vector::FMAOp::create(b, loc, p, a2,
                              kernel.splat(static_cast<float>(coeff)));
  Value a3 = arith::MulFOp::create(b, loc, a2, a);
  Value small = vector::FMAOp::create(b, loc, a3, p, a);

  Value e = kernel.exp2(arith::MulFOp::create(
      b, loc, a, kernel.splat(static_cast<float>(-2.0 * 1.4426950408889634))));
  Value one = kernel.splat(1.0f);
  Value large =
      arith::DivFOp::create(b, loc, arith::SubFOp::create(b, loc, one, e),
                            arith::AddFOp::create(b, loc, one, e));
  Value isSmall = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a,
                                        kernel.splat(0.55f));
  Value t = arith::SelectOp::create(b, loc, isSmall, small, large);
  return math::CopySignOp::create(b, loc, t, x);
}

bool mlir::attn::detail::emitSoftcap(KernelBuilder &kernel,
                                     linalg::GenericOp op) {
  TanhCollector collector;
  OpBuilder::Listener *previous = kernel.b.getListener();
  kernel.b.setListener(&collector);
  bool built = emitElementwise(kernel, op);
  kernel.b.setListener(previous);
  if (!built)
    return false;
  OpBuilder::InsertionGuard guard(kernel.b);
  for (math::TanhOp tanh : collector.found) {
    if (tanh.getType() != kernel.vecType)
      return false; // never: the softcap body is f32.
    kernel.b.setInsertionPoint(tanh);
    tanh.replaceAllUsesWith(emitTanh(kernel, tanh.getOperand()));
    tanh.erase();
  }
  return true;
}
