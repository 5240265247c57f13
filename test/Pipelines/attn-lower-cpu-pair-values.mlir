// attn-lower-cpu sets attn-tile-online-softmax's pair-values on the kernels
// with bf16 dot products (avx512-bf16; on amx, transpose-values takes the
// P.V that AMX tiles run): V packed into key pairs once per call. The
// widening kernels (avx512) read V as it is.
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512-bf16" --mlir-print-ir-after=attn-tile-online-softmax -o /dev/null 2>&1 | FileCheck %s --check-prefix=BF16
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512" --mlir-print-ir-after=attn-tile-online-softmax -o /dev/null 2>&1 | FileCheck %s --check-prefix=WIDEN
// RUN: attn-opt %s --attn-lower-cpu="kernels=amx" --mlir-print-ir-after=attn-tile-online-softmax -o /dev/null 2>&1 | FileCheck %s --check-prefix=AMX

// BF16: IR Dump After AttnTileOnlineSoftmax
// BF16: attn.tile = #attn.tile<pair_values>
// BF16: attn.tile = #attn.tile<pv>
// WIDEN: IR Dump After AttnTileOnlineSoftmax
// WIDEN-NOT: pair_values
// AMX: IR Dump After AttnTileOnlineSoftmax
// AMX-NOT: pair_values
// AMX: attn.tile = #attn.tile<transpose_values>
// AMX-NOT: pair_values
func.func @paired(%q: tensor<1x2x512x64xbf16>, %k: tensor<1x2x512x64xbf16>) -> tensor<1x2x512x64xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16> -> tensor<1x2x512x64xbf16>
  return %o : tensor<1x2x512x64xbf16>
}
