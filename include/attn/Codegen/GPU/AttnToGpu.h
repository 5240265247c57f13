//===- AttnToGpu.h - attn.sdpa to a fused GPU kernel ------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_H
#define ATTN_CONVERSION_ATTNTOGPU_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace attn {

struct ConvertAttnToGpuOptions;

/// Adds the pattern that rewrites `attn.sdpa` on tensors into a `gpu.launch`
/// of a FlashAttention-2 kernel (tensor cores for f16/bf16, FMA for f32) on
/// the operands' buffers. Ops the kernel cannot take are left alone.
void populateAttnToGpuPatterns(RewritePatternSet &patterns,
                               const ConvertAttnToGpuOptions &options);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNTOGPU_H
