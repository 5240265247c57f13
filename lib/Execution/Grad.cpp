//===- Grad.cpp - attn-run --grad: check and time the backward pass -------===//
//
// Part of the attn project.
//
// runAttn() with RunOptions::grad: the spec's sdpa is run forward (the fused
// lowering, with its lse), then an attn.sdpa_grad on its operands, its out
// and lse and a seeded random d_out is compiled with both CPU pipelines, run
// on NaN-poisoned outputs, and every gradient is checked against the naive
// lowering and an f64 reference (ReferenceGrad.h) under docs/numerics.md's
// rules. With --bench the backward alone is timed; its FLOPs are 2.5 times
// the forward's (FlashAttention's convention).
//
//===----------------------------------------------------------------------===//

#include "Grad.h"

#include "Checks.h"

#include "attn/Dialect/Attn/IR/AttnGradOps.h"
#include "attn/Dialect/Attn/IR/AttnVarlenOps.h"
#include "attn/Execution/Peak.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Spec/Error.h"
#include "attn/Spec/ReferenceGrad.h"
#include "attn/Spec/ReferenceVarlen.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <thread>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::exec;
using namespace mlir::attn::exec::detail;

static constexpr const char *kGradNames[3] = {"d_query", "d_key", "d_value"};

/// "--grad: attn.sdpa_grad has no window, softcap" for the attributes and
/// operands of a forward that its backward op does not take (a window that
/// bounds something, a softcap, key lengths, ALiBi); success when none.
static llvm::Error refuseUnsupported(StringRef backward,
                                     std::optional<ArrayRef<int64_t>> window,
                                     Attribute softcap, Value keyLengths,
                                     Value alibiSlopes) {
  SmallVector<StringRef> unsupported;
  if (window && llvm::any_of(*window, [](int64_t x) { return x != -1; }))
    unsupported.push_back("window");
  if (softcap)
    unsupported.push_back("softcap");
  if (keyLengths)
    unsupported.push_back("key_lengths");
  if (alibiSlopes)
    unsupported.push_back("alibi");
  if (unsupported.empty())
    return llvm::Error::success();
  return makeError(("--grad: " + backward + " has no ").str() +
                   llvm::join(unsupported, ", ") +
                   " (its backward takes a mask, scale and causal only)");
}

/// Adds `func.func @sdpa_grad(<the forward's arguments>, out, lse, d_out) ->
/// (d_q, d_k, d_v)` beside the spec's forward function, with the forward's
/// attributes: an attn.sdpa_grad for an attn.sdpa (the arguments q, k, v and
/// the mask), an attn.sdpa_varlen_grad for an attn.sdpa_varlen (q, k, v and
/// the two offsets). The backward ops take a mask (attn.sdpa_grad), a scale
/// and a causal flag: a forward with anything else is refused, as its
/// backward would be another function's.
static llvm::Error addGradFunction(ModuleOp module, func::FuncOp forward) {
  SdpaOp fwd = getSoleSdpaOnArguments(forward);
  SdpaVarlenOp varlen;
  forward.walk([&](SdpaVarlenOp op) { varlen = op; });
  Value out, lse;
  if (fwd && fwd.getLse()) {
    if (llvm::Error e = refuseUnsupported(
            "attn.sdpa_grad", fwd.getWindow(), fwd.getSoftcapAttr(),
            fwd.getKeyLengths(), fwd.getAlibiSlopes()))
      return e;
    out = fwd.getOut();
    lse = fwd.getLse();
  } else if (varlen && varlen.getLse()) {
    if (llvm::Error e = refuseUnsupported(
            "attn.sdpa_varlen_grad", varlen.getWindow(),
            varlen.getSoftcapAttr(), Value(), varlen.getAlibiSlopes()))
      return e;
    out = varlen.getOut();
    lse = varlen.getLse();
  } else {
    return makeError("--grad: could not build the backward entry");
  }
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  Location loc = forward.getLoc();
  SmallVector<Type> args(forward.getArgumentTypes());
  Type outType = out.getType();
  args.append({outType, lse.getType(), outType});
  SmallVector<Type> results(forward.getArgumentTypes().take_front(3));
  auto func = func::FuncOp::create(b, loc, "sdpa_grad",
                                   b.getFunctionType(args, results));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  ValueRange a = body->getArguments();
  size_t n = a.size();
  Operation *grad;
  if (fwd) {
    bool hasMask = fwd.getMask() != nullptr;
    grad = SdpaGradOp::create(b, loc, results[0], results[1], results[2], a[0],
                              a[1], a[2], a[n - 3], a[n - 2], a[n - 1],
                              hasMask ? a[3] : Value(), fwd.getScaleAttr(),
                              fwd.getCausalAttr());
  } else {
    grad = SdpaVarlenGradOp::create(b, loc, results[0], results[1], results[2],
                                    a[0], a[1], a[2], a[n - 3], a[n - 2],
                                    a[n - 1], a[3], a[4], varlen.getScaleAttr(),
                                    varlen.getCausalAttr());
  }
  func::ReturnOp::create(b, loc, grad->getResults());
  return llvm::Error::success();
}

