//===- OperandValues.h - values the attn ops constrain (private) -*- C++
//-*-===//
//
// Part of the attn project.
//
// attn-run's FILE mode runs any entry: where an attn op's operand is one of
// the entry's arguments and the op constrains its values (varlen offsets,
// ALiBi slopes), the inputs are made or checked to satisfy it before the
// compiled code runs. Private to lib/Execution.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_EXECUTION_OPERANDVALUES_H
#define ATTN_LIB_EXECUTION_OPERANDVALUES_H

#include "attn/Spec/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace mlir::attn::exec::detail {

/// For each attn.sdpa_varlen of `entry` whose cu_seqlens operands are
/// arguments: with `generated` inputs, writes offsets valid by construction
/// (the packed rows cut evenly); else refuses in one line offsets that do
/// not start at 0, decrease or run past the packed rows. For each ALiBi
/// slopes operand that is an argument, refuses slopes the lowerings cannot
/// scale (checkAlibiSlopes). Page tables and key lengths need nothing: the
/// ops clamp them (docs/op.md).
llvm::Error prepareOperandValues(func::FuncOp entry,
                                 std::vector<HostTensor> &inputs,
                                 bool generated);

} // namespace mlir::attn::exec::detail

#endif // ATTN_LIB_EXECUTION_OPERANDVALUES_H
