//===- AttentionOpInterfaceTest.cpp - the three ops through one interface -===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/AttnGradOps.h"
#include "attn/Dialect/Attn/IR/AttnInterfaces.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnVarlenOps.h"
#include "attn/Dialect/Attn/Utils/Geometry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

namespace {

// One op of each kind, each with its own geometry.
constexpr const char *kModule = R"mlir(
func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>,
             %v: tensor<2x2x32x48xf32>, %m: tensor<1x1x16x32xi1>,
             %o: tensor<2x8x16x48xf32>, %lse: tensor<2x8x16xf32>,
             %pq: tensor<?x4x32xbf16>, %pk: tensor<?x1x32xbf16>,
             %pv: tensor<?x1x16xbf16>, %cu: tensor<3xi32>) {
  %0 = attn.sdpa %q, %k, %v mask(%m)
      {scale = 0.5 : f32, causal = #attn.causal<top_left>,
       window = array<i64: 8, 2>}
      : tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x48xf32>,
        tensor<1x1x16x32xi1> -> tensor<2x8x16x48xf32>
  %1:3 = attn.sdpa_grad %q, %k, %v, %o, %lse, %o
      {causal = #attn.causal<bottom_right>}
      : tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x48xf32>,
        tensor<2x8x16x48xf32>, tensor<2x8x16xf32>, tensor<2x8x16x48xf32>
      -> tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x48xf32>
  %2 = attn.sdpa_varlen %pq, %pk, %pv, %cu, %cu {window = array<i64: 4, -1>}
      : tensor<?x4x32xbf16>, tensor<?x1x32xbf16>, tensor<?x1x16xbf16>,
        tensor<3xi32>, tensor<3xi32> -> tensor<?x4x16xbf16>
  return
}
)mlir";

class AttentionOpInterfaceTest : public ::testing::Test {
protected:
  AttentionOpInterfaceTest() {
    context.loadDialect<AttnDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(kModule, &context);
    EXPECT_TRUE(module);
    if (!module)
      return;
    module->walk([&](Operation *op) {
      if (isa<AttentionOpInterface>(op))
        ops.push_back(op);
    });
  }

