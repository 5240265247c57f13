//===- SdpaSpec.h - attn-run's --sdpa spec strings --------------*- C++ -*-===//
//
// The `key=value,...` problem description of `attn-run --sdpa SPEC`
// (docs/attn-run.md): parsing with one-line diagnostics, the canonical
// spelling, and the shapes and element types of the synthesized function
// (Problem.h builds its IR). Free of MLIR (LLVM's Support only), like the
// rest of the execution support library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_SDPASPEC_H
#define ATTN_EXECUTION_SDPASPEC_H

#include "attn/Spec/HostTensor.h"
#include "attn/Spec/Reference.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::exec {

/// One attn.sdpa problem as described by an `--sdpa` spec string.
struct SdpaSpec {
  /// -1 means "take the default": hkv = hq, lk = lq, dv = d. hq, lq and d have
  /// no default; parseSdpaSpec() requires them.
  int64_t b = 1, hq = 1, hkv = -1, lq = -1, lk = -1, d = -1, dv = -1;
  /// Element type of query, key, value and out: F32, F16 or BF16.
  DType dtype = DType::F32;
  Causal causal = Causal::None;
  /// Key `window=L:R`: the op's window attribute [L, R] (-1 unbounded).
  std::optional<std::pair<int64_t, int64_t>> window;
  /// Key `softcap=C`: the op's softcap attribute (an f32 > 0).
  std::optional<double> softcap;
  /// Key `key_lengths=1`: the op takes per-sequence key lengths, an i32 [b]
  /// argument after the mask (generated uniform in [0, lk] from the seed).
  bool keyLengths = false;
  /// Key `alibi=none|h|bh`: ALiBi slopes, an f32 [hq] or [b, hq] argument
  /// after the key lengths (generated |N(0, 1)| / 4).
  SdpaProblem::Alibi alibi = SdpaProblem::Alibi::None;
  MaskKind mask = MaskKind::None;
  /// Rank 4, each dim 1 or the matching dim of [b, hq, lq, lk]; empty means
  /// the full [b, hq, lq, lk]. Ignored without a mask.
  std::vector<int64_t> maskShape;
  /// The `scale` attribute; absent means the op's default 1/sqrt(d).
  std::optional<double> scale;
  /// Whether the op also returns the log-sum-exp.
  bool lse = false;
  /// Key `dynamic=1`: B, Lq and Lk are '?' in the generated function's types
  /// (the concrete sizes above still say what to allocate).
  bool dynamic = false;
  /// Keys `seqlens_q=A/B/...` and `seqlens_k=...` (default: seqlens_q): the
  /// spec is one attn.sdpa_varlen over that many packed sequences of those
  /// lengths (each >= 0) instead of one attn.sdpa; b, lq and lk then come
  /// from them (b the count, lq and lk the longest, at least 1) and must not
  /// be given, nor a mask or key lengths (SdpaSpecVarlen.cpp).
  std::vector<int64_t> seqlensQ, seqlensK;
  bool isVarlen() const { return !seqlensQ.empty(); }
  /// Keys `page_size=P`, `kv_lens=A/B/...` and `layout=nhd|hnd`: the spec
  /// is one attn.sdpa_paged over a paged cache (SdpaSpecPaged.cpp) holding
  /// `b` = the count of kv_lens sequences of those lengths (each >= 0), each
  /// in ceil(len / P) pages scattered over the cache by a permutation drawn
  /// from the seed; every sequence has `lq` queries. lk is the page table's
  /// span (max_pages * P) and must not be given, nor b, a mask or key
  /// lengths.
  int64_t pageSize = 0;
  std::vector<int64_t> kvLens;
  bool hndLayout = false;
  bool isPaged() const { return pageSize > 0; }

  /// The same spec with every -1 replaced by its default and an empty
  /// maskShape (when there is a mask) replaced by the full [b, hq, lq, lk].
  SdpaSpec withDefaults() const;
  /// Success if the spec (after withDefaults()) is well formed, else an error
  /// with a one-line message naming the offending key and value.
  /// parseSdpaSpec() runs it.
  llvm::Error validate() const;

  /// `scale` if set, else 1/sqrt(d); either way computed in double and then
  /// rounded to float, since the attribute is an f32.
  double effectiveScale() const;
  /// The problem for referenceSdpa(), with scale = effectiveScale().
  SdpaProblem toProblem() const;
  /// Canonical spelling, e.g. "b=1,hq=8,hkv=8,lq=128,lk=128,d=64,dv=64,
  /// dtype=f32,causal=none,mask=none,lse=0" (no spaces), with ",window=L:R"
  /// after causal when set, ",softcap=C" after that when set (shortest
  /// decimal), ",mask_shape=AxBxCxD" after mask, ",key_lengths=1" before lse
  /// when set when there is a mask, ",scale=S" after
  /// that when set (shortest decimal that reads back as the same double) and
  /// ",dynamic=1" at the end when set. parseSdpaSpec() reads it back to an
  /// equal spec (with the defaults filled).
  std::string toString() const;

