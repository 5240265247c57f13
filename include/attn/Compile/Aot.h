//===- Aot.h - ahead-of-time compilation into a shared library --*- C++ -*-===//
//
// Part of the attn project.
//
// attn-compile's library: compiles functions (built from `--sdpa` specs or
// taken from a user's module) for the CPU or for CUDA into one shared
// library with the C ABI of include/attn-c/attn.h, and writes the JSON
// description beside it (docs/c-abi.md). The library needs libc (and libm)
// only; a cuda one loads libcuda.so.1 at run time.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COMPILE_AOT_H
#define ATTN_COMPILE_AOT_H

#include "attn/Spec/HostTensor.h"
#include "attn/Spec/SdpaSpec.h"
#include "attn/Tuning/Tuning.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
namespace attn::compile {

enum class Target { Cpu, Cuda };

/// "cpu" / "cuda".
llvm::StringRef targetName(Target target);

/// Which lowering of attn.sdpa a library holds: the fused one
/// (attn-lower-cpu / attn-lower-gpu) or the naive oracle
/// (attn-lower-naive-cpu / attn-lower-naive-gpu).
enum class Lowering { Fused, Naive };

/// "fused" / "naive".
llvm::StringRef loweringName(Lowering lowering);

/// One dim of a buffer in the ABI: a static size, or the name of a dynamic
/// size whose value the caller passes in `dims`.
struct AbiDim {
  int64_t size = 0;
  /// Non-empty for a dynamic dim ("b", "lq", "lk", or "argI_dJ"/"resultI_dJ"
  /// for an entry that is not one attn.sdpa on its arguments).
  std::string dim;
};

struct AbiTensor {
  std::string name;
  exec::DType dtype = exec::DType::F32;
  std::vector<AbiDim> shape;
};

/// What one exported entry point takes: its buffers and dynamic sizes.
struct FunctionAbi {
  std::string name;
  /// The canonical spec string when the function was built from one.
  std::optional<std::string> spec;
  std::vector<AbiTensor> args, results;
  /// The names of the dynamic sizes, in the order of the `dims` argument.
  std::vector<std::string> dims;
  /// Groups of those names that are one size of an attn op (the packed rows
  /// of an attn.sdpa_varlen's query and its out, ...): the entry point
  /// refuses a call whose values in a group differ.
  std::vector<std::vector<std::string>> sameDims;
  /// The FLOP count (SdpaProblem::flops()) of a static spec.
  std::optional<int64_t> flops;
};

/// The ABI of `entry`, a function over ranked tensors (or, for the cuda
/// target, over memrefs with the identity layout and no results) of f32,
/// f16, bf16 or i1. When `entry` is one attn.sdpa on its arguments, its
/// buffers are named query, key, value, mask, out, lse and its dynamic dims
/// by role: b (dim 0), lq (dim 2 of query/out/lse, 2 of the mask), lk (dim 2
/// of key/value, 3 of the mask); a dynamic mask dim takes its role's value
/// (no run-time broadcast). Otherwise buffers are argI/resultI and every
/// dynamic dim has its own name argI_dJ/resultI_dJ.
llvm::Expected<FunctionAbi> analyzeAbi(func::FuncOp entry,
                                       llvm::StringRef exportName);

/// One function to put in the library.
struct AotFunction {
  /// The exported symbol: a C identifier, unique in the library.
  std::string name;
  OwningOpRef<ModuleOp> module;
  /// The function of `module` to export.
  std::string entry;
  /// Set when the module was built from a spec (for the JSON).
  std::optional<exec::SdpaSpec> spec;
};

struct AotOptions {
  Target target = Target::Cpu;
  /// The fused lowering or the naive oracle.
  Lowering lowering = Lowering::Fused;
  /// cuda: the SM to compile for (sm_80, sm_90, ...).
  std::string chip = "sm_80";
  /// cpu: "native" (this machine's CPU and features), "generic", or an LLVM
  /// CPU name (x86-64-v3, x86-64-v4, skylake-avx512, ...).
  std::string cpu = "native";
  /// The fused lowering's tuning knobs that were given (Tuning.td;
  /// attn-compile's flags), checked: attn-lower-cpu's for the cpu target,
  /// attn-lower-gpu's for cuda. The others keep the library's defaults
  /// (KnobValues::withLibraryDefaults: no OpenMP), else --cpu's where they
  /// depend on the CPU (kernels=auto, blend-stores, amx-fp16), else the
  /// pipeline's.
  tuning::KnobValues tuning;
  /// The C compiler that links the library; empty: $CC, else the one CMake
  /// found when attn was configured.
  std::string cCompiler;
  /// The CUDA toolkit (ptxas, fatbinary, libdevice).
  std::string cudaToolkit = "/usr/local/cuda";
  /// cuda: also write every kernel's PTX beside the library (LIB.ptx), and
  /// its SASS (LIB.sass: the PTX assembled by the toolkit's ptxas for the
  /// chip, disassembled by nvdisasm), as Triton keeps kernel.ptx and
  /// kernel.asm.
  bool emitPtx = false, emitSass = false;
  /// nvdisasm for emitSass; empty: the toolkit's, else one on PATH, else
  /// the one of PyPI's nvidia-cuda-nvdisasm in python3 (scripts/setup.sh).
  std::string nvdisasm;

