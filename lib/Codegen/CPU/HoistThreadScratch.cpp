//===- HoistThreadScratch.cpp - one scratch buffer per thread -------------===//
//
// Part of the attn project.
//
// The CPU kernels' scratch buffers (CpuScratch.h: tagged `attn.scratch`) and
// the tiles bufferization leaves in the query-block loop's body (the
// transposed query, the scores, the accumulator, the row max and sum) are
// allocated and freed once per query block. A buffer allocated with a
// static shape and freed unconditionally in the same iteration never
// outlives it, so once the query blocks are threads (after
// convert-scf-to-openmp) each thread can keep one buffer for all its blocks:
// the allocation moves to the start of the omp.parallel region (run once
// per thread) and the free to its end. A loop left serial (scf.parallel, no
// OpenMP) gets one buffer in front of the loop. The contents were never
// defined at an allocation, so reusing a buffer changes no result.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNHOISTTHREADSCRATCH
#include "attn/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The one memref.dealloc of `alloc`, if there is exactly one and it is in
/// the alloc's block.
memref::DeallocOp onlyFree(memref::AllocOp alloc) {
  memref::DeallocOp free;
  for (Operation *user : alloc->getUsers())
    if (auto d = dyn_cast<memref::DeallocOp>(user)) {
      if (free || d->getBlock() != alloc->getBlock())
        return {};
      free = d;
    }
  return free;
}

/// Moves `alloc` (and its free) out of the parallel loop whose body it
/// starts; false if it is not in such a body.
bool hoist(memref::AllocOp alloc) {
  if (alloc->getNumOperands() != 0)
    return false;
  memref::DeallocOp free = onlyFree(alloc);
  if (!free)
    return false;
  Operation *parent = alloc->getParentOp();
  // convert-scf-to-openmp wraps a body with allocas in an alloca_scope.
  if (isa<memref::AllocaScopeOp>(parent)) {
    if (free->getParentOp() != parent)
      return false;
    parent = parent->getParentOp();
  }
  // omp.parallel { omp.wsloop { omp.loop_nest { body } } }: the start of
  // the parallel region runs once per thread.
  if (isa<omp::LoopNestOp>(parent)) {
    auto wsloop = dyn_cast_or_null<omp::WsloopOp>(parent->getParentOp());
    auto parallel =
        wsloop ? dyn_cast_or_null<omp::ParallelOp>(wsloop->getParentOp())
               : omp::ParallelOp();
    if (!parallel || !parallel.getRegion().hasOneBlock())
      return false;
    Block &region = parallel.getRegion().front();
    alloc->moveBefore(&region, region.begin());
    free->moveBefore(region.getTerminator());
    return true;
  }
  // A serial loop: one buffer for all its iterations.
  if (auto loop = dyn_cast<scf::ParallelOp>(parent)) {
    alloc->moveBefore(loop);
    free->moveAfter(loop);
    return true;
  }
  return false;
}

struct AttnHoistThreadScratchPass
    : public attn::impl::AttnHoistThreadScratchBase<
          AttnHoistThreadScratchPass> {
  void runOnOperation() override {
    // Every allocation, tagged or not: hoist() moves those that qualify.
    SmallVector<memref::AllocOp> allocs;
    getOperation()->walk(
        [&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    for (memref::AllocOp alloc : allocs)
      hoist(alloc);
  }
};

} // namespace
