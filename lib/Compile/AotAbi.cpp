//===- AotAbi.cpp - what an attn-compile library exports ------------------===//
//
// Part of the attn project.
//
// The C ABI of each entry (its buffers, dtypes and shapes with named dynamic
// sizes, from the entry's function type) and the JSON that describes the
// library beside it (docs/c-abi.md). Aot.cpp lowers, emits and links.
//
//===----------------------------------------------------------------------===//

#include "attn/Compile/Aot.h"

#include "attn-c/attn.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Spec/Error.h"
#include "attn/Spec/Problem.h"

#include "attn/Dialect/Attn/IR/AttnPagedOps.h"
#include "attn/Dialect/Attn/IR/AttnVarlenOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::compile;
using exec::makeError;

llvm::StringRef mlir::attn::compile::targetName(Target target) {
  return target == Target::Cpu ? "cpu" : "cuda";
}

llvm::StringRef mlir::attn::compile::loweringName(Lowering lowering) {
  return lowering == Lowering::Fused ? "fused" : "naive";
}

std::string mlir::attn::compile::jsonPathFor(llvm::StringRef libraryPath) {
  return sidePathFor(libraryPath, "json");
}

std::string mlir::attn::compile::sidePathFor(llvm::StringRef libraryPath,
                                             llvm::StringRef extension) {
  llvm::SmallString<256> path(libraryPath);
  llvm::sys::path::replace_extension(path, "." + extension);
  return std::string(path);
}

//===----------------------------------------------------------------------===//
// The ABI of an entry.
//===----------------------------------------------------------------------===//

/// The element type and shape of a ranked tensor or identity-layout memref.
static llvm::Expected<std::pair<exec::DType, ArrayRef<int64_t>>>
bufferTypeOf(Type type, const Twine &what) {
  auto shaped = dyn_cast<ShapedType>(type);
  auto memref = dyn_cast<MemRefType>(type);
  bool ok = shaped && shaped.hasRank() &&
            (isa<RankedTensorType>(type) ||
             (memref && memref.getLayout().isIdentity()));
  std::optional<exec::DType> dtype =
      ok ? exec::dtypeOf(shaped.getElementType()) : std::nullopt;
  if (!dtype || *dtype == exec::DType::F64)
    return makeError(what + " must be a ranked tensor (or identity-layout "
                            "memref) of f32, f16, bf16 or i1");
  return std::make_pair(*dtype, shaped.getShape());
}

namespace {
/// A dim of a value: (value, dim index).
using ValueDim = std::pair<Value, unsigned>;
} // namespace

/// The dims of an attn op's operands and results that are one size (the op's
/// verifier requires them equal where static), for the ops whose entries
/// have no role names: attn.sdpa_varlen and attn.sdpa_paged.
static std::vector<std::vector<ValueDim>> sameSizesOf(Operation *op) {
  std::vector<std::vector<ValueDim>> groups;
  auto slopesBatch = [](Value slopes, std::vector<ValueDim> &group) {
    if (slopes && cast<ShapedType>(slopes.getType()).getRank() == 2)
      group.push_back({slopes, 0});
  };
  if (auto varlen = dyn_cast<SdpaVarlenOp>(op)) {
    std::vector<ValueDim> totalQ = {{varlen.getQuery(), 0},
                                    {varlen.getOut(), 0}};
    if (Value lse = varlen.getLse())
      totalQ.push_back({lse, 1});
    groups.push_back(std::move(totalQ));
    groups.push_back({{varlen.getKey(), 0}, {varlen.getValue(), 0}});
    groups.push_back(
        {{varlen.getCuSeqlensQ(), 0}, {varlen.getCuSeqlensK(), 0}});
  } else if (auto paged = dyn_cast<SdpaPagedOp>(op)) {
    std::vector<ValueDim> batch = {{paged.getQuery(), 0},
                                   {paged.getPageTable(), 0},
                                   {paged.getKvLens(), 0},
                                   {paged.getOut(), 0}};
    std::vector<ValueDim> rows = {{paged.getQuery(), 2}, {paged.getOut(), 2}};
    if (Value lse = paged.getLse()) {
      batch.push_back({lse, 0});
      rows.push_back({lse, 2});
    }
    slopesBatch(paged.getAlibiSlopes(), batch);
    groups.push_back(std::move(batch));
    groups.push_back(std::move(rows));
    groups.push_back({{paged.getKeyCache(), 0}, {paged.getValueCache(), 0}});
  }
  return groups;
}

