//===- attn-aot-check.cpp - load an attn-compile library and check it -----===//
//
// Part of the attn project.
//
// Test helper: dlopen()s a library that attn-compile made, reads the JSON
// beside it and, for every function built from a spec, fills seeded inputs,
// calls the entry through the C ABI and judges the results against the f64
// reference under docs/numerics.md's rules. Links no MLIR: it uses the
// library the way a user of the C ABI would.
//
//   attn-aot-check LIB.so                 check every spec function
//   attn-aot-check LIB.so --sizes B,LQ,LK the same, dynamic ones at sizes
//                                         other than their spec's
//   attn-aot-check LIB.so --bad-args      call the first entry with a NULL
//                                         buffer, then non-positive dims
//   attn-aot-check LIB.so --call-dummy    call the first entry with dummy
//                                         non-NULL buffers (cuda without a
//                                         device: prints the status)
//   attn-aot-check LIB.so --call-dims D,D,...
//                                         call the first entry with dummy
//                                         buffers and these dims (sizes the
//                                         entry must refuse: prints the
//                                         status)
//
// Prints one line per check; exits 0 if all pass, 1 if one fails, 2 on bad
// input.
//
//===----------------------------------------------------------------------===//

#include "attn-c/attn.h"

#include <algorithm>

#include "attn/Spec/HostTensor.h"
#include "attn/Spec/Numerics.h"
#include "attn/Spec/Reference.h"
#include "attn/Spec/SdpaSpec.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>

using namespace mlir::attn::exec;

namespace {
struct Library {
  void *handle = nullptr;
  const char *(*lastError)() = nullptr;
  const char *(*statusString)(int32_t) = nullptr;
};
} // namespace

static int fail(const llvm::Twine &message) {
  llvm::errs() << "attn-aot-check: error: " << message << "\n";
  return 2;
}

/// With `sizes` (b, lq, lk), a dynamic spec's problem at other sizes than
/// those it was compiled with: the mask dims that were not 1 follow.
static void resize(SdpaSpec &spec, const std::vector<int64_t> &sizes) {
  if (sizes.empty() || !spec.dynamic)
    return;
  if (!spec.maskShape.empty()) {
    int64_t full[] = {spec.b, spec.hq, spec.lq, spec.lk};
    int64_t next[] = {sizes[0], spec.hq, sizes[1], sizes[2]};
    for (int d = 0; d < 4; ++d)
      if (spec.maskShape[d] == full[d] && (d == 1 || full[d] != 1))
        spec.maskShape[d] = next[d];
  }
  spec.b = sizes[0];
  spec.lq = sizes[1];
  spec.lk = sizes[2];
}

