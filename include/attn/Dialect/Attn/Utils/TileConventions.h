//===- TileConventions.h - conventions of the tiling ------------*- C++ -*-===//
//
// Part of the attn project.
//
// The conventions that attn-tile-online-softmax's tile ops follow and that
// a target reads back: scores in base-2 units (log2(e), ln(2)), the
// discardable attributes a tile op may carry beside its role
// (attn.score_scale, attn.hidden_above, attn.hidden_below) and P.V's map of
// V in key pairs. Target-neutral: no target dialect is named here.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_TILECONVENTIONS_H
#define ATTN_DIALECT_ATTN_UTILS_TILECONVENTIONS_H

#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::attn {

/// log2(e) and ln(2): scores live in base-2 units. The tiling multiplies the
/// query tile by scale * log2(e) and its loops use exp2; the lse goes back
/// to natural units by ln(2). Written as f32 constants through
/// static_cast<float>.
inline constexpr double kLog2E = 1.4426950408889634;
inline constexpr double kLn2 = 0.6931471805599453;

/// The largest magnitude of a scale, a softcap or an ALiBi slope: the
/// lowerings multiply each by log2(e) into an f32 factor, which must stay
/// finite (FLT_MAX / log2(e), about 2.3587e38; above it the factor is inf and
/// a zero score or distance times it NaN). The op verifiers, the spec parser
/// and attn-run's check of given slopes refuse larger values.
inline constexpr double kMaxLog2EFactor = 3.4028234663852886e38 / kLog2E;

/// The f32 attribute on the `scores` tile op that holds the factor the
/// query tile was multiplied by (scale * log2 e).
inline constexpr llvm::StringLiteral kScoreScaleAttrName = "attn.score_scale";

/// The i64 attribute `h` on the `scores` and `pv` tile ops of a block on the
/// causal diagonal whose geometry is static: key j of the tile is hidden
/// from row i of the tile wherever j > i + h. A kernel may skip such pairs
/// (scores left as they are, for the element mask after them to replace;
/// probabilities of hidden keys are 0, so P.V may leave them out: SPEC's
/// rule 8 lets a hidden key's value row be multiplied by 0 or not at all).
inline constexpr llvm::StringLiteral kHiddenAboveAttrName = "attn.hidden_above";

/// The same for a block on the lower edge of a window band (left bound a
/// multiple of the block): key j of the tile is hidden from row i of the
/// tile wherever j < i - h.
inline constexpr llvm::StringLiteral kHiddenBelowAttrName = "attn.hidden_below";

/// P.V's map of V in key pairs (pair-values), in its dims (e, i, j):
/// (j floordiv 2, 2e + j mod 2).
AffineMap pairedValuesMap(MLIRContext *context);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_UTILS_TILECONVENTIONS_H
