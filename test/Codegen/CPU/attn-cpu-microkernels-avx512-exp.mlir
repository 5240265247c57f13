// RUN: attn-opt %s --attn-tile-online-softmax="block-q=32 block-kv=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=8 row-vectors=2 avx512-exp=true" -canonicalize -cse | FileCheck %s
// RUN: attn-opt %s --attn-tile-online-softmax="block-q=32 block-kv=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=8 row-vectors=2" -canonicalize -cse | FileCheck %s --check-prefix=BITS
// avx512-exp with the avx2 width: the integer exponent bits, not vscalefps.
// RUN: attn-opt %s --attn-tile-online-softmax="block-q=32 block-kv=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="vector-width=8 reg-block=4 row-vectors=2 avx512-exp=true" -canonicalize -cse | FileCheck %s --check-prefix=BITS
// The whole CPU pipeline sets it on the AVX-512 paths only.
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512" | FileCheck %s --check-prefix=LLVM
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx2" | FileCheck %s --check-prefix=LLVM-AVX2

// exp2(x): f = x - floor(x) by vreduceps (imm 1: round down, every lane,
// the current rounding mode), the polynomial on f (moved to [0, 1]: its
// leading coefficient is 2.17e-4, the [-1/2, 1/2] fit's 1.53e-4), then
// p * 2^floor(x) by vscalefps on x itself: no clamp, no rounding, no integer
// exponent bits.
// CHECK-LABEL: func.func @exp_by_scalef
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[ALL:.*]] = arith.constant -1 : i16
// CHECK-DAG: %[[CUR:.*]] = arith.constant 4 : i32
// CHECK-DAG: %[[C0:.*]] = arith.constant dense<1.000000e+00> : vector<16xf32>
// CHECK-DAG: %[[C6:.*]] = arith.constant dense<2.17022549E-4> : vector<16xf32>
// CHECK-NOT: arith.cmpf olt
// CHECK-NOT: math.roundeven
// CHECK: %[[F:.*]] = llvm.call_intrinsic "llvm.x86.avx512.mask.reduce.ps.512"(%[[X:.*]], %[[ONE]], %[[X]], %[[ALL]], %[[CUR]]) : (vector<16xf32>, i32, vector<16xf32>, i16, i32) -> vector<16xf32>
// CHECK: vector.fma %[[C6]], %[[F]], %{{.*}} : vector<16xf32>
// CHECK-COUNT-4: vector.fma %{{.*}}, %[[F]], %{{.*}} : vector<16xf32>
// CHECK: %[[P:.*]] = vector.fma %{{.*}}, %[[F]], %[[C0]] : vector<16xf32>
// CHECK: x86vector.avx512.mask.scalef %[[P]], %[[X]], %[[P]], %[[ALL]], %[[CUR]] : vector<16xf32>
// CHECK-NOT: arith.fptosi
// CHECK-NOT: arith.shli
// CHECK: return

// BITS-LABEL: func.func @exp_by_scalef
// BITS-DAG: arith.constant dense<-1.270000e+02>
// BITS-DAG: arith.constant dense<1.53458124E-4>
// BITS-NOT: x86vector.avx512.mask.scalef
// BITS: arith.fptosi
// BITS: arith.shli
// BITS-NOT: x86vector.avx512.mask.scalef
// BITS: return

// LLVM-LABEL: llvm.func @exp_by_scalef
// LLVM: llvm.call_intrinsic "llvm.x86.avx512.mask.reduce.ps.512"
// LLVM: llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// LLVM-AVX2-LABEL: llvm.func @exp_by_scalef
// LLVM-AVX2-NOT: scalef
// LLVM-AVX2-NOT: reduce.ps
// LLVM-AVX2: llvm.return
func.func @exp_by_scalef(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x64x16xf32>, %v: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %o : tensor<1x1x64x16xf32>
}
