// RUN: not attn-opt %s --attn-cpu-microkernels="vector-width=0" 2>&1 | FileCheck %s

// CHECK: error: attn-cpu-microkernels: vector-width (0), reg-block (6) and row-vectors (4) must be positive
func.func @f() {
  return
}