static llvm::Error runChecked(JitKernel &kernel, std::vector<HostTensor> &ins,
                              std::vector<HostTensor> &outs) {
  std::vector<HostTensor *> inPtrs, outPtrs;
  for (HostTensor &t : ins)
    inPtrs.push_back(&t);
  for (HostTensor &t : outs) {
    t.fillNaN();
    outPtrs.push_back(&t);
  }
  return kernel.run(inPtrs, outPtrs);
}

static std::vector<HostTensor *> pointers(std::vector<HostTensor> &tensors) {
  std::vector<HostTensor *> ptrs;
  for (HostTensor &t : tensors)
    ptrs.push_back(&t);
  return ptrs;
}

llvm::Expected<RunReport>
mlir::attn::exec::detail::runAttnGrad(MLIRContext &context,
                                      const RunOptions &options) {
  if (!options.spec)
    return makeError("--grad goes with --sdpa SPEC");
  if (options.spec->isPaged())
    return makeError("--grad: attn.sdpa_paged (page_size) has no backward");
  if (options.cuda)
    return makeError("--grad runs on the CPU only: attn.sdpa_grad has no GPU "
                     "lowering");
  if (!options.inputsDir.empty() || !options.dumpDir.empty() ||
      options.guardPages)
    return makeError("--grad does not take --inputs, --dump or --guard-pages");
  if (options.threads < 0 || options.benchRuns < 0)
    return makeError("--bench and --threads must not be negative");
  CpuPipelineOptions pipeline;
  if (llvm::Error e = parsePipelineOptions(options, pipeline))
    return e;

  SdpaSpec spec = options.spec->withDefaults();
  spec.lse = true;
  RunReport report;
  report.grad = true;
  report.seed = options.seed;
  report.threads = options.threads;
  report.ompSchedule = pipeline.ompSchedule;
  report.usedThreads =
      options.threads > 0
          ? options.threads
          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  report.specText = spec.toString();
  report.entry = "sdpa_grad";
  SdpaProblem problem = spec.toProblem();
  // FlashAttention's convention: the backward does 2.5x the forward's FLOPs
  // (five products of the forward's two sizes, one of them recomputing S).
  report.flops = problem.flops() / 2 * 5;

  OwningOpRef<ModuleOp> module = buildSdpaModule(context, spec, "sdpa");
  func::FuncOp forward = *module->getOps<func::FuncOp>().begin();
  if (llvm::Error e = addGradFunction(*module, forward))
    return e;

  // Inputs as attn-run draws them, and a seeded random d_out.
  EntrySignature signature = signatureOf(spec);
  std::vector<HostTensor> fwdIn;
  for (auto [i, t] : llvm::enumerate(signature.args)) {
    HostTensor tensor = HostTensor::zeros(t);
    uint64_t seed = options.seed * 1000003 + i;
    if (t.dtype == DType::Bool)
      fillRandomBool(tensor, seed, 0.8);
    else
      fillRandomNormal(tensor, seed);
    fwdIn.push_back(std::move(tensor));
  }
  if (problem.varlen) {
    // The spec's offsets (seqlens_q, seqlens_k) in the two offset operands.
    fillVarlenOffsets(problem, fwdIn);
    if (llvm::Error e = setVarlenValues(problem, fwdIn))
      return std::move(e);
  }
  std::vector<HostTensor> fwdOut;
  for (const TensorSpec &t : signature.results)
    fwdOut.push_back(HostTensor::zeros(t));
  HostTensor dOut = HostTensor::zeros(signature.results[0]);
  fillRandomNormal(dOut, options.seed * 1000003 + 1000);

  setJitThreads(options.threads);
  auto cpu = [&](OpPassManager &pm) { buildCpuPipeline(pm, pipeline); };
  auto fwdKernel = JitKernel::compile(*module, "sdpa", cpu);
  if (!fwdKernel)
    return makeError("forward: " + toString(fwdKernel.takeError()));
  if (llvm::Error e = runChecked(**fwdKernel, fwdIn, fwdOut))
    return std::move(e);

  std::vector<HostTensor> ins = fwdIn;
  ins.push_back(fwdOut[0]);
  ins.push_back(fwdOut[1]);
  ins.push_back(dOut);
  for (const HostTensor &t : ins)
    report.inputs.push_back({t.shape, t.dtype});
  std::vector<HostTensor> fused, naive;
  for (int i = 0; i < 3; ++i)
    fused.push_back(
        HostTensor::zeros({signature.args[i].shape, signature.args[i].dtype}));

  auto fusedKernel = JitKernel::compile(*module, "sdpa_grad", cpu);
  if (!fusedKernel)
    return makeError("fused lowering: " + toString(fusedKernel.takeError()));
  if (llvm::Error e = runChecked(**fusedKernel, ins, fused))
    return std::move(e);

  // The naive backward holds four [B, Hq, Lq, Lk] f32 tables.
  bool runNaive =
      options.check == CheckMode::All || options.check == CheckMode::Naive;
  double tableGib = 16.0 * problem.b * problem.hq * double(problem.lq) *
                    double(problem.lk) / (1024.0 * 1024.0 * 1024.0);
  if (runNaive && tableGib > options.naiveLimitGib) {
    report.naiveSkipped = llvm::formatv(
        "naive lowering skipped: its tables need {0:f1} GiB (limit {1:f1}, "
        "--naive-limit-gib)",
        tableGib, options.naiveLimitGib);
    runNaive = false;
  }
  std::unique_ptr<JitKernel> naiveKernel;
  if (runNaive) {
    auto compiled =
        JitKernel::compile(*module, "sdpa_grad", [](OpPassManager &pm) {
          buildNaiveCpuPipeline(pm);
        });
    if (!compiled)
      return makeError("naive lowering: " + toString(compiled.takeError()));
    naiveKernel = std::move(*compiled);
    naive = fused; // Shapes and dtypes; runChecked poisons them.
    if (llvm::Error e = runChecked(*naiveKernel, ins, naive))
      return std::move(e);
  }

  // The f64 reference: about the forward's FLOPs twice over, in plain loops.
  bool runRef =
      options.check == CheckMode::All || options.check == CheckMode::F64;
  double refGflop = 2.0 * problem.flops() / 1e9;
  if (runRef && refGflop > std::max(1e-3, options.refLimitGflop)) {
    report.refSkipped = llvm::formatv(
        "f64 reference skipped: {0:f1} GFLOP is over the limit ({1:f1}, "
        "--ref-limit-gflop)",
        refGflop, options.refLimitGflop);
    runRef = false;
  }
  const HostTensor *mask = fwdIn.size() > 3 ? &fwdIn[3] : nullptr;
  GradReference ref;
  GradSensitivity sens, sensOut;
  bool lowPrecision = spec.dtype == DType::F16 || spec.dtype == DType::BF16;
  if (runRef && problem.varlen) {
    referenceVarlenGrad(
        problem, fwdIn, dOut, ref, lowPrecision ? &sensOut : &sens,
        lowPrecision ? std::optional(fwdOut[0].dtype) : std::nullopt,
        options.seed);
  } else if (runRef) {
    referenceSdpaGrad(problem, fwdIn[0], fwdIn[1], fwdIn[2], mask, dOut, ref);
    if (!lowPrecision)
      sens = measureGradSensitivity(problem, fwdIn[0], fwdIn[1], fwdIn[2], mask,
                                    dOut, ref, options.seed);
    else
      sensOut =
          measureOutRoundingSensitivity(problem, fwdIn[0], fwdIn[1], fwdIn[2],
                                        mask, dOut, fwdOut[0].dtype, ref);
  }

  for (int g = 0; g < 3; ++g) {
    DType dtype = fused[g].dtype;
    double sensRel = lowPrecision ? 0 : sens.relL2[g];
    double sensAbs = lowPrecision ? 0 : sens.maxAbs[g];
    double sensOutRel = lowPrecision ? sensOut.relL2[g] : 0;
    auto record = [&](const char *oracle, const ErrorStats &stats,
                      std::optional<double> naiveRelL2) {
      CheckRecord c;
      c.result = kGradNames[g];
      c.oracle = oracle;
      c.stats = stats;
      // sens_out is the exact gradient's distance from the one that takes
      // the exact out rounded to the element type: it widens the checks
      // against f64, not fused against naive (both were given one out).
      bool againstF64 = std::string(oracle) != "naive";
      c.verdict = judgeNumerics(stats, dtype, lowPrecision, naiveRelL2, sensRel,
                                sensAbs, againstF64 ? sensOutRel : 0);
      if (runRef && !lowPrecision) {
        c.sensRel = sensRel;
        c.sensAbs = sensAbs;
      }
      if (runRef && lowPrecision && againstF64)
        c.sensOutRel = sensOutRel;
      report.checks.push_back(std::move(c));
    };
    if (runRef) {
      std::optional<double> naiveRelL2;
      if (runNaive) {
        ErrorStats stats = compareToReference(naive[g], ref.grads[g]);
        naiveRelL2 = stats.relL2;
        record("f64 (naive)", stats, std::nullopt);
      }
      record("f64", compareToReference(fused[g], ref.grads[g]), naiveRelL2);
    }
    if (runNaive)
      record("naive", compareTensors(fused[g], naive[g]), std::nullopt);
  }
  // Finite inputs (lse may be -inf: an empty row) give finite gradients.
  if (!anyElement(ins, [](double x) { return std::isnan(x); })) {
    size_t first = report.checks.size();
    checkNoNaN(report, /*isSdpa=*/false, fused, runNaive ? &naive : nullptr);
    // checkNoNaN names the results result<N>: give them their names.
    for (size_t i = first; i < report.checks.size(); ++i)
      report.checks[i].result =
          kGradNames[std::stoi(report.checks[i].result.substr(6))];
  }
  report.pass = allChecksPass(report);

  if (options.benchRuns > 0) {
    if (options.peak) {
      llvm::Expected<double> peak = measureFmaPeakGflops(context, 1.0);
      if (!peak)
        return makeError("peak probe: " + toString(peak.takeError()));
      report.peakGflops = *peak;
    }
    auto fusedTime = benchmark(**fusedKernel, pointers(ins), pointers(fused),
                               options.benchRuns);
    if (!fusedTime)
      return fusedTime.takeError();
    report.fused = *fusedTime;
    if (naiveKernel) {
      auto naiveTime = benchmark(*naiveKernel, pointers(ins), pointers(naive),
                                 options.benchRuns);
      if (!naiveTime)
        return naiveTime.takeError();
      report.naive = *naiveTime;
    }
  }
  return report;
}
