// RUN: not attn-opt %s --attn-cpu-microkernels="vector-width=0" 2>&1 | FileCheck %s

// RUN: not attn-opt %s --attn-cpu-microkernels="prefetch-spread=0" 2>&1 | FileCheck %s --check-prefix=SPREAD0
// RUN: not attn-opt %s --attn-cpu-microkernels="prefetch-spread=12" 2>&1 | FileCheck %s --check-prefix=SPREAD12

// CHECK: error: attn-cpu-microkernels: vector-width (0) must be positive
// SPREAD0: error: attn-cpu-microkernels: prefetch-spread (0) must be positive
// SPREAD12: error: attn-cpu-microkernels: prefetch-spread (12) must be a power of two
func.func @f() {
  return
}
