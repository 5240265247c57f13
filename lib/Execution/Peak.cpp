//===- Peak.cpp - the machine's f32 FMA peak, measured --------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/Peak.h"

#include "attn/Spec/Error.h"
#include "attn/Execution/Jit.h"
#include "attn/Codegen/CPU/CpuFeatures.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include <array>
#include <cassert>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace mlir;
using namespace mlir::attn::exec;

/// `chains` independent chains over vector<lanes x f32>, no loads or stores
/// in the loop: acc_k = acc_k * a + b (2 * lanes FLOP per chain and
/// iteration), or with `bf16Dot` acc_k += dot(a, b) on vector<32xbf16> pairs
/// (vdpbf16ps: 16 lanes x 2 products x 2 FLOP; lanes must be 16).
std::string mlir::attn::exec::peakKernelText(const PeakShape &shape,
                                             bool bf16Dot) {
  assert((!bf16Dot || shape.lanes == 16) && "vdpbf16ps has 16 lanes");
  std::string vec = "vector<" + std::to_string(shape.lanes) + "xf32>";
  std::string s = "func.func @peak(%n: index, %out: memref<16xf32>) "
                  "attributes {llvm.emit_c_interface} {\n"
                  "  %c0 = arith.constant 0 : index\n"
                  "  %c1 = arith.constant 1 : index\n";
  if (bf16Dot)
    s += "  %a = arith.constant dense<0.01> : vector<32xbf16>\n"
         "  %b = arith.constant dense<0.02> : vector<32xbf16>\n";
  else
    s += "  %a = arith.constant dense<0.999999> : " + vec +
         "\n"
         "  %b = arith.constant dense<1.0e-7> : " +
         vec + "\n";
  std::string inits, args, fmas, yields, types;
  for (int k = 0; k < shape.chains; ++k) {
    std::string n = std::to_string(k);
    s += "  %i" + n + " = arith.constant dense<" + std::to_string(k) +
         ".0> : " + vec + "\n";
    args += std::string(k ? ", " : "") + "%x" + n + " = %i" + n;
    if (bf16Dot)
      fmas += "    %y" + n + " = x86vector.avx512.dot %x" + n +
              ", %a, %b : vector<32xbf16> -> vector<16xf32>\n";
    else
      fmas +=
          "    %y" + n + " = vector.fma %x" + n + ", %a, %b : " + vec + "\n";
    yields += std::string(k ? ", " : "") + "%y" + n;
    types += std::string(k ? ", " : "") + vec;
  }
  s += "  %r:" + std::to_string(shape.chains) +
       " = scf.for %it = %c0 to %n step %c1 iter_args(" + args + ") -> (" +
       types + ") {\n" + fmas + "    scf.yield " + yields + " : " + types +
       "\n  }\n";
  // Sum the chains so none is dead.
  std::string acc = "%r#0";
  for (int k = 1; k < shape.chains; ++k) {
    std::string n = std::to_string(k);
    s += "  %s" + n + " = arith.addf " + acc + ", %r#" + n + " : " + vec + "\n";
    acc = "%s" + n;
  }
  s += "  vector.store " + acc + ", %out[%c0] : memref<16xf32>, " + vec +
       "\n  return\n}\n";
  return s;
}

std::string mlir::attn::exec::amxPeakKernelText() {
  // amx.tile values cannot be loop-carried (they are not types the loop
  // conversion knows): the C tiles go through memory once per 32 products,
  // as in the kernels' blocks.
  std::string s =
      "func.func @peak(%n: index, %out: memref<16xf32>) "
      "attributes {llvm.emit_c_interface} {\n"
      "  %c0 = arith.constant 0 : index\n"
      "  %c1 = arith.constant 1 : index\n"
      "  %c16 = arith.constant 16 : index\n"
      "  %c32 = arith.constant 32 : index\n"
      "  %c48 = arith.constant 48 : index\n"
      "  %c64 = arith.constant 64 : index\n"
      "  %a = memref.alloca() {alignment = 64 : i64} : memref<32x32xbf16>\n"
      "  %c = memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>\n"
      "  %av = arith.constant dense<0.01> : vector<32xbf16>\n"
      "  %zv = arith.constant dense<0.0> : vector<16xf32>\n"
      "  scf.for %r = %c0 to %c32 step %c1 {\n"
      "    vector.store %av, %a[%r, %c0] : memref<32x32xbf16>, "
      "vector<32xbf16>\n"
      "  }\n"
      "  scf.for %r = %c0 to %c64 step %c1 {\n"
      "    vector.store %zv, %c[%r, %c0] : memref<64x16xf32>, "
      "vector<16xf32>\n"
      "  }\n"
      "  scf.for %it = %c0 to %n step %c1 {\n";
  const char *rows[] = {"%c0", "%c16", "%c32", "%c48"};
  for (int t = 0; t < 4; ++t)
    s += "    %x" + std::to_string(t) + "_0 = amx.tile_load %c[" + rows[t] +
         ", %c0] : memref<64x16xf32> into !amx.tile<16x16xf32>\n";
  for (int t = 0; t < 2; ++t) {
    s += "    %a" + std::to_string(t) + " = amx.tile_load %a[" + rows[t] +
         ", %c0] : memref<32x32xbf16> into !amx.tile<16x32xbf16>\n";
    s += "    %b" + std::to_string(t) + " = amx.tile_load %a[" + rows[1 - t] +
         ", %c0] : memref<32x32xbf16> into !amx.tile<16x32xbf16>\n";
  }
  for (int k = 0; k < 8; ++k)
    for (int t = 0; t < 4; ++t) {
      std::string x = "%x" + std::to_string(t) + "_";
      s += "    " + x + std::to_string(k + 1) + " = amx.tile_mulf %a" +
           std::to_string(t / 2) + ", %b" + std::to_string(t % 2) + ", " + x +
           std::to_string(k) +
           " : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, "
           "!amx.tile<16x16xf32>\n";
    }
  for (int t = 0; t < 4; ++t)
    s += std::string("    amx.tile_store %c[") + rows[t] + ", %c0], %x" +
         std::to_string(t) + "_8 : memref<64x16xf32>, !amx.tile<16x16xf32>\n";
  s += "  }\n"
       "  %v = vector.load %c[%c0, %c0] : memref<64x16xf32>, vector<16xf32>\n"
       "  vector.store %v, %out[%c0] : memref<16xf32>, vector<16xf32>\n"
       "  return\n}\n";
  return s;
}

