//===- Pipelines.h - named attn pass pipelines ------------------*- C++ -*-===//
//
// Part of the attn project.
//
// Every tool builds its pipelines from these functions, so that attn-opt,
// attn-run and the tests lower the same way.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace attn {

/// Lowers the bufferized, loop-level module (memref, scf, arith, math,
/// vector, omp) to the LLVM dialect. Shared by the CPU pipelines.
void buildLowerToLLVMPipeline(OpPassManager &pm);

/// `attn-lower-naive-cpu`: convert-attn-to-linalg, one-shot bufferization,
/// loops, LLVM. The reference (oracle) lowering for the CPU.
void buildNaiveCpuPipeline(OpPassManager &pm);

/// Options of the fused CPU pipeline. The defaults of the options it hands
/// to a pass are that pass's own (its generated Attn...Options struct), so
/// that each default is written once, in Passes.td.
struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<int64_t> blockQ{
      *this, "block-q",
      llvm::cl::desc("Query rows per block of the online-softmax tiling"),
      llvm::cl::init(AttnTileOnlineSoftmaxOptions{}.blockQ)};
  PassOptions::Option<int64_t> blockKV{
      *this, "block-kv",
      llvm::cl::desc("Keys per block of the online-softmax loop"),
      llvm::cl::init(AttnTileOnlineSoftmaxOptions{}.blockKV)};
  PassOptions::Option<bool> microkernels{
      *this, "microkernels",
      llvm::cl::desc("Replace the tile ops with vector microkernels "
                     "(attn-cpu-microkernels)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("f32 lanes per vector in the microkernels"),
      llvm::cl::init(AttnCpuMicrokernelsOptions{}.vectorWidth)};
  PassOptions::Option<int64_t> regBlock{
      *this, "reg-block",
      llvm::cl::desc("Keys or value columns per register block"),
      llvm::cl::init(AttnCpuMicrokernelsOptions{}.regBlock)};
  PassOptions::Option<int64_t> rowVectors{
      *this, "row-vectors",
      llvm::cl::desc("Row vectors per register block in the microkernels"),
      llvm::cl::init(AttnCpuMicrokernelsOptions{}.rowVectors)};
  PassOptions::Option<bool> openmp{
      *this, "openmp", llvm::cl::desc("Run the query blocks on OpenMP threads"),
      llvm::cl::init(true)};
};

/// `attn-lower-cpu`: attn-tile-online-softmax, bufferization, loops,
/// OpenMP, LLVM. The fused lowering for the CPU.
void buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// Registers the named pipelines above with the global pass registry.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
