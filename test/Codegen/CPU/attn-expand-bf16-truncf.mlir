// RUN: attn-opt %s --attn-expand-bf16-truncf | FileCheck %s

// A vector truncf f32 -> bf16: NaN lanes to 0x7FC00000 on the f32 lanes,
// then (bits + 0x7FFF + lsb) >> 16, narrowed to i16 and bitcast.
// CHECK-LABEL: func.func @vector
// CHECK-SAME: (%[[X:.*]]: vector<8xf32>)
// CHECK-DAG: %[[QNAN:.*]] = arith.constant dense<0x7FC00000> : vector<8xf32>
// CHECK-DAG: %[[C16:.*]] = arith.constant dense<16> : vector<8xi32>
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1> : vector<8xi32>
// CHECK-DAG: %[[BIAS:.*]] = arith.constant dense<32767> : vector<8xi32>
// CHECK: %[[ISNAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : vector<8xf32>
// CHECK: %[[Q:.*]] = arith.select %[[ISNAN]], %[[QNAN]], %[[X]] : vector<8xi1>, vector<8xf32>
// CHECK: %[[BITS:.*]] = arith.bitcast %[[Q]] : vector<8xf32> to vector<8xi32>
// CHECK: %[[HI:.*]] = arith.shrui %[[BITS]], %[[C16]] : vector<8xi32>
// CHECK: %[[LSB:.*]] = arith.andi %[[HI]], %[[ONE]] : vector<8xi32>
// CHECK: %[[ADD:.*]] = arith.addi %[[LSB]], %[[BIAS]] : vector<8xi32>
// CHECK: %[[SUM:.*]] = arith.addi %[[BITS]], %[[ADD]] : vector<8xi32>
// CHECK: %[[R:.*]] = arith.shrui %[[SUM]], %[[C16]] : vector<8xi32>
// CHECK: %[[H:.*]] = arith.trunci %[[R]] : vector<8xi32> to vector<8xi16>
// CHECK: %[[B:.*]] = arith.bitcast %[[H]] : vector<8xi16> to vector<8xbf16>
// CHECK: return %[[B]]
// CHECK-NOT: arith.truncf
func.func @vector(%x: vector<8xf32>) -> vector<8xbf16> {
  %y = arith.truncf %x : vector<8xf32> to vector<8xbf16>
  return %y : vector<8xbf16>
}

// Left to arith-expand: a scalar, a truncf to f16, one with a rounding mode.
// CHECK-LABEL: func.func @others
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// CHECK: arith.truncf %{{.*}} downward : vector<8xf32> to vector<8xbf16>
func.func @others(%s: f32, %x: vector<8xf32>) -> (bf16, vector<8xf16>, vector<8xbf16>) {
  %a = arith.truncf %s : f32 to bf16
  %b = arith.truncf %x : vector<8xf32> to vector<8xf16>
  %c = arith.truncf %x downward : vector<8xf32> to vector<8xbf16>
  return %a, %b, %c : bf16, vector<8xf16>, vector<8xbf16>
}
