// Nonsense pipeline options are rejected by the pass they are handed to,
// under the pipeline's own option names.
// RUN: not attn-opt %s --attn-lower-cpu="block-q=0" 2>&1 | FileCheck %s --check-prefix=BLOCKQ
// RUN: not attn-opt %s --attn-lower-cpu="block-kv=-1" 2>&1 | FileCheck %s --check-prefix=BLOCKKV
// RUN: not attn-opt %s --attn-lower-cpu="vector-width=0" 2>&1 | FileCheck %s --check-prefix=WIDTH
// RUN: not attn-opt %s --attn-lower-cpu="reg-block=0" 2>&1 | FileCheck %s --check-prefix=REGBLOCK
// RUN: not attn-opt %s --attn-lower-cpu="row-vectors=-2" 2>&1 | FileCheck %s --check-prefix=ROWVECS
// RUN: not attn-opt %s --attn-lower-cpu="kv-splits=-1" 2>&1 | FileCheck %s --check-prefix=SPLITS
// RUN: not attn-opt %s --attn-lower-cpu="kernels=sve" 2>&1 | FileCheck %s --check-prefix=KERNELS
// RUN: not attn-opt %s --attn-lower-cpu="kernels=avx2 row-vectors=-2" 2>&1 | FileCheck %s --check-prefix=AVX2
// RUN: not attn-opt %s --attn-lower-cpu="kernels=avx512 row-vectors=-2" 2>&1 | FileCheck %s --check-prefix=AVX512
// RUN: not attn-opt %s --attn-lower-cpu="prefetch-spread=0" 2>&1 | FileCheck %s --check-prefix=SPREAD0
// RUN: not attn-opt %s --attn-lower-cpu="prefetch-spread=6" 2>&1 | FileCheck %s --check-prefix=SPREAD6
// One diagnostic, the function not dumped after it (it was: the error was
// emitted on the function, which came with a note dumping it whole).
// RUN: not attn-opt %s --attn-lower-cpu="prefetch-spread=3" 2>&1 | FileCheck %s --check-prefix=SPREAD3 --implicit-check-not=note: --implicit-check-not=error:
// RUN: not attn-opt %s --attn-lower-cpu="grad-block-q=4611686018427387904" 2>&1 | FileCheck %s --check-prefix=GRADQ --implicit-check-not=note: --implicit-check-not=error:
// SPREAD3: error: attn-cpu-microkernels: prefetch-spread (3) must be a power of two
// GRADQ: error: attn-cpu-sdpa-grad: block-q (4611686018427387904) must be at most 65536

// The row multiple and the kernels' defaults are the host's: 16 lanes,
// reg-block 6, 4 row vectors and a prefetch spread of 1 with AVX-512; 8,
// 6, 2 and 8 with AVX2 only
// (kernels=avx2 and kernels=avx512 ask for each, on any host).
// BLOCKQ: error: attn-tile-online-softmax: block-q (0) must be positive
// BLOCKKV: error: attn-tile-online-softmax: block-kv (-1) must be positive
// WIDTH: error: attn-cpu-microkernels: vector-width (0) must be positive
// REGBLOCK: error: attn-cpu-microkernels: reg-block (0) must be positive
// ROWVECS: error: attn-cpu-microkernels: row-vectors (-2) must be positive
// SPLITS: error: attn-tile-online-softmax: kv-splits (-1) must be >= 0
// KERNELS: for the --kernels option: Cannot find option named 'sve'!
// AVX2: error: attn-cpu-microkernels: row-vectors (-2) must be positive
// AVX512: error: attn-cpu-microkernels: row-vectors (-2) must be positive
// SPREAD0: error: attn-cpu-microkernels: prefetch-spread (0) must be positive
// SPREAD6: error: attn-cpu-microkernels: prefetch-spread (6) must be a power of two
func.func @f(%q: tensor<1x1x32x16xf32>) -> tensor<1x1x32x16xf32> {
  %o = attn.sdpa %q, %q, %q : tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32> -> tensor<1x1x32x16xf32>
  return %o : tensor<1x1x32x16xf32>
}