  /// The function's arguments in order: query [b, hq, lq, d], key
  /// [b, hkv, lk, d] and value [b, hkv, lk, dv] of `dtype`, then the mask if
  /// there is one (maskShape; Bool for mask=bool, `dtype` for mask=float),
  /// then the key lengths (I32 [b]) if there are.
  /// Always the concrete sizes, also with `dynamic`.
  std::vector<TensorSpec> argSpecs() const;
  /// The function's results: out [b, hq, lq, dv] of `dtype`, then lse
  /// [b, hq, lq] of F32 if there is one.
  std::vector<TensorSpec> resultSpecs() const;
};

/// Parses docs/attn-run.md's comma-separated `key=value` string into `spec`
/// with the defaults filled (hkv = hq, lk = lq, dv = d, full mask shape).
/// Keys: b, hq, hkv, lq, lk, d, dv, dtype (f32|f16|bf16), causal
/// (none|top_left|bottom_right), window (L:R, each -1 or >= 0), softcap (a
/// float > 0), mask
/// (none|bool|float), mask_shape (AxBxCxD),
/// scale (a float), lse (0|1), dynamic (0|1); hq, lq and d are required.
/// Whitespace around keys and values is ignored. An error has a one-line
/// message naming the key and the value (unknown or duplicate key, empty item,
/// malformed number, non-positive dim, hq not a multiple of hkv, bad enum
/// value, mask_shape without a mask or not matching [b, hq, lq, lk], a scale
/// that is not finite or is zero as an f32, a tensor over 2^40 elements or
/// sizes whose FLOP count overflows int64).
llvm::Expected<SdpaSpec> parseSdpaSpec(llvm::StringRef text);

/// The varlen form (SdpaSpecVarlen.cpp). Reads `A/B/...` (each >= 0).
llvm::Error parseSeqlens(const std::string &given, const std::string &value,
                         std::vector<int64_t> &out);
/// Refuses the keys that have no meaning on attn.sdpa_varlen (`seen` says
/// whether a key, by name, was given).
llvm::Error checkVarlenKeys(llvm::function_ref<bool(llvm::StringRef)> seen);
/// Fills b, lq, lk from the lengths (withDefaults() calls it).
void setVarlenSizes(SdpaSpec &s);
/// The varlen checks validate() runs before the common ones.
llvm::Error validateVarlen(const SdpaSpec &s);
/// What toString(), argSpecs() and resultSpecs() give for a varlen spec:
/// query [total_q, hq, d], key [total_k, hkv, d], value [total_k, hkv, dv],
/// cu_seqlens_q and cu_seqlens_k (I32 [b + 1]), then the ALiBi slopes;
/// out [total_q, hq, dv] and lse [hq, total_q].
std::string varlenSpecString(const SdpaSpec &s);
std::vector<TensorSpec> varlenArgSpecs(const SdpaSpec &s);
std::vector<TensorSpec> varlenResultSpecs(const SdpaSpec &s);
/// The paged form (SdpaSpecPaged.cpp). Refuses the keys that have no
/// meaning on attn.sdpa_paged, or a paged key without page_size.
llvm::Error checkPagedKeys(llvm::function_ref<bool(llvm::StringRef)> seen);
/// Fills b and lk (max_pages * page_size) from kv_lens (withDefaults()).
void setPagedSizes(SdpaSpec &s);
/// The paged checks validate() runs before the common ones.
llvm::Error validatePaged(const SdpaSpec &s);
/// Pages of the longest sequence (at least 1: the table's width) and pages
/// of all sequences (at least 1: the cache's page count).
int64_t pagedMaxPages(const SdpaSpec &s);
int64_t pagedNumPages(const SdpaSpec &s);
/// What toString(), argSpecs() and resultSpecs() give for a paged spec:
/// query [b, hq, lq, d], key_cache [num_pages, page_size, hkv, d] (NHD; HND
/// [num_pages, hkv, page_size, d]), value_cache likewise with dv,
/// page_table I32 [b, max_pages], kv_lens I32 [b], then the ALiBi slopes;
/// out [b, hq, lq, dv] and lse [b, hq, lq].
std::string pagedSpecString(const SdpaSpec &s);
std::vector<TensorSpec> pagedArgSpecs(const SdpaSpec &s);
/// The cumulative offsets [0, l0, l0 + l1, ...] of `lengths`.
std::vector<int64_t> cumulativeOffsets(const std::vector<int64_t> &lengths);
/// The shortest "%.*g" spelling of `v` that reads back as the same double
/// (how toString() and varlenSpecString() print softcap and scale).
std::string formatDoubleRoundTrip(double v);
/// The spec spelling of `causal` (none, top_left, bottom_right).
const char *causalName(Causal causal);

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_SDPASPEC_H
