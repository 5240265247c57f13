//===- Problem.cpp - from a spec or an entry function to a problem --------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/Problem.h"
#include "ProblemBuild.h"

#include "attn/Spec/Error.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::exec;

std::optional<DType> mlir::attn::exec::dtypeOf(Type elementType) {
  if (elementType.isF32())
    return DType::F32;
  if (elementType.isF16())
    return DType::F16;
  if (elementType.isBF16())
    return DType::BF16;
  if (elementType.isInteger(1))
    return DType::Bool;
  if (elementType.isF64())
    return DType::F64;
  if (elementType.isInteger(32))
    return DType::I32;
  return std::nullopt;
}

Type mlir::attn::exec::elementTypeOf(MLIRContext &context, DType dtype) {
  Builder b(&context);
  switch (dtype) {
  case DType::F32:
    return b.getF32Type();
  case DType::F16:
    return b.getF16Type();
  case DType::BF16:
    return b.getBF16Type();
  case DType::Bool:
    return b.getI1Type();
  case DType::F64:
    return b.getF64Type();
  case DType::I32:
    return b.getI32Type();
  }
  llvm_unreachable("unknown DType");
}

Causal mlir::attn::exec::toHostCausal(std::optional<CausalKind> kind) {
  if (!kind)
    return Causal::None;
  return *kind == CausalKind::TopLeft ? Causal::TopLeft : Causal::BottomRight;
}

std::optional<CausalKind> mlir::attn::exec::toCausalKind(Causal causal) {
  switch (causal) {
  case Causal::None:
    return std::nullopt;
  case Causal::TopLeft:
    return CausalKind::TopLeft;
  case Causal::BottomRight:
    return CausalKind::BottomRight;
  }
  llvm_unreachable("unknown Causal");
}

llvm::Expected<DimSizes> mlir::attn::exec::parseDimSizes(llvm::StringRef text) {
  DimSizes dims;
  if (text.empty())
    return dims;
  SmallVector<StringRef> items;
  text.split(items, ',');
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    int64_t n;
    if ((key != "b" && key != "lq" && key != "lk") ||
        value.trim().getAsInteger(10, n) || n <= 0)
      return makeError("--dims expects b=N,lq=N,lk=N with N > 0, got '" + item +
                       "'");
    dims[key.str()] = n;
  }
  return dims;
}

//===----------------------------------------------------------------------===//
// From a spec
//===----------------------------------------------------------------------===//

EntrySignature mlir::attn::exec::signatureOf(const SdpaSpec &spec) {
  SdpaSpec full = spec.withDefaults();
  EntrySignature signature;
  signature.args = full.argSpecs();
  signature.results = full.resultSpecs();
  signature.problem = full.toProblem();
  return signature;
}

/// `spec` as a tensor type; the dims set in `dynamicDims` are '?'.
static RankedTensorType tensorTypeOf(MLIRContext &context,
                                     const TensorSpec &spec,
                                     ArrayRef<bool> dynamicDims) {
  SmallVector<int64_t> shape(spec.shape.begin(), spec.shape.end());
  for (auto [i, dynamic] : llvm::enumerate(dynamicDims))
    if (dynamic)
      shape[i] = ShapedType::kDynamic;
  return RankedTensorType::get(shape, elementTypeOf(context, spec.dtype));
}

OwningOpRef<ModuleOp>
mlir::attn::exec::buildSdpaModule(MLIRContext &context, const SdpaSpec &spec,
                                  llvm::StringRef funcName) {
  context.getOrLoadDialect<AttnDialect>();
  context.getOrLoadDialect<func::FuncDialect>();
  SdpaSpec full = spec.withDefaults();
  if (full.isVarlen())
    return buildSdpaVarlenModule(context, full, funcName);
  if (full.isPaged())
    return buildSdpaPagedModule(context, full, funcName);
  EntrySignature signature = signatureOf(full);
  bool dynamic = full.dynamic;
  // B and the sequence dims (0 and 2) of query, key, value, out and lse.
  SmallVector<bool> batchAndSeq = {dynamic, false, dynamic, false};

  SmallVector<Type> argTypes, resultTypes;
  for (auto [i, arg] : llvm::enumerate(signature.args)) {
    SmallVector<bool> dynamicDims = batchAndSeq;
    bool isMask = i == 3 && full.mask != MaskKind::None;
    if (isMask) // The mask: its B, Lq and Lk dims unless broadcast.
      for (auto [d, size] : llvm::enumerate(arg.shape))
        dynamicDims[d] = dynamic && d != 1 && size != 1;
    else if (i >= 3 && arg.shape.size() == 2) // ALiBi slopes [B, Hq].
      dynamicDims = {dynamic, false};
    else if (i >= 3) // Key lengths [B], or ALiBi slopes [Hq] (the last).
      dynamicDims = {dynamic && !(full.alibi == SdpaProblem::Alibi::Heads &&
                                  i + 1 == signature.args.size())};
    argTypes.push_back(tensorTypeOf(context, arg, dynamicDims));
  }
  for (const TensorSpec &result : signature.results)
    resultTypes.push_back(tensorTypeOf(
        context, result,
        ArrayRef<bool>(batchAndSeq).take_front(result.shape.size())));

  OpBuilder b(&context);
  Block *body = nullptr;
  OwningOpRef<ModuleOp> module = detail::createSpecFunction(
      context, b, funcName, argTypes, resultTypes, body);
  Location loc = module->getLoc();
  Value mask = full.mask != MaskKind::None ? body->getArgument(3) : Value();
  unsigned next = mask ? 4 : 3;
  Value keyLengths = full.keyLengths ? body->getArgument(next++) : Value();
  Value slopes = full.alibi != SdpaProblem::Alibi::None
                     ? body->getArgument(next)
                     : Value();
  auto [scale, softcap, causal, window] = detail::specAttrsOf(b, full);
  auto sdpa =
      SdpaOp::create(b, loc, resultTypes, body->getArgument(0),
                     body->getArgument(1), body->getArgument(2), mask,
                     keyLengths, slopes, scale, causal, window, softcap);
  func::ReturnOp::create(b, loc, sdpa->getResults());
  return module;
}