  /// The op of kind OpTy, through the interface.
  template <typename OpTy> AttentionOpInterface get() {
    for (Operation *op : ops)
      if (isa<OpTy>(op))
        return cast<AttentionOpInterface>(op);
    ADD_FAILURE() << "no " << OpTy::getOperationName().str();
    return nullptr;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  SmallVector<Operation *> ops;
};

TEST_F(AttentionOpInterfaceTest, EveryAttnOpImplementsIt) {
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_TRUE(isa<SdpaOp>(ops[0]));
  EXPECT_TRUE(isa<SdpaGradOp>(ops[1]));
  EXPECT_TRUE(isa<SdpaVarlenOp>(ops[2]));
}

TEST_F(AttentionOpInterfaceTest, OperandsAreTheOpsOwn) {
  for (Operation *op : ops) {
    auto attention = cast<AttentionOpInterface>(op);
    EXPECT_EQ(attention.getQuery(), op->getOperand(0));
    EXPECT_EQ(attention.getKey(), op->getOperand(1));
    EXPECT_EQ(attention.getValue(), op->getOperand(2));
  }
  AttentionOpInterface sdpa = get<SdpaOp>();
  ASSERT_TRUE(sdpa);
  EXPECT_EQ(sdpa.getMask(), cast<SdpaOp>(sdpa.getOperation()).getMask());
  EXPECT_TRUE(sdpa.getMask());
  EXPECT_TRUE(sdpa.hasBoolMask());
  // No mask on the grad op here; none at all on the varlen op.
  EXPECT_FALSE(get<SdpaGradOp>().getMask());
  EXPECT_FALSE(get<SdpaGradOp>().hasBoolMask());
  EXPECT_FALSE(get<SdpaVarlenOp>().getMask());
}

TEST_F(AttentionOpInterfaceTest, DimsInBothLayouts) {
  for (auto attention : {get<SdpaOp>(), get<SdpaGradOp>()}) {
    ASSERT_TRUE(attention);
    EXPECT_EQ(attention.getSequenceDim(), 2u);
    EXPECT_EQ(attention.getNumQueryHeads(), 8);
    EXPECT_EQ(attention.getNumKeyValueHeads(), 2);
    EXPECT_EQ(attention.getGroupSize(), 4);
    EXPECT_EQ(attention.getHeadDim(), 64);
    EXPECT_EQ(attention.getValueHeadDim(), 48);
    EXPECT_EQ(attention.getQueryType().getDimSize(attention.getSequenceDim()),
              16);
  }
  AttentionOpInterface varlen = get<SdpaVarlenOp>();
  ASSERT_TRUE(varlen);
  EXPECT_EQ(varlen.getSequenceDim(), 0u);
  EXPECT_EQ(varlen.getNumQueryHeads(), 4);
  EXPECT_EQ(varlen.getNumKeyValueHeads(), 1);
  EXPECT_EQ(varlen.getGroupSize(), 4);
  EXPECT_EQ(varlen.getHeadDim(), 32);
  EXPECT_EQ(varlen.getValueHeadDim(), 16);
  // The op classes answer the same, without the interface.
  SdpaOp sdpa = cast<SdpaOp>(get<SdpaOp>().getOperation());
  EXPECT_EQ(sdpa.getGroupSize(), 4);
  SdpaVarlenOp varlenOp = cast<SdpaVarlenOp>(varlen.getOperation());
  EXPECT_EQ(varlenOp.getSequenceDim(), 0u);
}

TEST_F(AttentionOpInterfaceTest, ScaleIsTheAttributeOrOneOverSqrtD) {
  EXPECT_EQ(get<SdpaOp>().getEffectiveScale(), 0.5f);
  EXPECT_EQ(get<SdpaOp>().getDefaultScale(), 0.125f);
  EXPECT_EQ(get<SdpaGradOp>().getEffectiveScale(), 0.125f);
  EXPECT_EQ(get<SdpaVarlenOp>().getEffectiveScale(),
            static_cast<float>(1.0 / std::sqrt(32.0)));
  EXPECT_FALSE(get<SdpaGradOp>().getScaleAttr());
}

TEST_F(AttentionOpInterfaceTest, CausalAndWindow) {
  EXPECT_EQ(get<SdpaOp>().getCausalKind(), CausalKind::TopLeft);
  EXPECT_EQ(get<SdpaGradOp>().getCausalKind(), CausalKind::BottomRight);
  EXPECT_EQ(get<SdpaVarlenOp>().getCausalKind(), std::nullopt);

  std::optional<ArrayRef<int64_t>> window = get<SdpaOp>().getWindow();
  ASSERT_TRUE(window);
  EXPECT_EQ(*window, ArrayRef<int64_t>({8, 2}));
  // sdpa_grad has no window attribute.
  EXPECT_EQ(get<SdpaGradOp>().getWindow(), std::nullopt);
  window = get<SdpaVarlenOp>().getWindow();
  ASSERT_TRUE(window);
  EXPECT_EQ(*window, ArrayRef<int64_t>({4, -1}));
}

TEST_F(AttentionOpInterfaceTest, VisibleBandOfEachOp) {
  // causal top_left with window [8, 2]: the causal rule bounds the right.
  std::optional<VisibleBand> band = getVisibleBand(get<SdpaOp>());
  ASSERT_TRUE(band);
  EXPECT_EQ(band->left, 8);
  EXPECT_EQ(band->right, 0);
  EXPECT_EQ(band->alignment, CausalKind::TopLeft);
  // The backward's causal rule is the forward's band.
  band = getVisibleBand(get<SdpaGradOp>());
  ASSERT_TRUE(band);
  EXPECT_EQ(band->left, std::nullopt);
  EXPECT_EQ(band->right, 0);
  EXPECT_TRUE(band->isBottomRight());
  // A window without causal is aligned bottom_right.
  band = getVisibleBand(get<SdpaVarlenOp>());
  ASSERT_TRUE(band);
  EXPECT_EQ(band->left, 4);
  EXPECT_EQ(band->right, std::nullopt);
  EXPECT_TRUE(band->isBottomRight());
}

TEST_F(AttentionOpInterfaceTest, NoBandWithoutCausalOrBoundedWindow) {
  SdpaOp sdpa = cast<SdpaOp>(get<SdpaOp>().getOperation());
  sdpa.removeCausalAttr();
  sdpa.setWindow(ArrayRef<int64_t>{-1, -1});
  EXPECT_EQ(getVisibleBand(sdpa), std::nullopt);
  sdpa.removeWindowAttr();
  EXPECT_EQ(getVisibleBand(sdpa), std::nullopt);
  // Huge bounds are clamped, so that index arithmetic on them cannot wrap.
  sdpa.setWindow(ArrayRef<int64_t>{std::numeric_limits<int64_t>::max(), 3});
  std::optional<VisibleBand> band = getVisibleBand(sdpa);
  ASSERT_TRUE(band);
  EXPECT_EQ(band->left, kMaxBandWidth);
  EXPECT_EQ(band->right, 3);
}

} // namespace
