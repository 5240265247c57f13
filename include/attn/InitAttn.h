//===- InitAttn.h - register everything attn provides -----------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_INITATTN_H
#define ATTN_INITATTN_H

namespace mlir {
class DialectRegistry;
namespace attn {

/// Adds the attn dialect and every upstream dialect (and interface
/// extension) that attn's passes produce or that a user pipeline around them
/// needs.
void registerAttnDialects(DialectRegistry &registry);

/// Registers attn's passes and pipelines, and the upstream passes a user of
/// attn-opt needs to take its output further.
void registerAttnPasses();

} // namespace attn
} // namespace mlir

#endif // ATTN_INITATTN_H
