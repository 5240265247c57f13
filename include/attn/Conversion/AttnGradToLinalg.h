//===- AttnGradToLinalg.h - attn.sdpa_grad to linalg ------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNGRADTOLINALG_H
#define ATTN_CONVERSION_ATTNGRADTOLINALG_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace attn {

/// The naive lowering of attn.sdpa_grad (convert-attn-grad-to-linalg).
void populateAttnGradToLinalgPatterns(RewritePatternSet &patterns);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNGRADTOLINALG_H
