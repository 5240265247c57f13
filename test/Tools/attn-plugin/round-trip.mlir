// attn's op round-trips through the stock mlir-opt with the dialect plugin:
// ops.mlir's checks, in the custom and the generic form.
//
// RUN: %mlir_opt_stock --load-dialect-plugin=%attn_plugin \
// RUN:     %S/../../Dialect/Attn/IR/ops.mlir \
// RUN: | %mlir_opt_stock --load-dialect-plugin=%attn_plugin \
// RUN: | FileCheck %S/../../Dialect/Attn/IR/ops.mlir
// RUN: %mlir_opt_stock --load-dialect-plugin=%attn_plugin \
// RUN:     %S/../../Dialect/Attn/IR/ops.mlir --mlir-print-op-generic \
// RUN: | %mlir_opt_stock --load-dialect-plugin=%attn_plugin \
// RUN: | FileCheck %S/../../Dialect/Attn/IR/ops.mlir
//
// Without the plugin the stock tool does not know the dialect.
// RUN: not %mlir_opt_stock %S/../../Dialect/Attn/IR/ops.mlir 2>&1 \
// RUN: | FileCheck %s
// CHECK: Dialect `attn' not found
