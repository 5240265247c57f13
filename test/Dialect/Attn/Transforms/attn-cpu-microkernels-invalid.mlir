// RUN: not attn-opt %s --attn-cpu-microkernels="vector-width=0" 2>&1 | FileCheck %s

// CHECK: error: attn-cpu-microkernels: vector-width (0) and reg-block (8) must be positive
func.func @f() {
  return
}
