// attn.sdpa_paged's page table and lengths at their edges, through the
// oracle (attn-lower-naive-cpu: attn-gather-paged). K = 0 makes every score
// 0, so a sequence's output is the plain mean of its visible value rows and
// its lse is log(#visible). Two pages of two keys, one head:
// page 0 = values [1, 2], [3, 4]; page 1 = [5, 6], [7, 8].
//   b0: 3 keys, pages [1, 0]; the third table entry (77) is past its pages
//       and never read: mean of [5,6], [7,8], [1,2].
//   b1: no keys, a table of -1: out 0, lse -inf.
//   b2: 1 key on page 0; entries 99999 and -5 past it are never read.
//   b3: 2 keys on page 1000000, outside the cache: undefined values by the
//       op's contract, never read; the oracle's gather reads them as 0.
//   b4: 100 keys, clamped to the table's 6: mean of all six rows.
//   b5: -3 keys, clamped to 0: out 0, lse -inf.
// RUN: attn-opt %s --attn-lower-naive-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%attn_runner_utils \
// RUN: | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %q = arith.constant dense<0.5> : tensor<6x1x1x2xf32>
  %kc = arith.constant dense<0.0> : tensor<2x2x1x2xf32>
  %vc = arith.constant dense<[[[[1.0, 2.0]], [[3.0, 4.0]]],
                              [[[5.0, 6.0]], [[7.0, 8.0]]]]> : tensor<2x2x1x2xf32>
  %pt = arith.constant dense<[[1, 0, 77], [-1, -1, -1], [0, 99999, -5],
                              [1000000, 1, 1], [0, 1, 0], [0, 0, 0]]> : tensor<6x3xi32>
  %len = arith.constant dense<[3, 0, 1, 2, 100, -3]> : tensor<6xi32>
  %o, %lse = attn.sdpa_paged %q, %kc, %vc, %pt, %len
      : tensor<6x1x1x2xf32>, tensor<2x2x1x2xf32>, tensor<2x2x1x2xf32>,
        tensor<6x3xi32>, tensor<6xi32> -> tensor<6x1x1x2xf32>, tensor<6x1x1xf32>
  %uo = tensor.cast %o : tensor<6x1x1x2xf32> to tensor<*xf32>
  %ul = tensor.cast %lse : tensor<6x1x1xf32> to tensor<*xf32>
  call @printMemrefF32(%uo) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%ul) : (tensor<*xf32>) -> ()
  return
}

// CHECK: sizes = [6, 1, 1, 2]
// CHECK-NEXT: {{\[\[\[\[}}4.33333, 5.33333]]],
// CHECK-NEXT:  {{\[\[\[}}0, 0]]],
// CHECK-NEXT:  {{\[\[\[}}1, 2]]],
// CHECK-NEXT:  {{\[\[\[}}0, 0]]],
// CHECK-NEXT:  {{\[\[\[}}3.33333, 4.33333]]],
// CHECK-NEXT:  {{\[\[\[}}0, 0]]]]
// CHECK: sizes = [6, 1, 1]
// CHECK-NEXT: {{\[\[\[}}1.09861]],
// CHECK-NEXT:  {{\[\[}}-inf]],
// CHECK-NEXT:  {{\[\[}}0]],
// CHECK-NEXT:  {{\[\[}}0.693147]],
// CHECK-NEXT:  {{\[\[}}1.79176]],
// CHECK-NEXT:  {{\[\[}}-inf]]]
// CHECK-NOT: nan
