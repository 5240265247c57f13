//===- ReferencePaged.h - The f64 oracle of attn.sdpa_paged -----*- C++ -*-===//
//
// Part of the attn project.
//
// attn.sdpa_paged is attn.sdpa with key lengths on the dense view of its
// caches: sequence b's key t is row t % page_size of page
// page_table[b, t / page_size]. The reference builds that view on the host
// (plain loops, no code shared with the lowerings) and runs referenceSdpa()
// on it; the run's page table and lengths are checked here first, so that a
// table the op would leave undefined is refused before anything runs.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_REFERENCEPAGED_H
#define ATTN_EXECUTION_REFERENCEPAGED_H

#include "attn/Spec/HostTensor.h"
#include "attn/Spec/Reference.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::attn::exec {

/// Writes a generated run's page table and kv lengths (arguments 3 and 4):
/// the lengths are p.keyLengthValues; the pages of all sequences, in order,
/// are a permutation of [0, p.numPages) drawn from `seed` (so a sequence's
/// pages are scattered over the cache), and table entries past a sequence's
/// own pages are -1 (never read: docs/op.md).
void fillPagedTables(const SdpaProblem &p, std::vector<HostTensor> &inputs,
                     uint64_t seed);

/// Reads the page table and lengths from arguments 3 and 4 into `p` (and
/// the ALiBi slopes, setKeyLengthValues()), refusing with one line a
/// negative length, a length past the table's max_pages * page_size keys,
/// and a page index outside [0, num_pages) among a sequence's own pages
/// (the entries its keys use).
llvm::Error setPagedValues(SdpaProblem &p,
                           const std::vector<HostTensor> &inputs);

/// The dense view [b, hkv, maxPages * pageSize, d] (dv for the values) of
/// the caches (inputs 1 and 2) through p.pageTableValues: keys at or past a
/// sequence's length are 0 (the reference never reads them).
struct PagedDenseView {
  HostTensor key, value;
};
PagedDenseView densePagedView(const SdpaProblem &p,
                              const std::vector<HostTensor> &inputs);

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_REFERENCEPAGED_H
