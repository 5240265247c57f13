//===- GpuRebuildCapturedMemrefs.cpp - kernel memrefs as base + indices ---===//
//
// Part of the attn project.
//
// Kernels take one bare pointer per memref argument, which only a memref of
// static shape, strides and offset can be. Every other memref a gpu.launch
// captures is taken apart before the launch and rebuilt inside it, so that
// outlining passes a static 0-d base buffer and index values instead.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUREBUILDCAPTUREDMEMREFS
#include "attn/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// True if `type` can be passed to a kernel as a bare pointer: static shape,
/// strides and offset.
bool isBarePointerCompatible(MemRefType type) {
  if (!type.hasStaticShape())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic);
}

/// The static value where `value` is one, else the dynamic `dynamic`.
OpFoldResult staticOr(int64_t value, Value dynamic, Builder &b) {
  if (ShapedType::isDynamic(value))
    return dynamic;
  return b.getIndexAttr(value);
}

/// Rebuilds `memref` (strided, not bare-pointer compatible) at the start of
/// `launch`'s body from its metadata taken before the launch, and makes the
/// body use the rebuilt value. Fails for a layout that is not strided.
LogicalResult rebuildInside(gpu::LaunchOp launch, Value memref, OpBuilder &b) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return launch.emitOpError("uses a memref whose layout is not strided (")
           << type << "): it cannot be passed to the kernel";

  Location loc = memref.getLoc();
  b.setInsertionPoint(launch);
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);

  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  SmallVector<OpFoldResult> sizeValues, strideValues;
  for (auto [dim, size] : llvm::enumerate(type.getShape()))
    sizeValues.push_back(staticOr(size, metadata.getSizes()[dim], b));
  for (auto [dim, stride] : llvm::enumerate(strides))
    strideValues.push_back(staticOr(stride, metadata.getStrides()[dim], b));
  auto stridedType =
      MemRefType::get(type.getShape(), type.getElementType(),
                      StridedLayoutAttr::get(b.getContext(), offset, strides),
                      type.getMemorySpace());
  Value rebuilt = memref::ReinterpretCastOp::create(
      b, loc, stridedType, metadata.getBaseBuffer(),
      staticOr(offset, metadata.getOffset(), b), sizeValues, strideValues);
  if (stridedType != type)
    rebuilt = memref::CastOp::create(b, loc, type, rebuilt);
  replaceAllUsesInRegionWith(memref, rebuilt, launch.getBody());
  return success();
}

struct AttnGpuRebuildCapturedMemrefs
    : public attn::impl::AttnGpuRebuildCapturedMemrefsBase<
          AttnGpuRebuildCapturedMemrefs> {
  void runOnOperation() override {
    OpBuilder b(&getContext());
    WalkResult walk = getOperation().walk([&](gpu::LaunchOp launch) {
      llvm::SetVector<Value> captured;
      getUsedValuesDefinedAbove(launch.getBody(), captured);
      for (Value value : captured) {
        auto type = dyn_cast<MemRefType>(value.getType());
        if (!type || isBarePointerCompatible(type))
          continue;
        if (failed(rebuildInside(launch, value, b)))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
