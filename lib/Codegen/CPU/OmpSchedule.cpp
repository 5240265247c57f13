//===- OmpSchedule.cpp - the schedule of the query-block OpenMP loops -----===//
//
// Part of the attn project.
//
// convert-scf-to-openmp gives each omp.wsloop no schedule clause, which the
// translation to LLVM IR lowers as `static`: equal contiguous shares handed
// out up front. On a machine shared with other work, a thread that loses its
// core for a while then holds up the whole call. This pass sets the schedule
// (`guided` in attn-lower-cpu, so threads that fall behind take smaller
// chunks) on every omp.wsloop of a function that has none.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/CPU/Passes.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "llvm/ADT/StringSwitch.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNOMPSCHEDULE
#include "attn/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

std::optional<omp::ClauseScheduleKind> parseKind(StringRef kind) {
  return llvm::StringSwitch<std::optional<omp::ClauseScheduleKind>>(kind)
      .Case("static", omp::ClauseScheduleKind::Static)
      .Case("dynamic", omp::ClauseScheduleKind::Dynamic)
      .Case("guided", omp::ClauseScheduleKind::Guided)
      .Default(std::nullopt);
}

struct AttnOmpSchedulePass
    : public attn::impl::AttnOmpScheduleBase<AttnOmpSchedulePass> {
  using Base::Base;

  /// The options, checked once before any function is visited (a bad
  /// value is one error, not one per function).
  LogicalResult initialize(MLIRContext *context) override {
    std::optional<omp::ClauseScheduleKind> parsed = parseKind(kind);
    if (!parsed)
      return emitError(UnknownLoc::get(context))
             << "attn-omp-schedule: kind must be static, dynamic or guided, "
                "not '"
             << kind << "'";
    if (failed(verifyOptionBounds(
            UnknownLoc::get(context), getArgument(),
            {{chunk.ArgStr, chunk, tuning::bounds::kCpuOmpChunk}})))
      return failure();
    scheduleKind = *parsed;
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    func.walk([&](omp::WsloopOp loop) {
      if (loop.getScheduleKind())
        return;
      loop.setScheduleKind(scheduleKind);
      if (chunk == 0)
        return;
      OpBuilder b(loop);
      Value size = arith::ConstantOp::create(b, loop.getLoc(),
                                             b.getI32IntegerAttr(chunk));
      loop.getScheduleChunkMutable().assign(size);
    });
  }

private:
  omp::ClauseScheduleKind scheduleKind = omp::ClauseScheduleKind::Static;
};

} // namespace

bool mlir::attn::isOmpScheduleKind(StringRef kind) {
  return parseKind(kind).has_value();
}