static int checkSpecFunction(Library &lib, const llvm::json::Object &fn,
                             const std::vector<int64_t> &sizes) {
  llvm::StringRef name = *fn.getString("name");
  auto spec = parseSdpaSpec(*fn.getString("spec"));
  if (!spec) {
    llvm::errs() << toString(spec.takeError()) << "\n";
    return 2;
  }
  resize(*spec, sizes);
  auto entry =
      reinterpret_cast<attn_entry_fn>(dlsym(lib.handle, name.str().c_str()));
  if (!entry)
    return fail("no symbol " + name);
  std::vector<HostTensor> args, results;
  uint64_t seed = 1;
  for (const TensorSpec &t : spec->argSpecs()) {
    HostTensor h = HostTensor::zeros(t);
    if (t.dtype == DType::Bool)
      fillRandomBool(h, seed++, 0.8);
    else
      fillRandomNormal(h, seed++);
    args.push_back(std::move(h));
  }
  for (const TensorSpec &t : spec->resultSpecs()) {
    HostTensor h = HostTensor::zeros(t);
    h.fillNaN();
    results.push_back(std::move(h));
  }
  std::vector<void *> buffers;
  for (HostTensor &h : args)
    buffers.push_back(h.raw());
  for (HostTensor &h : results)
    buffers.push_back(h.raw());
  std::vector<int64_t> dims;
  for (const llvm::json::Value &d : *fn.getArray("dims")) {
    llvm::StringRef dim = *d.getAsString();
    dims.push_back(dim == "b" ? spec->b : dim == "lq" ? spec->lq : spec->lk);
  }
  int32_t status =
      entry(buffers.data(), dims.empty() ? nullptr : dims.data(), nullptr);
  if (status != ATTN_OK) {
    llvm::outs() << name << ": FAIL status " << lib.statusString(status) << ": "
                 << lib.lastError() << "\n";
    return 1;
  }
  SdpaProblem p = spec->toProblem();
  const HostTensor *mask = p.mask == MaskKind::None ? nullptr : &args[3];
  std::vector<double> refOut, refLse;
  referenceSdpa(p, args[0], args[1], args[2], mask, refOut,
                p.lse ? &refLse : nullptr);
  Sensitivity sens = measureSensitivity(p, args[0], args[1], args[2], mask,
                                        refOut, p.lse ? &refLse : nullptr);
  bool pass = true;
  auto judge = [&](const char *what, const HostTensor &got,
                   const std::vector<double> &ref, bool lowPrecision,
                   double sensRel, double sensAbs) {
    ErrorStats stats = compareToReference(got, ref);
    Verdict v = judgeNumerics(stats, spec->dtype, lowPrecision, std::nullopt,
                              sensRel, sensAbs);
    llvm::outs() << name << ": " << what << " rel_l2=" << stats.relL2
                 << " max_abs=" << stats.maxAbs << " ("
                 << (v.pass ? "PASS" : "FAIL") << ", " << v.rule << ")\n";
    pass &= v.pass;
  };
  judge("out", results[0], refOut, spec->dtype != DType::F32, sens.outRelL2,
        sens.outMaxAbs);
  if (p.lse)
    judge("lse", results[1], refLse, false, sens.lseRelL2, sens.lseMaxAbs);
  return pass ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return fail("usage: attn-aot-check LIB.so [--bad-args | --call-dummy]");
  std::string libPath = argv[1];
  std::string mode = argc > 2 ? argv[2] : "";
  llvm::SmallString<256> jsonPath(libPath);
  llvm::sys::path::replace_extension(jsonPath, ".json");
  auto buffer = llvm::MemoryBuffer::getFile(jsonPath);
  if (!buffer)
    return fail("cannot read " + jsonPath);
  auto json = llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail(jsonPath + ": " + toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Array *functions =
      root ? root->getArray("functions") : nullptr;
  if (!functions || functions->empty())
    return fail(jsonPath + ": no functions");

  Library lib;
  lib.handle = dlopen(libPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle)
    return fail(llvm::Twine("dlopen: ") + dlerror());
  lib.lastError =
      reinterpret_cast<const char *(*)()>(dlsym(lib.handle, "attn_last_error"));
  lib.statusString = reinterpret_cast<const char *(*)(int32_t)>(
      dlsym(lib.handle, "attn_status_string"));
  if (!lib.lastError || !lib.statusString)
    return fail("the library lacks attn_last_error or attn_status_string");

  const llvm::json::Object &first = *(*functions)[0].getAsObject();
  if (mode == "--bad-args" || mode == "--call-dummy" || mode == "--call-dims") {
    std::string name = first.getString("name")->str();
    auto entry =
        reinterpret_cast<attn_entry_fn>(dlsym(lib.handle, name.c_str()));
    if (!entry)
      return fail("no symbol " + name);
    size_t numBuffers =
        first.getArray("args")->size() + first.getArray("results")->size();
    size_t numDims = first.getArray("dims")->size();
    std::vector<char> dummy(64);
    std::vector<void *> buffers(numBuffers, dummy.data());
    std::vector<int64_t> dims(numDims, 4);
    auto report = [&](const char *what, int32_t status) {
      llvm::outs() << what << ": " << lib.statusString(status) << ": "
                   << lib.lastError() << "\n";
    };
    if (mode == "--call-dummy") {
      report("call", entry(buffers.data(), dims.data(), nullptr));
      return 0;
    }
    if (mode == "--call-dims") {
      llvm::SmallVector<llvm::StringRef> parts;
      if (argc > 3)
        llvm::StringRef(argv[3]).split(parts, ',');
      if (parts.size() != numDims)
        return fail("--call-dims: expected " + std::to_string(numDims) +
                    " sizes");
      for (auto [i, part] : llvm::enumerate(parts))
        if (part.getAsInteger(10, dims[i]))
          return fail("--call-dims: bad size '" + part + "'");
      report("call", entry(buffers.data(), dims.data(), nullptr));
      return 0;
    }
    report("null buffers", entry(nullptr, dims.data(), nullptr));
    if (numBuffers) {
      buffers.back() = nullptr;
      report("null buffer", entry(buffers.data(), dims.data(), nullptr));
      buffers.back() = dummy.data();
    }
    if (numDims) {
      report("null dims", entry(buffers.data(), nullptr, nullptr));
      dims.back() = 0;
      report("zero dim", entry(buffers.data(), dims.data(), nullptr));
      dims.back() = -3;
      report("negative dim", entry(buffers.data(), dims.data(), nullptr));
      // Each in range, their product past what any buffer holds.
      std::fill(dims.begin(), dims.end(), int64_t(1) << 40);
      report("huge dims", entry(buffers.data(), dims.data(), nullptr));
    }
    return 0;
  }
  // --sizes B,LQ,LK: run dynamic functions at these sizes.
  std::vector<int64_t> sizes;
  if (mode == "--sizes" && argc > 3) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(argv[3]).split(parts, ',');
    for (llvm::StringRef part : parts) {
      int64_t v;
      if (part.getAsInteger(10, v) || v <= 0)
        return fail("--sizes B,LQ,LK: bad size '" + part + "'");
      sizes.push_back(v);
    }
    if (sizes.size() != 3)
      return fail("--sizes B,LQ,LK: expected 3 sizes");
  } else if (!mode.empty()) {
    return fail("unknown option " + mode);
  }

  int rc = 0;
  for (const llvm::json::Value &v : *functions) {
    const llvm::json::Object &fn = *v.getAsObject();
    if (!fn.getString("spec"))
      continue;
    rc = std::max(rc, checkSpecFunction(lib, fn, sizes));
  }
  return rc;
}
