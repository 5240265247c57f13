//===- Transforms.h - attn dialect rewrite patterns -------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include <string>

namespace mlir {
class RewritePatternSet;
namespace attn {

/// Adds the pattern that tiles `attn.sdpa` into online-softmax loops with
/// the tile sizes of `options` (the pass's own options, defaults included).
/// The pattern does not apply if a size is not positive.
void populateTileOnlineSoftmaxPatterns(
    RewritePatternSet &patterns, const AttnTileOnlineSoftmaxOptions &options);

/// Why attn-tile-online-softmax with `options` does not make every query
/// block of `op` one decode group (an attn.decode_keys, for a target's
/// decode kernel); empty where it does.
std::string whyNotDecodeGroups(SdpaOp op,
                               const AttnTileOnlineSoftmaxOptions &options);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H
