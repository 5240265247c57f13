//===- _jax_ffi.cc - XLA FFI handlers that call attn-compile's libraries --===//
//
// Part of the attn project.
//
// attn.jax (python/attn/jax.py) compiles this file against the installed
// jaxlib's FFI headers (jax.ffi.include_dir()) on first use and registers
// its handlers with jax.ffi.register_ffi_target. One handler serves every
// shape: the attributes carry the address of the attn-compile entry point
// compiled for the call's static shapes (docs/c-abi.md) and of its
// library's attn_last_error; the call's operands, then its results, are the
// entry's buffers, in the library's order. The CPU handler passes no stream;
// the CUDA one passes XLA's stream (an attn cuda library only enqueues).
//
//===----------------------------------------------------------------------===//

#include "xla/ffi/api/ffi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ffi = xla::ffi;

namespace {

using AttnEntry = int32_t (*)(void *const *, const int64_t *, void *);
using AttnLastError = const char *(*)();

ffi::Error callEntry(int64_t fn, int64_t lastError, ffi::RemainingArgs args,
                     ffi::RemainingRets rets, void *stream) {
  std::vector<void *> buffers;
  buffers.reserve(args.size() + rets.size());
  for (size_t i = 0; i < args.size(); ++i) {
    auto buffer = args.get<ffi::AnyBuffer>(i);
    if (buffer.has_error())
      return buffer.error();
    buffers.push_back(buffer.value().untyped_data());
  }
  for (size_t i = 0; i < rets.size(); ++i) {
    auto buffer = rets.get<ffi::AnyBuffer>(i);
    if (buffer.has_error())
      return buffer.error();
    buffers.push_back((*buffer.value()).untyped_data());
  }
  if (fn == 0)
    return ffi::Error::InvalidArgument("attn_call: no entry point given");
  int32_t status = reinterpret_cast<AttnEntry>(fn)(buffers.data(),
                                                   /*dims=*/nullptr, stream);
  if (status == 0)
    return ffi::Error::Success();
  std::string message = "attn: status " + std::to_string(status);
  if (lastError)
    message += std::string(": ") + reinterpret_cast<AttnLastError>(lastError)();
  return ffi::Error(ffi::ErrorCode::kInternal, message);
}

ffi::Error attnCallCpu(int64_t fn, int64_t lastError, ffi::RemainingArgs args,
                       ffi::RemainingRets rets) {
  return callEntry(fn, lastError, args, rets, nullptr);
}

ffi::Error attnCallCuda(void *stream, int64_t fn, int64_t lastError,
                        ffi::RemainingArgs args, ffi::RemainingRets rets) {
  return callEntry(fn, lastError, args, rets, stream);
}

} // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(AttnCallCpu, attnCallCpu,
                              ffi::Ffi::Bind()
                                  .Attr<int64_t>("fn")
                                  .Attr<int64_t>("last_error")
                                  .RemainingArgs()
                                  .RemainingRets());

XLA_FFI_DEFINE_HANDLER_SYMBOL(AttnCallCuda, attnCallCuda,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<void *>>()
                                  .Attr<int64_t>("fn")
                                  .Attr<int64_t>("last_error")
                                  .RemainingArgs()
                                  .RemainingRets());