//===----------------------------------------------------------------------===//
// From an entry function
//===----------------------------------------------------------------------===//

llvm::Expected<func::FuncOp>
mlir::attn::exec::findEntry(ModuleOp module, llvm::StringRef name,
                            llvm::StringRef source) {
  if (!name.empty()) {
    auto entry = module.lookupSymbol<func::FuncOp>(name);
    if (!entry || entry.isDeclaration())
      return makeError("no function @" + name + " with a body");
    return entry;
  }
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isDeclaration() &&
        f.walk([](SdpaOp) { return WalkResult::interrupt(); }).wasInterrupted())
      return f;
  return makeError("no function in " + source + " calls attn.sdpa");
}

/// The attn.sdpa that `entry` is, when its body is exactly
/// `return attn.sdpa(arg0, arg1, ...)`.
SdpaOp mlir::attn::exec::getSoleSdpaOnArguments(func::FuncOp entry) {
  Block &body = entry.getBody().front();
  SdpaOp sdpa;
  unsigned count = 0;
  entry.walk([&](SdpaOp op) {
    sdpa = op;
    ++count;
  });
  if (count != 1 || sdpa->getBlock() != &body ||
      sdpa->getNumOperands() != entry.getNumArguments())
    return {};
  for (auto [i, operand] : llvm::enumerate(sdpa->getOperands())) {
    auto arg = dyn_cast<BlockArgument>(operand);
    if (!arg || arg.getOwner() != &body || arg.getArgNumber() != i)
      return {};
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  if (ret.getOperands() != ValueRange(sdpa->getResults()))
    return {};
  return sdpa;
}

/// The signature of an entry that is not one sdpa: every type static.
static llvm::Expected<EntrySignature> staticSignature(func::FuncOp entry) {
  EntrySignature signature;
  auto collect = [&](TypeRange types, const char *what,
                     std::vector<TensorSpec> &specs) -> llvm::Error {
    for (auto [i, type] : llvm::enumerate(types)) {
      auto tensor = cast<RankedTensorType>(type);
      if (!tensor.hasStaticShape())
        return makeError(llvm::Twine(what) + " " + llvm::Twine(i) + " of @" +
                         entry.getSymName() +
                         " has dynamic dims that --dims cannot size (only an "
                         "entry that is one attn.sdpa on its arguments can "
                         "be sized)");
      specs.push_back({std::vector<int64_t>(tensor.getShape().begin(),
                                            tensor.getShape().end()),
                       *dtypeOf(tensor.getElementType())});
    }
    return llvm::Error::success();
  };
  FunctionType type = entry.getFunctionType();
  if (llvm::Error e = collect(type.getInputs(), "argument", signature.args))
    return std::move(e);
  if (llvm::Error e = collect(type.getResults(), "result", signature.results))
    return std::move(e);
  return signature;
}

/// The problem of a one-sdpa entry, with dynamic sizes taken from `dims`.
static llvm::Expected<SdpaProblem> problemOf(SdpaOp op, const DimSizes &dims) {
  std::optional<std::string> error;
  auto sizeOf = [&](int64_t staticSize, const char *name) -> int64_t {
    auto it = dims.find(name);
    if (!ShapedType::isDynamic(staticSize)) {
      if (it != dims.end() && it->second != staticSize && !error)
        error = std::string("--dims ") + name + "=" +
                std::to_string(it->second) + " contradicts the static size " +
                std::to_string(staticSize);
      return staticSize;
    }
    if (it == dims.end()) {
      if (!error)
        error = std::string("dim ") + name +
                " is dynamic: give its size with --dims " + name + "=N";
      return 1;
    }
    return it->second;
  };
  RankedTensorType q = op.getQueryType(), k = op.getKeyType();
  SdpaProblem p;
  p.b = sizeOf(ShapedType::isDynamic(q.getDimSize(0)) ? k.getDimSize(0)
                                                      : q.getDimSize(0),
               "b");
  p.hq = q.getDimSize(1);
  p.hkv = k.getDimSize(1);
  p.lq = sizeOf(q.getDimSize(2), "lq");
  p.lk = sizeOf(k.getDimSize(2), "lk");
  if (error)
    return makeError(*error);
  p.d = q.getDimSize(3);
  p.dv = op.getValueType().getDimSize(3);
  p.scale = op.getEffectiveScale();
  p.causal = toHostCausal(op.getCausalKind());
  if (std::optional<ArrayRef<int64_t>> window = op.getWindow();
      window && window->size() == 2)
    p.window = {(*window)[0], (*window)[1]};
  if (std::optional<APFloat> cap = op.getSoftcap())
    p.softcap = cap->convertToDouble();
  p.keyLengths = static_cast<bool>(op.getKeyLengths());
  if (Value slopes = op.getAlibiSlopes())
    p.alibi = cast<RankedTensorType>(slopes.getType()).getRank() == 1
                  ? SdpaProblem::Alibi::Heads
                  : SdpaProblem::Alibi::BatchHeads;
  p.lse = static_cast<bool>(op.getLse());
  int64_t full[4] = {p.b, p.hq, p.lq, p.lk};
  if (Value mask = op.getMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    p.mask = op.hasBoolMask() ? MaskKind::Bool : MaskKind::Float;
    for (int64_t i = 0; i < 4; ++i)
      p.maskShape.push_back(maskType.isDynamicDim(i) ? full[i]
                                                     : maskType.getDimSize(i));
  }
  if (llvm::Error e = p.validate())
    return std::move(e);
  return p;
}

llvm::Expected<EntrySignature>
mlir::attn::exec::analyzeEntry(func::FuncOp entry, const DimSizes &dims) {
  FunctionType type = entry.getFunctionType();
  for (Type t : llvm::concat<const Type>(type.getInputs(), type.getResults())) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    std::optional<DType> dtype =
        tensor ? dtypeOf(tensor.getElementType()) : std::nullopt;
    if (!dtype || *dtype == DType::F64)
      return makeError(
          "@" + entry.getSymName() +
          " must take and return ranked tensors of f32, f16, bf16 or i1");
  }

  SdpaOp op = getSoleSdpaOnArguments(entry);
  if (!op) {
    if (!dims.empty())
      return makeError(
          "--dims needs an entry that is one attn.sdpa on its arguments");
    return staticSignature(entry);
  }
  llvm::Expected<SdpaProblem> problem = problemOf(op, dims);
  if (!problem)
    return problem.takeError();
  const SdpaProblem &p = *problem;
  EntrySignature signature;
  auto dtypeOfValue = [](Value v) {
    return *dtypeOf(cast<RankedTensorType>(v.getType()).getElementType());
  };
  signature.args = {{{p.b, p.hq, p.lq, p.d}, dtypeOfValue(op.getQuery())},
                    {{p.b, p.hkv, p.lk, p.d}, dtypeOfValue(op.getKey())},
                    {{p.b, p.hkv, p.lk, p.dv}, dtypeOfValue(op.getValue())}};
  if (Value mask = op.getMask())
    signature.args.push_back({p.maskShape, dtypeOfValue(mask)});
  if (op.getKeyLengths())
    signature.args.push_back({{p.b}, DType::I32});
  if (p.alibi == SdpaProblem::Alibi::Heads)
    signature.args.push_back({{p.hq}, DType::F32});
  else if (p.alibi == SdpaProblem::Alibi::BatchHeads)
    signature.args.push_back({{p.b, p.hq}, DType::F32});
  signature.results = {{{p.b, p.hq, p.lq, p.dv}, dtypeOfValue(op.getOut())}};
  if (p.lse)
    signature.results.push_back({{p.b, p.hq, p.lq}, DType::F32});
  signature.problem = p;
  return signature;
}

OwningOpRef<ModuleOp> mlir::attn::exec::detail::createSpecFunction(
    MLIRContext &context, OpBuilder &b, llvm::StringRef funcName,
    TypeRange argTypes, TypeRange resultTypes, Block *&body) {
  Location loc = FileLineColLoc::get(&context, "--sdpa", 1, 1);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc, funcName,
                                   b.getFunctionType(argTypes, resultTypes));
  body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  return module;
}

mlir::attn::exec::detail::SpecAttrs
mlir::attn::exec::detail::specAttrsOf(OpBuilder &b, const SdpaSpec &full) {
  SpecAttrs attrs;
  if (full.scale)
    attrs.scale = b.getF32FloatAttr(static_cast<float>(*full.scale));
  if (full.softcap)
    attrs.softcap = b.getF32FloatAttr(static_cast<float>(*full.softcap));
  if (std::optional<CausalKind> kind = toCausalKind(full.causal))
    attrs.causal = CausalKindAttr::get(b.getContext(), *kind);
  if (full.window)
    attrs.window =
        b.getDenseI64ArrayAttr({full.window->first, full.window->second});
  return attrs;
}