PeakShape mlir::attn::exec::peakShapeFor(bool avx512) {
  // 32 zmm registers: 16 chains and the two operands. 16 ymm registers
  // (AVX2, and every other host): 12 chains, still enough to cover a 4-cycle
  // FMA latency on two ports; 16 chains of 8 lanes would spill.
  return avx512 ? PeakShape{16, 16} : PeakShape{8, 12};
}

PeakShape mlir::attn::exec::hostPeakShape() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return peakShapeFor(features.lookup("avx512f"));
}

llvm::Expected<std::unique_ptr<PeakKernel>>
PeakKernel::compile(MLIRContext &context, const PeakShape &shape,
                    bool bf16Dot) {
  return compileText(context, peakKernelText(shape, bf16Dot), shape,
                     double(shape.chains) * shape.lanes *
                         (bf16Dot ? 4.0 : 2.0));
}

llvm::Expected<std::unique_ptr<PeakKernel>>
PeakKernel::compileText(MLIRContext &context, llvm::StringRef text,
                        const PeakShape &shape, double flopPerIteration) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, &context, "peak");
  if (!module)
    return makeError("the peak kernel does not parse");
  PassManager pm(&context);
  attn::buildLowerToLLVMPipeline(pm);
  if (failed(pm.run(*module)))
    return makeError("the peak kernel does not lower");
  auto engine = createHostEngine(*module);
  if (!engine)
    return engine.takeError();
  std::unique_ptr<PeakKernel> kernel(new PeakKernel());
  kernel->engine = std::move(*engine);
  kernel->shape = shape;
  kernel->flopPerIteration = flopPerIteration;
  return kernel;
}

PeakKernel::~PeakKernel() = default;

llvm::Expected<double> PeakKernel::run(int64_t iterations) {
  return run(iterations, out);
}

llvm::Expected<double> PeakKernel::run(int64_t iterations, float *sum) {
  int64_t desc[5] = {reinterpret_cast<int64_t>(sum),
                     reinterpret_cast<int64_t>(sum), 0, 16, 1};
  void *descPtr = desc;
  void *args[2] = {&iterations, &descPtr};
  auto t0 = std::chrono::steady_clock::now();
  if (llvm::Error e = engine->invokePacked("_mlir_ciface_peak", args))
    return std::move(e);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count();
}

/// The iterations for runs of `kernel` of about `seconds` each. One run
/// first, untimed: the first call into a new engine takes far longer than
/// the loop (41-46 ms for 4096 iterations of the f32 loop here), and sized
/// from it the runs shrank to a fraction of a millisecond, short enough for
/// one moment of a shared machine to decide the peak. Then the iterations
/// double until a run takes 20 ms (or a tenth of `seconds`, if less), and
/// scale.
static llvm::Expected<int64_t> iterationsFor(PeakKernel &kernel,
                                             double seconds) {
  if (llvm::Expected<double> warm = kernel.run(1 << 10); !warm)
    return warm.takeError();
  double enough = std::min(0.02, seconds / 10);
  int64_t iters = 1 << 10;
  for (;;) {
    llvm::Expected<double> dt = kernel.run(iters);
    if (!dt)
      return dt.takeError();
    if (*dt >= enough || iters >= (int64_t(1) << 40))
      return std::max<int64_t>(
          iters, static_cast<int64_t>(iters * seconds / std::max(*dt, 1e-9)));
    iters *= 2;
  }
}

