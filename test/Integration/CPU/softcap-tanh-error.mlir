// The softcap kernel's tanh (attn-cpu-microkernels, CpuScoreModifiers.cpp:
// arithmetic and the kernels' exp2, no libm call) against double-precision
// tanh over every 2^-12 step in [-20, 20): prints the largest absolute and
// relative error and checks that the relative one is below 4e-7 (docs/op.md
// quotes the measured figure). The tile op is tagged as the fused tiling
// tags its softcap.
// RUN: attn-opt %s --attn-cpu-microkernels -lower-affine -convert-scf-to-cf \
// RUN:   -convert-vector-to-llvm -finalize-memref-to-llvm -convert-math-to-llvm \
// RUN:   -convert-arith-to-llvm -convert-index-to-llvm -convert-cf-to-llvm \
// RUN:   -convert-func-to-llvm -reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils \
// RUN: | FileCheck %s
// RUN: attn-opt %s --attn-cpu-microkernels | FileCheck %s --check-prefix=KERNEL

// KERNEL-LABEL: func.func @tanh_tile
// KERNEL-NOT: math.tanh
// KERNEL: math.absf %{{.*}} : vector<16xf32>
// KERNEL: math.copysign %{{.*}} : vector<16xf32>
// KERNEL-NOT: attn.tile

// CHECK: max_abs_err
// CHECK-NEXT: {{[0-9].*e-0[7-9]|[0-9].*e-1[0-9]}}
// CHECK-NEXT: max_rel_err
// CHECK-NEXT: {{[0-9].*e-0[7-9]|[0-9].*e-1[0-9]}}
// CHECK-NEXT: rel_err_below_4e-7
// CHECK-NEXT: 1

#id2 = affine_map<(d0, d1) -> (d0, d1)>

func.func @tanh_tile(%t: memref<10240x16xf32>) {
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%t : memref<10240x16xf32>) attrs = {attn.tile = #attn.tile<softcap>} {
  ^bb0(%x: f32):
    %y = math.tanh %x : f32
    linalg.yield %y : f32
  }
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %n = arith.constant 10240 : index
  %step = arith.constant 2.44140625e-04 : f32
  %start = arith.constant -20.0 : f32
  %x = memref.alloc() : memref<10240x16xf32>
  %t = memref.alloc() : memref<10240x16xf32>
  scf.for %j = %c0 to %n step %c1 {
    scf.for %i = %c0 to %c16 step %c1 {
      %lin = affine.apply affine_map<(d0, d1) -> (d0 * 16 + d1)>(%j, %i)
      %li = arith.index_cast %lin : index to i64
      %lf = arith.sitofp %li : i64 to f32
      %xv = arith.mulf %lf, %step : f32
      %xs = arith.addf %start, %xv : f32
      memref.store %xs, %x[%j, %i] : memref<10240x16xf32>
      memref.store %xs, %t[%j, %i] : memref<10240x16xf32>
    }
  }
  call @tanh_tile(%t) : (memref<10240x16xf32>) -> ()
  %zero = arith.constant 0.0 : f64
  %res:2 = scf.for %j = %c0 to %n step %c1 iter_args(%ma = %zero, %mr = %zero) -> (f64, f64) {
    %inner:2 = scf.for %i = %c0 to %c16 step %c1 iter_args(%a = %ma, %r = %mr) -> (f64, f64) {
      %xs = memref.load %x[%j, %i] : memref<10240x16xf32>
      %ts = memref.load %t[%j, %i] : memref<10240x16xf32>
      %xd = arith.extf %xs : f32 to f64
      %td = arith.extf %ts : f32 to f64
      %ref = math.tanh %xd : f64
      %diff = arith.subf %td, %ref : f64
      %err = math.absf %diff : f64
      %aref = math.absf %ref : f64
      %tiny = arith.constant 1.0e-30 : f64
      %den = arith.maximumf %aref, %tiny : f64
      %rel = arith.divf %err, %den : f64
      %a2 = arith.maximumf %a, %err : f64
      %r2 = arith.maximumf %r, %rel : f64
      scf.yield %a2, %r2 : f64, f64
    }
    scf.yield %inner#0, %inner#1 : f64, f64
  }
  %bound = arith.constant 4.0e-7 : f64
  %ok = arith.cmpf olt, %res#1, %bound : f64
  %oki = arith.extui %ok : i1 to i64
  vector.print str "max_abs_err\n"
  vector.print %res#0 : f64
  vector.print str "max_rel_err\n"
  vector.print %res#1 : f64
  vector.print str "rel_err_below_4e-7\n"
  vector.print %oki : i64
  memref.dealloc %x : memref<10240x16xf32>
  memref.dealloc %t : memref<10240x16xf32>
  return
}
