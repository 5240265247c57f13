//===- GpuLaunchBounds.cpp - launch bounds for setmaxnreg kernels ---------===//
//
// Part of the attn project.
//
// ptxas honours setmaxnreg only in a kernel whose register count at entry
// it can determine: launch bounds with a minimum of one CTA per SM. The
// warp-specialized kernels (GpuHopperKernel.cpp) resize their warpgroups'
// registers, so their outlined gpu.func, whose known block size
// convert-gpu-to-nvvm turns into nvvm.maxntid, gets nvvm.minctasm = 1;
// every other kernel is left as it is.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPULAUNCHBOUNDS
#include "attn/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

struct AttnGpuLaunchBoundsPass
    : public attn::impl::AttnGpuLaunchBoundsBase<AttnGpuLaunchBoundsPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto func : getOperation().getOps<gpu::GPUFuncOp>()) {
      if (!func.isKernel())
        continue;
      bool resizes = func.walk([](NVVM::SetMaxRegisterOp) {
                           return WalkResult::interrupt();
                         })
                         .wasInterrupted();
      if (!resizes)
        continue;
      DenseI32ArrayAttr block = func.getKnownBlockSizeAttr();
      if (!block) {
        func.emitOpError("attn-gpu-launch-bounds: a kernel that resizes its "
                         "registers (nvvm.setmaxregister) needs a known block "
                         "size for its launch bounds");
        return signalPassFailure();
      }
      // convert-gpu-to-nvvm turns the known block size into nvvm.maxntid.
      func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    b.getI32IntegerAttr(1));
    }
  }
};

} // namespace