/// sameDims of `abi`: for each attn op of `entry` (sameSizesOf), the names
/// of the dynamic dims of its operands that are arguments and of its results
/// that the entry returns as they are.
static void collectSameDims(func::FuncOp entry, FunctionAbi &abi) {
  Block &body = entry.getBody().front();
  auto returned = cast<func::ReturnOp>(body.getTerminator());
  auto nameOf = [&](ValueDim vd) -> std::string {
    auto [value, d] = vd;
    const AbiTensor *tensor = nullptr;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() == &body)
        tensor = &abi.args[arg.getArgNumber()];
    } else {
      for (OpOperand &use : returned->getOpOperands())
        if (use.get() == value) {
          tensor = &abi.results[use.getOperandNumber()];
          break;
        }
    }
    if (!tensor || d >= tensor->shape.size())
      return "";
    return tensor->shape[d].dim;
  };
  entry.walk([&](Operation *op) {
    for (const std::vector<ValueDim> &group : sameSizesOf(op)) {
      std::vector<std::string> names;
      for (ValueDim vd : group) {
        std::string name = nameOf(vd);
        if (!name.empty() && !llvm::is_contained(names, name))
          names.push_back(name);
      }
      if (names.size() > 1)
        abi.sameDims.push_back(std::move(names));
    }
  });
}

llvm::Expected<FunctionAbi>
mlir::attn::compile::analyzeAbi(func::FuncOp entry,
                                llvm::StringRef exportName) {
  FunctionAbi abi;
  abi.name = exportName.str();
  FunctionType type = entry.getFunctionType();
  SdpaOp sdpa = exec::getSoleSdpaOnArguments(entry);

  // Role names of the buffers and dims of a one-sdpa entry.
  // Argument i is the sdpa's operand i (getSoleSdpaOnArguments), so each is
  // named by the operand it is: the optional mask, key lengths and slopes
  // shift the ones after them.
  auto argName = [&](unsigned index) -> llvm::StringRef {
    Value operand = sdpa->getOperand(index);
    if (operand == sdpa.getQuery())
      return "query";
    if (operand == sdpa.getKey())
      return "key";
    if (operand == sdpa.getValue())
      return "value";
    if (operand == sdpa.getMask())
      return "mask";
    if (operand == sdpa.getKeyLengths())
      return "key_lengths";
    return "alibi_slopes";
  };
  static const char *const resultNames[] = {"out", "lse"};
  auto roleDim = [&](bool isArg, unsigned index, unsigned d) -> std::string {
    llvm::StringRef name = isArg ? argName(index) : "";
    if (name == "alibi_slopes") { // [Hq] or [B, Hq]: only B can be dynamic.
      auto type = cast<ShapedType>(sdpa->getOperand(index).getType());
      return d == 0 && type.getRank() == 2 ? "b" : "";
    }
    if (d == 0)
      return "b";
    bool keys = name == "key" || name == "value";
    if (d == 2)
      return keys ? "lk" : "lq";
    if (d == 3 && name == "mask")
      return "lk";
    return "";
  };

  auto collect = [&](TypeRange types, bool isArg,
                     std::vector<AbiTensor> &out) -> llvm::Error {
    const char *what = isArg ? "arg" : "result";
    for (auto [i, t] : llvm::enumerate(types)) {
      auto bt = bufferTypeOf(t, Twine(what) + " " + Twine(i) + " of @" +
                                    entry.getSymName());
      if (!bt)
        return bt.takeError();
      AbiTensor tensor;
      tensor.dtype = bt->first;
      tensor.name = sdpa ? (isArg ? argName(i).str() : resultNames[i])
                         : (what + std::to_string(i));
      for (auto [d, size] : llvm::enumerate(bt->second)) {
        AbiDim dim{size, ""};
        if (ShapedType::isDynamic(size)) {
          dim.dim = sdpa ? roleDim(isArg, i, d) : "";
          if (dim.dim.empty())
            dim.dim = std::string(what) + std::to_string(i) + "_d" +
                      std::to_string(d);
          if (!llvm::is_contained(abi.dims, dim.dim))
            abi.dims.push_back(dim.dim);
        }
        tensor.shape.push_back(dim);
      }
      out.push_back(std::move(tensor));
    }
    return llvm::Error::success();
  };
  if (llvm::Error e = collect(type.getInputs(), true, abi.args))
    return std::move(e);
  if (llvm::Error e = collect(type.getResults(), false, abi.results))
    return std::move(e);
  if (sdpa) {
    // The canonical order b, lq, lk whatever order the buffers name them in.
    std::vector<std::string> ordered;
    for (const char *name : {"b", "lq", "lk"})
      if (llvm::is_contained(abi.dims, name))
        ordered.push_back(name);
    abi.dims = ordered;
  } else if (!entry.isExternal()) {
    collectSameDims(entry, abi);
  }
  return abi;
}

