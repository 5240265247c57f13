//===- EntryWrapper.cpp - destination-passing entry points ----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/EntryWrapper.h"

#include "attn/Spec/Error.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

llvm::Error mlir::attn::exec::buildDestinationPassingEntry(
    ModuleOp module, func::FuncOp entry, StringRef wrapperName) {
  FunctionType type = entry.getFunctionType();
  SmallVector<Type> memrefArgs;
  for (Type t : llvm::concat<const Type>(type.getInputs(), type.getResults())) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor)
      return makeError("entry @" + entry.getSymName().str() +
                       " must take and return ranked tensors only");
    memrefArgs.push_back(
        MemRefType::get(tensor.getShape(), tensor.getElementType()));
  }
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToEnd(module.getBody());
  Location loc = entry.getLoc();
  auto wrapper = func::FuncOp::create(b, loc, wrapperName,
                                      b.getFunctionType(memrefArgs, {}));
  wrapper->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                   b.getUnitAttr());
  Block *body = wrapper.addEntryBlock();
  b.setInsertionPointToStart(body);
  unsigned numInputs = type.getNumInputs();
  SmallVector<Value> tensors;
  for (unsigned i = 0; i < numInputs; ++i)
    tensors.push_back(bufferization::ToTensorOp::create(
        b, loc, type.getInput(i), body->getArgument(i), /*restrict=*/true));
  auto call = func::CallOp::create(b, loc, entry, tensors);
  for (auto [i, result] : llvm::enumerate(call.getResults())) {
    auto m = bufferization::MaterializeInDestinationOp::create(
        b, loc, result, body->getArgument(numInputs + i));
    m.setRestrict(true);
    m.setWritable(true);
  }
  func::ReturnOp::create(b, loc);
  // Everything but the wrapper is inlined into it and then dropped.
  for (auto f : module.getOps<func::FuncOp>())
    if (f != wrapper && !f.isDeclaration())
      f.setPrivate();
  return llvm::Error::success();
}
