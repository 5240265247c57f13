//===- AotTest.cpp - attn-compile's ABI analysis, JSON and shim -----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Compile/Aot.h"
#include "attn/Execution/Engine.h"
#include "attn/Spec/Problem.h"

#include "../../lib/Compile/Shim.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

compile::FunctionAbi abiOfSpec(MLIRContext &context, llvm::StringRef text) {
  auto spec = exec::parseSdpaSpec(text);
  EXPECT_TRUE(static_cast<bool>(spec)) << toString(spec.takeError());
  OwningOpRef<ModuleOp> module = exec::buildSdpaModule(context, *spec, "f");
  auto entry = module->lookupSymbol<func::FuncOp>("f");
  auto abi = compile::analyzeAbi(entry, "g");
  EXPECT_TRUE(static_cast<bool>(abi)) << toString(abi.takeError());
  return *abi;
}

TEST(AotAbi, StaticSpecHasNoDims) {
  auto context = exec::createEngineContext();
  compile::FunctionAbi abi =
      abiOfSpec(*context, "b=2,hq=4,hkv=2,lq=8,lk=16,d=32,dtype=f16,lse=1");
  EXPECT_EQ(abi.name, "g");
  EXPECT_TRUE(abi.dims.empty());
  ASSERT_EQ(abi.args.size(), 3u);
  EXPECT_EQ(abi.args[1].name, "key");
  EXPECT_EQ(abi.args[1].shape[1].size, 2);
  ASSERT_EQ(abi.results.size(), 2u);
  EXPECT_EQ(abi.results[1].name, "lse");
  EXPECT_EQ(abi.results[1].dtype, exec::DType::F32);
}

TEST(AotAbi, DynamicSpecNamesDimsByRole) {
  auto context = exec::createEngineContext();
  compile::FunctionAbi abi = abiOfSpec(
      *context, "b=2,hq=4,lq=8,lk=16,d=32,mask=bool,mask_shape=1x1x8x16,"
                "dynamic=1");
  EXPECT_EQ(abi.dims, (std::vector<std::string>{"b", "lq", "lk"}));
  EXPECT_EQ(abi.args[0].shape[0].dim, "b");
  EXPECT_EQ(abi.args[0].shape[2].dim, "lq");
  EXPECT_EQ(abi.args[1].shape[2].dim, "lk");
  EXPECT_EQ(abi.args[3].name, "mask");
  EXPECT_EQ(abi.args[3].shape[0].size, 1);
  EXPECT_EQ(abi.args[3].shape[3].dim, "lk");
}

TEST(AotJson, DescribesTargetAndShapes) {
  auto context = exec::createEngineContext();
  compile::FunctionAbi abi =
      abiOfSpec(*context, "b=1,hq=2,lq=8,d=16,dynamic=1");
  compile::AotOptions options;
  llvm::json::Value json = compile::describeLibrary({abi}, options);
  std::string text = llvm::formatv("{0}", json).str();
  EXPECT_NE(text.find("\"target\":\"cpu\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"shape\":[\"b\",2,\"lq\",16]"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\"dims\":[\"b\",\"lq\",\"lk\"]"), std::string::npos)
      << text;
}

TEST(AotShim, ChecksArgumentsAndUsesDims) {
  auto context = exec::createEngineContext();
  compile::FunctionAbi abi =
      abiOfSpec(*context, "b=1,hq=2,lq=8,d=16,dynamic=1");
  std::string c = compile::generateShim({abi}, compile::Target::Cpu);
  EXPECT_NE(c.find("int32_t g(void *const *buffers"), std::string::npos);
  EXPECT_NE(c.find("_mlir_ciface___attn_impl_g("), std::string::npos);
  EXPECT_NE(c.find("{dims[0], 2, dims[1], 16}"), std::string::npos) << c;
  EXPECT_NE(c.find("memrefCopy"), std::string::npos);
  std::string cuda = compile::generateShim({abi}, compile::Target::Cuda);
  EXPECT_NE(cuda.find("attnCudaBeginCall"), std::string::npos);
  EXPECT_EQ(cuda.find("memrefCopy"), std::string::npos);
}

TEST(AotPaths, JsonBesideLibrary) {
  EXPECT_EQ(compile::jsonPathFor("out/libfoo.so"), "out/libfoo.json");
}

} // namespace
