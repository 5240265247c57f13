//===- CpuKernelsWiden.h - f16/bf16 tiles widened once to f32 ---*- C++ -*-===//
//
// Part of the attn project.
//
// A K or V tile of f16 (or bf16 off the dot-product path) is converted to
// f32 once per tile, with vector conversions (vcvtph2ps for f16), into a
// scratch buffer of the query block; the f32 contraction then broadcasts from
// it like from an f32 tile (one FMA with an embedded broadcast per element)
// instead of converting one scalar per broadcast. The conversion is exact.
// Private to the attn transforms library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUKERNELSWIDEN_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUKERNELSWIDEN_H

#include "CpuKernels.h"

namespace mlir::attn::detail {

/// The f32 copy of the [rows, cols] f16 or bf16 tile `tile`, built in front
/// of the kernel's insertion point into the query block's scratch buffer of
/// that shape (CpuScratch.h: one for all the widened tiles of the block, K
/// and V alike, each dead once its contraction has run; one per thread
/// after attn-hoist-thread-scratch). Null, building nothing, if `tile` is
/// f32 already or `anchor` is not inside an scf.forall.
Value widenTileToF32(KernelBuilder &kernel, Operation *anchor, Value tile);

} // namespace mlir::attn::detail

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUKERNELSWIDEN_H
