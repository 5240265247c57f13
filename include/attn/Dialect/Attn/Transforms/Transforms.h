//===- Transforms.h - attn dialect rewrite patterns -------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H

#include <cstdint>

namespace mlir {
class RewritePatternSet;
namespace attn {

/// Tile sizes of the online-softmax tiling.
struct OnlineSoftmaxTiling {
  int64_t blockQ = 32;
  int64_t blockKV = 64;
  /// A short static query block is rounded up to a multiple of this (a
  /// target's vector width), so that its rows fill whole vectors.
  int64_t rowMultiple = 1;
};

/// Adds the pattern that tiles `attn.sdpa` into online-softmax loops.
void populateTileOnlineSoftmaxPatterns(RewritePatternSet &patterns,
                                       const OnlineSoftmaxTiling &tiling);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H
