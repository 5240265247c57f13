//===- AttnToLinalg.h - attn.sdpa to linalg (naive) -------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOLINALG_H
#define ATTN_CONVERSION_ATTNTOLINALG_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace attn {

/// Adds the pattern that lowers `attn.sdpa` to linalg on tensors with the
/// score table materialized.
void populateAttnToLinalgPatterns(RewritePatternSet &patterns);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNTOLINALG_H