/// The best rate of `kernel` over five runs of about seconds/5 each.
static llvm::Expected<double> bestRate(PeakKernel &kernel, double seconds);

static llvm::Expected<double> measurePeak(MLIRContext &context, double seconds,
                                          bool bf16Dot) {
  auto kernel = PeakKernel::compile(
      context, bf16Dot ? peakShapeFor(/*avx512=*/true) : hostPeakShape(),
      bf16Dot);
  if (!kernel)
    return kernel.takeError();
  return bestRate(**kernel, seconds);
}

llvm::Expected<double>
mlir::attn::exec::measureAmxPeakGflops(MLIRContext &context, double seconds) {
  if (!attn::hostGrantsAmx())
    return makeError("this CPU or OS does not run AMX tiles");
  auto kernel = PeakKernel::compileText(
      context, amxPeakKernelText(), PeakShape{16, 4}, 32.0 * 16 * 16 * 32 * 2);
  if (!kernel)
    return kernel.takeError();
  return bestRate(**kernel, seconds);
}

static llvm::Expected<double> bestRate(PeakKernel &kernel, double seconds) {
  llvm::Expected<int64_t> sized = iterationsFor(kernel, seconds / 5);
  if (!sized)
    return sized.takeError();
  int64_t iters = *sized;
  double best = 0;
  for (int k = 0; k < 5; ++k) {
    llvm::Expected<double> dt = kernel.run(iters);
    if (!dt)
      return dt.takeError();
    best = std::max(best, kernel.flopPerIteration * iters / *dt / 1e9);
  }
  return best;
}

llvm::Expected<double>
mlir::attn::exec::measureFmaPeakGflops(MLIRContext &context, double seconds) {
  return measurePeak(context, seconds, /*bf16Dot=*/false);
}

llvm::Expected<double>
mlir::attn::exec::measureFmaPeakAllThreadsGflops(MLIRContext &context,
                                                 int threads, double seconds) {
  if (threads < 1)
    return makeError("the all-threads peak needs at least one thread");
  auto kernel = PeakKernel::compile(context, hostPeakShape(), false);
  if (!kernel)
    return kernel.takeError();
  PeakKernel &loop = **kernel;
  // Sized on one thread as bestRate sizes its runs: about seconds/5 each.
  llvm::Expected<int64_t> sized = iterationsFor(loop, seconds / 5);
  if (!sized)
    return sized.takeError();
  int64_t iters = *sized;
  std::vector<std::array<float, 16>> sums(threads);
  std::vector<std::string> errors(threads);
  double best = 0;
  for (int round = 0; round < 5; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        if (llvm::Expected<double> dt = loop.run(iters, sums[t].data()); !dt)
          errors[t] = llvm::toString(dt.takeError());
      });
    for (std::thread &w : workers)
      w.join();
    double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    for (const std::string &e : errors)
      if (!e.empty())
        return makeError(e);
    best = std::max(best, threads * loop.flopPerIteration * iters / wall / 1e9);
  }
  return best;
}

llvm::Expected<std::unique_ptr<PeakProbe>>
PeakProbe::create(MLIRContext &context, double burstSeconds, bool bf16Dot) {
  // The shapes measurePeak takes.
  auto kernel = PeakKernel::compile(
      context, bf16Dot ? peakShapeFor(/*avx512=*/true) : hostPeakShape(),
      bf16Dot);
  if (!kernel)
    return kernel.takeError();
  std::unique_ptr<PeakProbe> probe(new PeakProbe());
  probe->kernel = std::move(*kernel);
  llvm::Expected<int64_t> sized = iterationsFor(*probe->kernel, burstSeconds);
  if (!sized)
    return sized.takeError();
  probe->iterations = *sized;
  return std::move(probe);
}

PeakProbe::~PeakProbe() = default;

llvm::Expected<double> PeakProbe::burst() {
  llvm::Expected<double> dt = kernel->run(iterations);
  if (!dt)
    return dt.takeError();
  return kernel->flopPerIteration * iterations / std::max(*dt, 1e-12) / 1e9;
}

std::vector<double>
mlir::attn::exec::pairedPeakShares(llvm::ArrayRef<double> callGflops,
                                   llvm::ArrayRef<double> burstGflops,
                                   int threads) {
  if (burstGflops.size() != callGflops.size() + 1 || threads < 1 ||
      llvm::any_of(burstGflops, [](double g) { return !(g > 0); }))
    return {};
  std::vector<double> shares;
  for (size_t i = 0; i < callGflops.size(); ++i)
    shares.push_back(callGflops[i] /
                     (threads * 0.5 * (burstGflops[i] + burstGflops[i + 1])));
  return shares;
}

llvm::Expected<double>
mlir::attn::exec::measureBf16DotPeakGflops(MLIRContext &context,
                                           double seconds) {
  return measurePeak(context, seconds, /*bf16Dot=*/true);
}

bool mlir::attn::exec::hostHasBf16Dot() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return features.lookup("avx512f") && features.lookup("avx512bf16");
}
