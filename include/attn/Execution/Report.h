//===- Report.h - attn-run's text and JSON reports --------------*- C++ -*-===//
//
// Part of the attn project.
//
// Renders a RunReport: the human-readable summary (one line per check, the
// timings, PASS or FAIL) and the one JSON object of `--json`, whose keys
// docs/attn-run.md lists.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_REPORT_H
#define ATTN_EXECUTION_REPORT_H

#include "attn/Execution/Engine.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::attn::exec {

/// The summary attn-run prints, ending in a line "PASS" or "FAIL".
void printReport(llvm::raw_ostream &os, const RunReport &report);

/// One JSON object with every figure of the report.
llvm::json::Value reportToJson(const RunReport &report);

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_REPORT_H