//===----------------------------------------------------------------------===//
// The JSON description.
//===----------------------------------------------------------------------===//

static llvm::json::Value tensorJson(const AbiTensor &t) {
  llvm::json::Array shape;
  for (const AbiDim &d : t.shape)
    shape.push_back(d.dim.empty() ? llvm::json::Value(d.size)
                                  : llvm::json::Value(d.dim));
  return llvm::json::Object{{"name", t.name},
                            {"dtype", exec::dtypeName(t.dtype)},
                            {"shape", std::move(shape)}};
}

llvm::json::Value
mlir::attn::compile::describeLibrary(const std::vector<FunctionAbi> &functions,
                                     const AotOptions &options) {
  llvm::json::Array fns;
  for (const FunctionAbi &f : functions) {
    llvm::json::Array args, results, dims;
    for (const AbiTensor &t : f.args)
      args.push_back(tensorJson(t));
    for (const AbiTensor &t : f.results)
      results.push_back(tensorJson(t));
    for (const std::string &d : f.dims)
      dims.push_back(d);
    llvm::json::Object fn{{"name", f.name},
                          {"args", std::move(args)},
                          {"results", std::move(results)},
                          {"dims", std::move(dims)}};
    if (f.spec)
      fn["spec"] = *f.spec;
    if (f.flops)
      fn["flops"] = *f.flops;
    fns.push_back(std::move(fn));
  }
  llvm::json::Object lib{{"abi", ATTN_ABI_VERSION},
                         {"target", targetName(options.target)},
                         {"lowering", loweringName(options.lowering)},
                         {"functions", std::move(fns)}};
  // The fused lowering's tuning knobs that were given (none: the pipeline's
  // defaults throughout), by their names in Tuning.td.
  tuning::Pipeline pipeline = options.target == Target::Cuda
                                  ? tuning::Pipeline::Gpu
                                  : tuning::Pipeline::Cpu;
  llvm::json::Object tuning = options.tuning.libraryTuning(pipeline);
  if (options.lowering == Lowering::Fused && !tuning.empty())
    lib["tuning"] = std::move(tuning);
  if (options.target == Target::Cuda) {
    lib["chip"] = options.chip;
  } else {
    lib["cpu"] = options.cpu;
    lib["openmp"] = options.openmp();
    if (options.openmp())
      lib["omp_schedule"] =
          options.tuning.lookup(tuning::KnobId::CpuOmpSchedule)
              .value_or(AttnOmpScheduleOptions{}.kind)
              .str();
  }
  return lib;
}
