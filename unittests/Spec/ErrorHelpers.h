//===- ErrorHelpers.h - llvm::Error in GoogleTest assertions ----*- C++ -*-===//
//
// The packaged LLVM has llvm/Testing/Support/Error.h but not the library
// behind it (LLVMTestingSupport), so the unit tests turn errors into
// strings with these instead of EXPECT_THAT_EXPECTED.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_UNITTESTS_SPEC_ERRORHELPERS_H
#define ATTN_UNITTESTS_SPEC_ERRORHELPERS_H

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <string>
#include <utility>

namespace attn_test {

/// The message of `err`, or "" on success: EXPECT_EQ(messageOf(x), "")
/// expects success and shows the message when there is one.
inline std::string messageOf(llvm::Error err) {
  return err ? llvm::toString(std::move(err)) : std::string();
}

/// The message of `x`'s error, or "" (and a test failure) if it succeeded.
template <typename T> std::string errorOf(llvm::Expected<T> x) {
  if (x) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return llvm::toString(x.takeError());
}

/// The message of `err`, or "" (and a test failure) on success.
inline std::string errorOf(llvm::Error err) {
  if (!err) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return llvm::toString(std::move(err));
}

/// The value of `x`, or T() and a test failure (with the message) on error.
template <typename T> T valueOrFail(llvm::Expected<T> x) {
  if (!x) {
    ADD_FAILURE() << llvm::toString(x.takeError());
    return T();
  }
  return std::move(*x);
}

} // namespace attn_test

#endif // ATTN_UNITTESTS_SPEC_ERRORHELPERS_H
