//===- GpuDeviceBuffers.cpp - host buffers in GPU device memory -----------===//
//
// Part of the attn project.
//
// For the GPU pipelines, after bufferization: the buffers a host function
// allocates become device allocations and its copies become linalg.copy (a
// kernel once the linalg ops are mapped to the GPU). A load or store left to
// the host is an error, since every buffer is in device memory.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUDEVICEBUFFERS
#include "attn/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// True for the ops through which host code would read or write a buffer's
/// elements itself.
bool accessesElements(Operation *op) {
  return isa<memref::LoadOp, memref::StoreOp, vector::TransferReadOp,
             vector::TransferWriteOp, vector::LoadOp, vector::StoreOp,
             vector::MaskedLoadOp, vector::MaskedStoreOp>(op);
}

/// Collects the users of `value` and, through memref.cast, of its casts.
void collectUsers(Value value, SmallVectorImpl<Operation *> &users) {
  for (Operation *user : value.getUsers()) {
    users.push_back(user);
    if (auto cast = dyn_cast<memref::CastOp>(user))
      collectUsers(cast.getResult(), users);
  }
}

/// A buffer that the function allocates, fills and then copies into one of
/// its arguments (a result that bufferization could not write in place, as
/// convert-attn-to-gpu allocates its results) is replaced by that argument:
/// the kernels write the caller's buffer directly, with no allocation and no
/// copy. Only when nothing else touches the argument and nothing but
/// deallocations uses the buffer after the copy.
bool forwardIntoArgument(memref::CopyOp copy, RewriterBase &rewriter) {
  Value source = copy.getSource();
  while (auto cast = source.getDefiningOp<memref::CastOp>())
    source = cast.getSource();
  auto alloc = source.getDefiningOp<memref::AllocOp>();
  auto target = dyn_cast<BlockArgument>(copy.getTarget());
  if (!alloc || !target || alloc->getBlock() != copy->getBlock() ||
      copy->getBlock() != target.getOwner() ||
      !target.getOwner()->isEntryBlock() ||
      !isa<FunctionOpInterface>(target.getOwner()->getParentOp()) ||
      !target.hasOneUse() ||
      !memref::CastOp::areCastCompatible(target.getType(), alloc.getType()))
    return false;
  SmallVector<Operation *> users, deallocs;
  collectUsers(alloc.getResult(), users);
  for (Operation *user : users) {
    if (user == copy || isa<memref::CastOp>(user))
      continue;
    if (isa<memref::DeallocOp>(user)) {
      deallocs.push_back(user);
      continue;
    }
    Operation *inBlock = copy->getBlock()->findAncestorOpInBlock(*user);
    if (!inBlock || !inBlock->isBeforeInBlock(copy))
      return false;
  }
  rewriter.eraseOp(copy);
  for (Operation *dealloc : deallocs)
    rewriter.eraseOp(dealloc);
  rewriter.setInsertionPoint(alloc);
  Value replacement = target;
  if (target.getType() != alloc.getType())
    replacement = memref::CastOp::create(rewriter, alloc.getLoc(),
                                         alloc.getType(), target);
  rewriter.replaceOp(alloc, replacement);
  return true;
}

struct AttnGpuDeviceBuffers
    : public attn::impl::AttnGpuDeviceBuffersBase<AttnGpuDeviceBuffers> {
  void runOnOperation() override {
    // Results copied into the caller's buffers are written there directly.
    IRRewriter forwarder(&getContext());
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies)
      (void)forwardIntoArgument(copy, forwarder);

    SmallVector<Operation *> hostOps;
    WalkResult walk =
        getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
          // Kernels (gpu.launch bodies) and the bodies of linalg ops, which
          // become kernels, keep their own memory ops.
          if (isa<gpu::LaunchOp, linalg::LinalgOp>(op))
            return WalkResult::skip();
          if (accessesElements(op)) {
            op->emitOpError("reads or writes a buffer on the host; the GPU "
                            "pipeline keeps every buffer in device memory");
            return WalkResult::interrupt();
          }
          if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp>(op))
            hostOps.push_back(op);
          return WalkResult::advance();
        });
    if (walk.wasInterrupted())
      return signalPassFailure();

    IRRewriter rewriter(&getContext());
    for (Operation *op : hostOps) {
      rewriter.setInsertionPoint(op);
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        auto deviceAlloc = gpu::AllocOp::create(
            rewriter, alloc.getLoc(), alloc.getType(),
            /*asyncToken=*/Type(), /*asyncDependencies=*/ValueRange(),
            alloc.getDynamicSizes(), alloc.getSymbolOperands(),
            /*hostShared=*/false);
        rewriter.replaceOp(alloc, deviceAlloc.getMemref());
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        rewriter.replaceOpWithNewOp<gpu::DeallocOp>(
            dealloc, /*asyncToken=*/Type(), /*asyncDependencies=*/ValueRange(),
            dealloc.getMemref());
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                    copy.getTarget());
      }
    }
  }
};

} // namespace