  /// cpu: whether the library runs its query blocks on OpenMP threads (the
  /// library then needs libomp.so).
  bool openmp() const;
};

/// The options of the cuda lowering that buildCudaPipelineFor() builds.
struct CudaPipelineOptions {
  std::string chip = "sm_80";
  std::string toolkit = "/usr/local/cuda";
  Lowering lowering = Lowering::Fused;
  /// The fused lowering's knobs that were given (attn-lower-gpu's); the
  /// others keep convert-attn-to-gpu's defaults.
  tuning::KnobValues tuning;
  /// What each gpu.binary holds: fatbin (the libraries'), bin or isa (PTX).
  std::string format = "fatbin";
};

/// Fills `pm` with the lowering of a module for the cuda target, ending in
/// the LLVM dialect with the kernels embedded as a gpu.binary (fatbin) and
/// host code calling the mgpu* runtime (lib/Runtime/CUDA): the GPU pipeline
/// of `options.lowering` (buildGpuPipeline, attn-lower-gpu, or
/// buildNaiveGpuPipeline, attn-lower-naive-gpu) for `chip` with the toolkit
/// `toolkit`. Memref arguments of the lowered functions are device pointers.
/// A module whose device code is already gpu.launch over memrefs goes
/// through the same pipeline (nothing for its attn passes to do).
/// Call verifyGpuPipelineOptions (compileLibrary() does) for the chip first.
llvm::Error buildCudaPipelineFor(OpPassManager &pm,
                                 const CudaPipelineOptions &options);

/// Compiles `functions` into the shared library `outputPath` and writes its
/// JSON description next to it (describeLibrary()). Errors are one line;
/// MLIR diagnostics of a failed lowering also go to the context's handler.
llvm::Error compileLibrary(MLIRContext &context,
                           std::vector<AotFunction> &functions,
                           const AotOptions &options,
                           llvm::StringRef outputPath);

/// A function of a library: one attn.sdpa of `spec` (entry `sdpa`),
/// exported as `name`.
llvm::Expected<AotFunction> functionFromSpec(MLIRContext &context,
                                             const exec::SdpaSpec &spec,
                                             llvm::StringRef name);

/// A function of a library from the file `path`: `entry` (empty: the first
/// function that calls attn.sdpa, else the first with a body), exported as
/// `name` (empty: the entry's name). Parse diagnostics go to `sourceMgr`'s
/// handler.
llvm::Expected<AotFunction> functionFromFile(MLIRContext &context,
                                             llvm::SourceMgr &sourceMgr,
                                             llvm::StringRef path,
                                             llvm::StringRef entry,
                                             llvm::StringRef name);

/// The JSON description (docs/c-abi.md) of a library of `functions`.
llvm::json::Value describeLibrary(const std::vector<FunctionAbi> &functions,
                                  const AotOptions &options);

/// `lib/libfoo.so` -> `lib/libfoo.json`.
std::string jsonPathFor(llvm::StringRef libraryPath);

/// `lib/libfoo.so` -> `lib/libfoo.<extension>`.
std::string sidePathFor(llvm::StringRef libraryPath, llvm::StringRef extension);

} // namespace attn::compile
} // namespace mlir

#endif // ATTN_COMPILE_AOT_H
