//===- Tuning.td - attn's tuning knobs, each declared once -*- tablegen -*-===//
//
// Part of the attn project.
//
// Every option that tunes the generated code is one record here: its name,
// type, help and default, its defaults per CPU kernel path and GPU chip, and
// which pipeline and tools take it. The records are MLIR pass options: a
// pass lists the ones it takes in its `options` (Passes.td, and so its
// generated options struct and docs). scripts/tuning-gen.py makes the rest
// from the same records (include/attn/Tuning/CMakeLists.txt):
//   - the pipelines' options (CpuPipelineOptions, GpuPipelineOptions in
//     Pipelines.h), with help that states the defaults of the table;
//   - the knob table behind attn-run's and attn-compile's flags (one parser,
//     lib/Tuning), their checks and the library JSON's "tuning";
//   - knobs.json, from which the Python package derives attn.compile's
//     keyword arguments;
//   - the per-path and per-chip defaults as C++ data (Knobs.h.inc).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TUNING_TUNING_TD
#define ATTN_TUNING_TUNING_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// What the knobs tune for: CPU kernel paths and GPU chips
//===----------------------------------------------------------------------===//

// A set of kernels of attn-lower-cpu (its `kernels` option): the option's
// spelling, the CpuKernels enumerator (CpuFeatures.h) and what it is.
class CpuKernelPath<string name, string enumerator, string summary> {
  string spelling = name;
  string cppEnumerator = enumerator;
  string description = summary;
}

def CpuPathAuto : CpuKernelPath<"auto", "Auto",
    "amx, avx512-bf16, avx512 or avx2, by the target CPU's features">;
def CpuPathAmx : CpuKernelPath<"amx", "Amx",
    "avx512-bf16, with the bf16 products on AMX tiles">;
def CpuPathAvx512Bf16 : CpuKernelPath<"avx512-bf16", "Avx512Bf16",
    "AVX-512, bf16 products on vdpbf16ps">;
def CpuPathAvx512 : CpuKernelPath<"avx512", "Avx512",
    "AVX-512, bf16/f16 widened to f32">;
def CpuPathAvx2 : CpuKernelPath<"avx2", "Avx2",
    "AVX2 + FMA, 8 lanes, no AVX-512 instructions">;

defvar CpuKernelPaths = [CpuPathAuto, CpuPathAmx, CpuPathAvx512Bf16,
                         CpuPathAvx512, CpuPathAvx2];

// A GPU the GPU pipelines compile for: its name (compute capability), the
// PTX ISA it needs at least, and its SMs as convert-attn-to-gpu's automatic
// kv-splits counts them.
class GpuChip<string name, string ptx, int sms> {
  string spelling = name;
  string ptxFeatures = ptx;
  int smCount = sms;
}

def GpuSm80 : GpuChip<"sm_80", "+ptx70", 108>;
def GpuSm86 : GpuChip<"sm_86", "+ptx71", 108>;
def GpuSm89 : GpuChip<"sm_89", "+ptx78", 108>;
def GpuSm90 : GpuChip<"sm_90", "+ptx80", 132>;
def GpuSm90a : GpuChip<"sm_90a", "+ptx80", 132>;

defvar GpuChips = [GpuSm80, GpuSm86, GpuSm89, GpuSm90, GpuSm90a];

//===----------------------------------------------------------------------===//
// Knobs
//===----------------------------------------------------------------------===//

// A knob's defaults on the CPU kernel paths where they are not its own, as
// the option's text ("" keeps the knob's default on that path): attn-lower-cpu
// takes them where the option is not given, with `kernels` resolved for the
// target CPU. The fields are CpuKernelPath's enumerators.
class OnCpuPaths<string amx = "", string avx512_bf16 = "", string avx512 = "",
                 string avx2 = ""> {
  string Amx = amx;
  string Avx512Bf16 = avx512_bf16;
  string Avx512 = avx512;
  string Avx2 = avx2;
}

// A tuning knob: a pass option (Option's fields: the C++ member, the
// option's name, its C++ type, the pass's default as C++ and the help, for
// users) and what the pipelines and tools make of it.
class Knob<string cppName, string arg, string type, string default,
           string help>
    : Option<cppName, arg, type, default, help> {
  // The pipeline that takes it: "cpu" (attn-lower-cpu), "gpu" (the GPU
  // pipelines), or "" (a pass's alone).
  string pipeline = "";
  // The pipeline's option name, C++ member and default, where they are not
  // the pass's (grad-block-q is attn-cpu-sdpa-grad's block-q).
  string pipelineArgument = arg;
  string pipelineCppName = cppName;
  string pipelineDefault = default;
  // The defaults on the CPU kernel paths, over pipelineDefault.
  OnCpuPaths onCpuPath = OnCpuPaths<>;
  // Whether a path's default holds only at the path's own vector-width (8 on
  // avx2, 16 on the others): with another vector-width given, the knob's.
  bit onCpuPathAtItsWidth = 0;
  // Whether this knob's defaults per path are the paths' own widths (one
  // knob: vector-width).
  bit isPathWidth = 0;
  // A default the table cannot hold (one that depends on the target CPU's
  // features), for the help: "Default: <defaultNote>".
  string defaultNote = "";
  // A flag of attn-run and attn-compile and a keyword argument of Python's
  // attn.compile: --<pipelineArgument>.
  bit tool = 0;
  // attn-compile's default where it is not the pipeline's (as the option's
  // text), with why.
  string libraryDefault = "";
  string libraryDefaultWhy = "";
  // Recorded, when given, in a library's JSON "tuning" (docs/c-abi.md); the
  // others have keys of their own or none.
  bit libraryTuning = 1;
  // The values the knob takes: an integer of at least `min` and at most `max`
  // (both required of every int64_t knob), a power of two, a multiple of
  // `multipleOf`; a string or enum, one of `choices`. The one statement of
  // them: the tools check their flags against it before the pipeline is
  // built, and each pass checks its options against it (tuning::bounds, the
  // passes' verifyOptionBounds), so a value given straight to a pass (attn-opt)
  // is refused in one line as well. The maxima keep every product of block
  // sizes and dims that the lowerings form in int64_t and every tile
  // allocatable.
  int min = ?;
  int max = ?;
  bit powerOfTwo = 0;
  int multipleOf = 0;
  list<string> choices = [];
}

// A knob of attn-lower-cpu, and the tools' flag of it.
class CpuKnob<string cppName, string arg, string type, string default,
              string help>
    : Knob<cppName, arg, type, default, help> {
  let pipeline = "cpu";
  let tool = 1;
}

// A knob of the GPU pipelines (attn-lower-gpu's fused kernels), and the
// tools' flag of it.
class GpuKnob<string cppName, string arg, string type, string default,
              string help>
    : Knob<cppName, arg, type, default, help> {
  let pipeline = "gpu";
  let tool = 1;
}

// The largest block of rows or keys any knob takes (2^16): a tile of two
// such blocks has 2^32 elements, and block sizes times dims stay far from
// int64_t's range.
defvar MaxBlock = 65536;

//===----------------------------------------------------------------------===//
// attn-lower-cpu
//===----------------------------------------------------------------------===//

def CpuKernels : CpuKnob<"kernels", "kernels", "::mlir::attn::CpuKernels",
    "::mlir::attn::CpuKernels::Auto",
    "Which CPU kernels (docs/passes.md): auto picks the best the target CPU "
    "has (attn-run: this machine; attn-compile: --cpu); vector-width, "
    "reg-block and row-vectors, when given, override the kernels' own"> {
  let choices = !foreach(path, CpuKernelPaths, path.spelling);
  let libraryTuning = 0;
}

def CpuBlockQ : CpuKnob<"blockQ", "block-q", "int64_t", "64",
    "Query rows per block of the online-softmax tiling (a tile of its "
    "scf.forall)"> {
  let min = 1;
  let max = MaxBlock;
}

def CpuBlockKV : CpuKnob<"blockKV", "block-kv", "int64_t", "64",
    "Keys per block of the sequential online-softmax loop"> {
  let min = 1;
  let max = MaxBlock;
}

def CpuKvSplits : CpuKnob<"kvSplits", "kv-splits", "int64_t", "0",
    "Split-K: cut the keys into this many chunks, one forall iteration "
    "each, merged by their lse (static B and Lk, one query block per head "
    "or group); 0: auto (when there are fewer than 16 query blocks and at "
    "least 2048 keys), 1: never"> {
  let min = 0;
  let max = MaxBlock;
}

def CpuDecodeRows : CpuKnob<"decodeRows", "decode-rows", "int64_t", "0",
    "Decode groups: a query block of at most this many rows (Lq, or Lq "
    "times the group size with grouped-query attention) becomes one "
    "attn.decode_keys over its keys instead of the tile ops, where the op "
    "allows it (no user mask, softcap or ALiBi; a band only with Lq = 1; D "
    "and Dv multiples of decode-dim-multiple), for the target's decode "
    "kernel (attn-cpu-decode: vectors along D, K and V streamed once); 0: "
    "never. attn-lower-cpu takes it only with microkernels of a "
    "power-of-two vector-width"> {
  let pipelineDefault = "16";
  // The avx2 kernels: the decode kernel only where a block's rows do not
  // fill one of their 8-lane vectors. From 8 rows on, the tile ops (rows
  // along the vectors, no horizontal sums) are faster. On a Zen 3, one
  // thread, paired CPU time of decode-rows 0 against 16 (bench/ab.py,
  // d=128, Lk=2048 unless said): hq=8 hkv=1 0.847x the time, Lk=32k 0.894x
  // (two threads, split-K, wall 0.925x), bf16 Lk=32k 0.684x, hq=12 hkv=1
  // 0.665x, hq=16 hkv=1 0.493x (f16, Lk=4096, 0.367x), hq=4 hkv=1 Lq=2
  // 0.817x, hq=2 Lq=8 0.744x; but with fewer rows than a vector the decode
  // kernel wins: hq=6 hkv=1 1.358x, hq=32 hkv=8 (4 rows) 1.071x with the
  // tile ops (journal/round-21.md).
  // The 16-lane kernels (avx512, avx512-bf16, amx): the decode kernel up to
  // 8 rows. On a Zen 4, one thread, paired time of the tile ops against it
  // (decode-rows 7 to 15, d=128 unless said): 16 rows (hq=16 hkv=1) Lk=2048
  // 0.332x, Lk=32k 0.598x, bf16 0.283x; hq=4 hkv=1 Lq=4 0.376x; hq=32 hkv=2
  // d=64 0.382x; 12 rows 0.654x (bf16 Lk=32k 0.465x); 10 rows 0.548x; but 8
  // rows (hq=8 hkv=1) 1.303x at Lk=32k, 1.023x at 2048 (bf16 0.844x) and 6
  // rows 1.531x (journal/round-22.md).
  let onCpuPath = OnCpuPaths<"8", "8", "8", "7">;
  let onCpuPathAtItsWidth = 1;
  let min = 0;
  let max = MaxBlock;
}

def CpuDecodePrefetchLocality : CpuKnob<"decodePrefetchLocality",
    "decode-prefetch-locality", "int64_t", "2",
    "Decode kernel: the locality of its software prefetches of the K and V "
    "rows ahead (llvm.prefetch's: 3 into L1, prefetcht0 on x86; 2 into L2, "
    "prefetcht1; 1 prefetcht2; 0 non-temporal, prefetchnta)"> {
  // Into L2 (prefetcht1) on every host: hq=32 hkv=8 Lk=32k d=128, paired
  // time against L1 (bench/ab.py) on a Zen 4 (avx512-bf16 kernels):
  // f32 one thread 0.497x (CPU time), two 0.574x (wall), hq=8 hkv=1
  // (split-K) 0.677x, d=64 0.902x, bf16 0.633x, hq=hkv=32 0.998x; on an
  // Emerald Rapids (amx): f32 0.914x, two threads 0.956x, hq=8 hkv=1
  // 0.929x, bf16 1.014x; on a Zen 3 (avx2) 0.981-0.997x; a Zen 5 measured
  // it no better for f32 (journal/round-10.md, journal/round-14.md and
  // journal/round-22.md).
  let min = 0;
  let max = 3;
}

def CpuDecodePrefetch : CpuKnob<"decodePrefetch", "decode-prefetch",
    "std::string", "\"auto\"",
    "Decode kernel: which kernels prefetch their K and V rows ahead (at "
    "decode-prefetch-locality): all, none, or auto: all but those with f32 "
    "K and V whose P.V takes one group of accumulators (query rows times Dv "
    "at most 16 vectors at 16 lanes, 8 at 8), which read each K and V row "
    "whole, once, in order, and leave the streams to the hardware "
    "prefetchers"> {
  // auto where the hardware prefetchers were measured to do as well for
  // the one-group f32 kernels (a Zen 4, the avx512 kernels' kind of host;
  // CpuDecodeBuilder::prefetches); the amx kernels' hosts (Intel) and the
  // avx2 ones' keep every prefetch until measured there.
  let onCpuPath = OnCpuPaths<"\"all\"", "\"auto\"", "\"auto\"", "\"all\"">;
  let choices = ["auto", "all", "none"];
}

def CpuDecodePageTouch : CpuKnob<"decodePageTouch", "decode-page-touch",
    "int64_t", "8192",
    "Decode kernel with 16-bit K and V: each block of keys also loads one "
    "element of K and one of V this many bytes past the rows its prefetches "
    "reach (clamped to the last block; 0: none), so that on 4 KiB pages the "
    "translation of the page the prefetches reach next is walked by a load, "
    "not by a prefetch that stalls the core while it walks"> {
  let min = 0;
  let max = 16777216;
}

def CpuNarrowBlockQ : CpuKnob<"narrowBlockQ", "narrow-block-q", "int64_t",
    "0",
    "Query rows per block, in place of block-q, for an op whose D and Dv are "
    "at most 64 (narrow-lowp-max-d with bf16 or f16 values), that has no "
    "causal or window band (larger blocks would compute more of what the "
    "band skips) and not both a user mask and grouped-query heads (more "
    "grouped rows, whose mask tile the CPU kernels do not take); 0: block-q "
    "everywhere"> {
  let pipelineDefault = "128";
  // The avx2 kernels: block-q's rows (64 by default) for every op. A
  // 128-row block of d = 64 holds a 32 KiB transposed query tile and a 32
  // KiB score tile, twice the L1 of the AVX2-only host measured (Zen 3: 32
  // KiB). There, one thread, CPU time per call, 128 -> 64 rows
  // (bench/ab.py, best of 20 calls a side): f32 L4096 d64 0.959x the
  // time, bf16 0.992x, f16 0.988x, BERT-base 0.978x (journal/round-10.md).
  let onCpuPath = OnCpuPaths<avx2 = "0">;
  let defaultNote = "0 where block-q is given";
  let min = 0;
  let max = MaxBlock;
}

def CpuMicrokernels : CpuKnob<"microkernels", "microkernels", "bool", "true",
    "Replace the tile ops with vector microkernels (attn-cpu-microkernels)">;

def CpuVectorWidth : CpuKnob<"vectorWidth", "vector-width", "int64_t", "16",
    "f32 lanes per vector (16 for AVX-512, 8 for AVX2)"> {
  let onCpuPath = OnCpuPaths<avx2 = "8">;
  let isPathWidth = 1;
  let min = 1;
  let max = 64;
}

def CpuRegBlock : CpuKnob<"regBlock", "reg-block", "int64_t", "6",
    "Keys (scores) or value columns (pv) per register block (scaled up when "
    "a tile has fewer row vectors, up to 24 accumulators; products on a "
    "band's edge take one row vector and 16 on 16 lanes)"> {
  let min = 1;
  let max = 64;
}

def CpuRowVectors : CpuKnob<"rowVectors", "row-vectors", "int64_t", "4",
    "Row vectors per register block (fewer if the tile has fewer)"> {
  // The avx2 kernels' 16 vector registers: 12 accumulators (reg-block 6), 2
  // row vectors, a broadcast. Against reg-block 4 (8 accumulators), on a
  // Zen 3, 7 alternating rounds of attn-run --bench 5 --peak, median % of
  // peak, 1 thread: f32 L4096 d64 61.6 -> 70.6, bf16 56.0 -> 67.6, Lq=1000
  // Lk=3001 d80 52.6 -> 65.8 (5 rounds) (journal/round-08.md).
  let onCpuPath = OnCpuPaths<avx2 = "2">;
  let min = 1;
  let max = 64;
}

def CpuPrefetchSpread : CpuKnob<"prefetchSpread", "prefetch-spread",
    "int64_t", "1",
    "Most reduction steps per prefetch in the f32 scores and P.V kernels (a "
    "power of two; 1: one line per step, the clamped last line repeated once "
    "the tile is covered): each kernel takes the largest power of two up to "
    "this that divides its reduction and whose groups, all taken, still "
    "reach every line of the next tile, and prefetches one line per stream "
    "in the first step of each group (a causal diagonal block, which skips "
    "work, leaves some lines out)"> {
  // The avx2 kernels: one prefetch per 8 reduction steps instead of one per
  // step (most of which repeated the clamped last line): on a Zen 3, paired
  // CPU time against spread 1, L4096 d64 0.89-0.94, d128 0.93, BERT-base
  // 0.91, causal L512 0.92, bf16 (widened) 0.93, outputs bit for bit the
  // same; spread 4 and 8 alike (journal/round-17.md).
  let onCpuPath = OnCpuPaths<avx2 = "8">;
  let min = 1;
  let max = MaxBlock;
  let powerOfTwo = 1;
}

def CpuAmxFp16 : CpuKnob<"amxFp16", "amx-fp16", "bool", "false",
    "With amx: f16 scores and P.V on AMX-FP16 tiles (tdpfp16ps) as they "
    "are, the query packed and P rounded to f16 (a CPU with amx_fp16); "
    "without it f16 goes through split-f16's bf16 parts or the widening "
    "kernels"> {
  let defaultNote = "on the amx kernels, whether the target CPU has "
                    "AMX-FP16 (attn-run: this machine; attn-compile: --cpu)";
}

def CpuEmulateAmx : CpuKnob<"emulateAmx", "emulate-amx", "bool", "false",
    "On the amx kernels: their tile ops as vector code (attn-emulate-amx), "
    "so that they run and are checked on a CPU without AMX (AVX-512 with "
    "AVX512-BF16 is enough); slow, for tests">;

def CpuBlendStores : CpuKnob<"blendStores", "blend-stores", "bool", "false",
    "Store the tiles that a mask or a max selects lanes of (user_mask, "
    "element_mask and the elementwise tile ops, max_update, the scores "
    "kernel's row max) through an empty inline asm, so that LLVM keeps a "
    "blend and a plain store instead of forming a masked store (AVX2's "
    "vmaskmovps, microcoded and many times slower on AMD Zen cores); x86 "
    "only, and the target needs vector registers of vector-width f32 (AVX "
    "at 8, AVX-512 at 16), else LLVM fails to compile the asm"> {
  // AVX2's masked stores are microcoded on AMD Zen cores (journal/round-09.md);
  // AVX-512's k-masked stores are left to LLVM.
  let onCpuPath = OnCpuPaths<avx2 = "true">;
  let onCpuPathAtItsWidth = 1;
  let defaultNote = "the avx2 path's only on an x86 target with AVX";
}

def GradBlockQ : CpuKnob<"blockQ", "block-q", "int64_t", "64",
    "Query rows per tile of the fused backward, attn.sdpa_grad (a multiple "
    "of vector-width)"> {
  let pipelineArgument = "grad-block-q";
  let pipelineCppName = "gradBlockQ";
  let min = 1;
  let max = MaxBlock;
}

def GradBlockKV : CpuKnob<"blockKV", "block-kv", "int64_t", "128",
    "Keys per key block of the fused backward, attn.sdpa_grad (128: the "
    "dK/dV tiles of a block amortize more query tiles than with 64; "
    "measured faster at d=64 and 128)"> {
  let pipelineArgument = "grad-block-kv";
  let pipelineCppName = "gradBlockKV";
  let min = 1;
  let max = MaxBlock;
}

def CpuOpenmp : CpuKnob<"openmp", "openmp", "bool", "true",
    "Run the query blocks on OpenMP threads"> {
  let libraryDefault = "false";
  let libraryDefaultWhy = "a library with it needs libomp.so";
  let libraryTuning = 0;
}

def CpuOmpSchedule : CpuKnob<"kind", "kind", "std::string", "\"guided\"",
    "The OpenMP schedule of the query-block loops: static, dynamic or "
    "guided"> {
  let pipelineArgument = "omp-schedule";
  let pipelineCppName = "ompSchedule";
  let choices = ["static", "dynamic", "guided"];
  let libraryTuning = 0;
}

//===----------------------------------------------------------------------===//
// Set by attn-lower-cpu from the kernel path: pass options with defaults per
// path, not options of the pipeline
//===----------------------------------------------------------------------===//

def CpuBf16Dot : Knob<"bf16Dot", "bf16-dot", "bool", "false",
    "bf16 scores and P.V on AVX512-BF16 dot products (x86vector.avx512.dot, "
    "vdpbf16ps; P rounded to bf16; V packed into key pairs per key block, or "
    "read from pair-values' copy, whose `pair_values` tile ops this pass "
    "vectorizes); needs vector-width=16 and a CPU with avx512_bf16"> {
  let onCpuPath = OnCpuPaths<amx = "true", avx512_bf16 = "true">;
  let onCpuPathAtItsWidth = 1;
}

def CpuAmx : Knob<"amx", "amx", "bool", "false",
    "bf16 scores and P.V on AMX tiles (amx.tile_mulf, tdpbf16ps) where the "
    "tiles are multiples of 16 (D, Dv, the key and query blocks): the query "
    "tile packed into dim pairs once per query block, K read in place, V "
    "transposed and P rounded to bf16 and packed into key pairs per key "
    "block; needs a CPU with amx_tile and amx_bf16 and the OS's permission "
    "for the AMX state (attn's runtimes ask for it); ops it does not take "
    "keep bf16-dot's kernels or the widening ones"> {
  let onCpuPath = OnCpuPaths<amx = "true">;
  let onCpuPathAtItsWidth = 1;
}

def CpuAvx512Exp : Knob<"avx512Exp", "avx512-exp", "bool", "false",
    "exp2 as x - floor(x) by vreduceps, a polynomial and 2^floor(x) by "
    "vscalefps (x86vector.avx512.mask.scalef) instead of a clamp, a rounding "
    "and exponent bits built in the integer unit; needs vector-width=16 and a "
    "CPU with avx512f and avx512dq"> {
  let onCpuPath = OnCpuPaths<"true", "true", "true">;
  let onCpuPathAtItsWidth = 1;
}

def CpuBf16RoundInIntegers : Knob<"bf16RoundInIntegers",
    "bf16-round-in-integers", "bool", "true",
    "bf16 is rounded in integer code later (attn-expand-bf16-truncf, "
    "arith-expand): the output kernel transposes f32 and applies its body "
    "(the truncf) after; false: the body first, the truncf for the target to "
    "lower (AVX512-BF16's vcvtneps2bf16; attn-lower-cpu sets false exactly "
    "where it skips the integer rounding)"> {
  // Without AVX512-BF16, LLVM rounds by a call to __truncsfbf2, which older
  // libgcc lacks.
  let onCpuPath = OnCpuPaths<amx = "false", avx512_bf16 = "false">;
}

def CpuTargetFeatures : Knob<"targetFeatures", "target-features",
    "std::string", "\"\"",
    "LLVM target features to compile the function with, set as its "
    "`target_features` (comma-separated, e.g. -avx512f for the AVX2 "
    "kernels); empty: the target machine's"> {
  // LLVM then drops every AVX-512 extension (x86 only: the 8-lane kernels
  // also serve other hosts).
  let onCpuPath = OnCpuPaths<avx2 = "\"-avx512f\"">;
  let defaultNote = "the avx2 path's only on x86";
}

def CpuDecodePhased : Knob<"decodePhased", "decode-phased", "bool", "false",
    "Decode kernel with f32 K and V, at least 4 query rows, rows times D at "
    "least 512 and, above 8 rows, D at least 128: each block of keys in two "
    "phases, its scores first (a loop over its keys that also prefetches the "
    "K rows two blocks ahead), then its softmax and P.V loops (which "
    "prefetch only V), instead of P.V loops that also take the next block's "
    "dot products"> {
  // The avx2 kernels at their 8 lanes: on a Zen 3, one thread, paired CPU time
  // against the overlapped blocks, Lk=32k d=128: hq=32 hkv=8 0.85x, two threads
  // 0.86x (wall), hq=32 hkv=4 0.90x; bf16 1.12x, so 16-bit K and V keep the
  // overlap (CpuDecodeBuilder.h; journal/round-16.md). Not on the 16-lane
  // paths: on a Zen 4 (avx512-bf16 kernels, L2 prefetches) f32 hq=32 hkv=8 took
  // 1.084x the time (journal/round-22.md).
  let onCpuPath = OnCpuPaths<avx2 = "true">;
  let onCpuPathAtItsWidth = 1;
}

def CpuNarrowLowpMaxD : Knob<"narrowLowpMaxD", "narrow-lowp-max-d", "int64_t",
    "64",
    "The largest D and Dv of an op with bf16 or f16 values that "
    "narrow-block-q applies to (64 for f32): on the AMX kernels the larger "
    "blocks pay at D = 128 and 256 too"> {
  // The amx kernels' bf16 and f16 ops take 128-row blocks up to D = 256:
  // hq=8 L=4096, one thread, paired CPU time against 64 rows
  // (bench/ab.py, --block-q=128): bf16 d=128 0.913x, d=256 (hq=4
  // L=2048) 0.973x, f16 d=128 0.920x; f32 at d=128 1.016x, so it keeps 64
  // (journal/round-12.md). With microkernels only.
  let onCpuPath = OnCpuPaths<amx = "256">;
  let onCpuPathAtItsWidth = 1;
  let min = 0;
  let max = MaxBlock;
}

def CpuWideBlockKV : Knob<"wideBlockKV", "wide-block-kv", "int64_t", "0",
    "Keys per block, in place of block-kv, for an op with bf16 values and D "
    "or Dv above 64 that takes narrow-block-q: on the AMX kernels a P.V tile "
    "product then runs twice the keys between loading and storing its "
    "accumulator tiles; 0: block-kv everywhere"> {
  // Each P.V accumulator tile is loaded and stored once per 128 keys rather
  // than 64. One thread, paired CPU time against block-kv's 64 on an
  // Emerald Rapids Xeon (bench/ab.py): d=128 L=4096 0.877x, L=2048
  // 0.954x, d=256 0.904x; d=64 lost (1.070x) and f16 (split into bf16
  // parts) gained nothing (0.987x) (journal/round-13.md).
  // With microkernels, where block-kv is not given and narrow blocks are
  // on.
  let onCpuPath = OnCpuPaths<amx = "128">;
  let onCpuPathAtItsWidth = 1;
  let min = 0;
  let max = MaxBlock;
}

//===----------------------------------------------------------------------===//
// Set by attn-lower-cpu from the other knobs: pass options, not options of
// the pipeline
//===----------------------------------------------------------------------===//

// attn-tile-online-softmax. The microkernels' vector-width.
def CpuRowMultiple : Knob<"rowMultiple", "row-multiple", "int64_t", "1",
    "Round a short static query block up to a multiple of this (padding rows "
    "are computed and dropped)"> {
  let min = 1;
  let max = 64;
}

// attn-tile-online-softmax. The decode kernel's decode-width.
def CpuDecodeDimMultiple : Knob<"decodeDimMultiple", "decode-dim-multiple",
    "int64_t", "1",
    "Decode groups only for ops whose D and Dv are multiples of this (the "
    "target's decode kernel runs whole vectors along them)"> {
  let min = 1;
  let max = 64;
}

// attn-cpu-plan-tiling. The amx kernels, with microkernels.
def CpuTransposeValues : Knob<"transposeValues", "transpose-values", "bool",
    "false",
    "For bf16 values with Dv and the key blocks multiples of 16 (not a "
    "decode group): V is transposed once per call, before the query blocks, "
    "into a [B, Hkv, Dv, Lk rounded up to block-kv] copy (zero past Lk; one "
    "`transpose_values` tile op per key block, in an scf.forall of its own), "
    "and `pv` reads its [Dv, block-kv] tiles from there: what the AMX "
    "kernels' P.V needs as its A operand, made once rather than in every "
    "query block">;

// attn-cpu-plan-tiling. bf16-dot, with microkernels.
def CpuPairValues : Knob<"pairValues", "pair-values", "bool", "false",
    "For bf16 values with Dv a multiple of 16 and even key blocks (not a "
    "decode group, nor where V is transposed): V is packed once per call, "
    "before the query blocks, into key pairs, a [B, Hkv, Lk rounded up to "
    "block-kv / 2, 2 Dv] copy with Vp[t, 2e + p] = V[2t + p, e] (zero past "
    "Lk; one `pair_values` tile op per key block, in an scf.forall of its "
    "own), and `pv` reads its [block-kv / 2, 2 Dv] tiles from there: what "
    "bf16 dot products (vdpbf16ps) take as the broadcast operand of P.V, "
    "made once rather than in every query block; only where that pays: "
    "static shapes, no grouped rows, at least 4 query blocks reading each V "
    "tile, a copy of at most 2 MiB per such block and 32 MiB in all">;

// attn-cpu-plan-tiling. amx-fp16, with microkernels.
def CpuF16Tiles : Knob<"f16Tiles", "f16-tiles", "bool", "false",
    "The target's tile products take f16 as it is (AMX-FP16): "
    "transpose-values transposes f16 values too (not split)">;

// attn-cpu-plan-tiling. The amx kernels without amx-fp16, with
// microkernels.
def CpuSplitF16 : Knob<"splitF16", "split-f16", "bool", "false",
    "For f16 K and V with D, Dv and the key blocks multiples of 16 (not a "
    "decode group): each made once per call, before the query blocks, into "
    "two bf16 parts, hi = bf16(x) and lo = bf16(x - hi), whose sum is x "
    "exactly (`bf16_keys` tile ops for K into [B, Hkv, Lk rounded up, 2 D]; "
    "V with transpose-values into [B, Hkv, Dv, 2 Lk rounded up], its "
    "`transpose_values` ops giving both parts); `scores` and `pv` read both "
    "parts (three inputs, K or V = hi + lo): for bf16 tile products (the AMX "
    "kernels) that give f16 inputs f32-accurate products">;

// attn-cpu-decode. The microkernels' vector-width.
def CpuDecodeWidth : Knob<"decodeWidth", "decode-width", "int64_t", "16",
    "f32 lanes per vector of the decode kernel (a power of 2)"> {
  let min = 2;
  let max = 64;
  let powerOfTwo = 1;
}

// attn-cpu-decode. bf16-dot.
def CpuDecodeBf16Dot : Knob<"decodeBf16Dot", "decode-bf16-dot", "bool",
    "false",
    "Decode kernel with bf16 Q and K (D a multiple of 2 x decode-width, "
    "decode-width 16): the dot products Q.K on AVX512-BF16's vdpbf16ps "
    "(x86vector.avx512.dot) on the bf16 values as given, the score scale "
    "applied to the sums; needs a CPU with avx512_bf16">;

// attn-cpu-decode. bf16-dot.
def CpuDecodeBf16ValueDot : Knob<"decodeBf16ValueDot",
    "decode-bf16-value-dot", "bool", "false",
    "Decode kernel with bf16 V (Dv a multiple of 2 x decode-width, "
    "decode-width 16): P.V on vdpbf16ps, the V rows of two keys interleaved "
    "in registers and each row's two probabilities rounded to bf16 (as the "
    "prefill's bf16 dot products and FlashAttention round P; the sums of P "
    "stay f32); needs a CPU with avx512_bf16">;

// attn-omp-schedule. The runtime's default.
def CpuOmpChunk : Knob<"chunk", "chunk", "int64_t", "0",
    "Iterations per chunk (the minimum for guided); 0: the runtime's "
    "default"> {
  // omp.wsloop's chunk is an i32.
  let min = 0;
  let max = 2147483647;
}

//===----------------------------------------------------------------------===//
// The GPU pipelines
//===----------------------------------------------------------------------===//

def GpuTargetChip : Knob<"chip", "chip", "std::string", "\"sm_80\"",
    "The GPU to compile for: "
    # !interleave(!foreach(chip, GpuChips, chip.spelling), ", ")
    # " (the kernels' mma.sync, ldmatrix and cp.async need sm_80 or later)"> {
  // The tools' --chip is their own (attn-run: device 0's by default).
  let pipeline = "gpu";
  let choices = !foreach(chip, GpuChips, chip.spelling);
}

def GpuPtxFeatures : Knob<"features", "features", "std::string", "\"\"",
    "PTX features; empty: the chip's ("
    # !interleave(!foreach(chip, GpuChips,
                           chip.ptxFeatures # " for " # chip.spelling), ", ")
    # ")"> {
  let pipeline = "gpu";
}

def GpuBlockQ : GpuKnob<"blockQ", "block-q", "int64_t", "64",
    "Query rows per CTA: a multiple of 16 in [16, 128] (16 per warp)"> {
  let min = 16;
  let max = 128;
  let multipleOf = 16;
}

def GpuBlockKV : GpuKnob<"blockKV", "block-kv", "int64_t", "64",
    "Keys per shared-memory tile, at most (shrunk by 16 until the tiles "
    "fit): a multiple of 16 in [16, 128]"> {
  let min = 16;
  let max = 128;
  let multipleOf = 16;
}

def GpuDecodeRows : GpuKnob<"decodeRows", "decode-rows", "int64_t", "32",
    "The split-K decode kernels for a static Lq with Lq * (Hq / Hkv) <= "
    "decode-rows (at most 4 rows per CTA); 0: never"> {
  let min = 0;
  let max = MaxBlock;
}

def GpuKvSplits : GpuKnob<"kvSplits", "kv-splits", "int64_t", "0",
    "Key splits of the decode kernels: 0 chooses at run time from B * Hkv "
    "and sm-count (32 CTAs per SM, at least 512 keys per split); N > 0 cuts "
    "the keys into N"> {
  let min = 0;
  let max = MaxBlock;
}

def GpuSmCount : Knob<"smCount", "sm-count", "int64_t", "0",
    "SMs the automatic kv-splits aims to fill; 0: the chip's ("
    # !interleave(!foreach(chip, GpuChips,
                           chip.smCount # " for " # chip.spelling), ", ")
    # "); with kernels=wgmma, the device's own, read at launch"> {
  let min = 0;
  let max = MaxBlock;
}

def GpuDecodeStages : GpuKnob<"decodeStages", "decode-stages", "int64_t",
    "1",
    "The split kernel's shared-memory stages: 1 stages a K chunk and reads V "
    "from global memory; 2 double-buffers K and V chunks (cp.async of the "
    "next chunk while one is computed), several threads per key (passed the "
    "device check on an H200, but no faster than 1 there)"> {
  let min = 1;
  let max = 2;
}

def GpuDecodeUnroll : GpuKnob<"decodeUnroll", "decode-unroll", "int64_t", "2",
    "Keys per iteration of the one-stage split kernel's P.V loop: 1, 2, 4 or "
    "8 (each thread issues that many V loads from global memory before "
    "their FMAs; the chunk's last keys go one by one; on an H200 2 ran "
    "1.17-1.34x faster than 1, 4 and 8 no faster)"> {
  let min = 1;
  let max = 8;
  let powerOfTwo = 1;
}

def GpuSharedMemory : GpuKnob<"sharedMemory", "shared-memory", "int64_t", "0",
    "Dynamic shared memory per CTA the kernels may use, in bytes: 0 keeps to "
    "the 48 KiB a launch gets without opt-in; more (up to the chip's limit: "
    "163 KiB on sm_80, 227 KiB on sm_90) lets the tiles grow, and attn's "
    "CUDA runtime raises the kernel's limit (cuFuncSetAttribute) at "
    "launch"> {
  let min = 0;
  // The largest chip's limit (sm_90: 227 KiB); convert-attn-to-gpu checks
  // the chip's own.
  let max = 232448;
}

def GpuFoldScale : GpuKnob<"foldScale", "fold-scale", "bool", "true",
    "Tensor-core kernel: the score scale folded into exp2's argument (P = "
    "exp2(fma(s, c, -m c)), the row max unscaled): one FMA per score instead "
    "of a multiply, a subtraction and a -inf test; where no softcap, ALiBi "
    "or float mask needs the scaled score and the scale is positive "
    "(1.02-1.07x on an H200)">;

def GpuLazyRescale : GpuKnob<"lazyRescale", "lazy-rescale", "bool", "false",
    "Tensor-core kernel: the accumulators are rescaled only in the tiles "
    "where one of a thread's two row maxima grew (a branch; exact, as the "
    "factor is 1 otherwise; no faster on an H200)">;

def GpuKernels : GpuKnob<"kernels", "kernels", "std::string", "\"auto\"",
    "The f16/bf16 prefill kernel: mma-sync (FlashAttention-2 on mma.sync, "
    "any chip), wgmma (the warp-specialized sm_90a kernel: TMA, wgmma, "
    "setmaxnreg; needs chip sm_90a; ops it does not take fall back to "
    "mma-sync) or auto (mma-sync: it stays so until a device run shows the "
    "wgmma kernel correct on every check case and faster on every speed "
    "row; none has run it yet)"> {
  let choices = ["auto", "mma-sync", "wgmma"];
  // attn-run's and attn-compile's --kernels is also attn-lower-cpu's
  // (CpuKernels): --target picks the knob, and so the values it takes.
}

def GpuDeterministic : GpuKnob<"deterministic", "deterministic", "bool",
    "false",
    "Backward (attn.sdpa_grad): each key block writes its partial dQ to a "
    "device buffer of its own (ceil(Lk / 64) x the f32 dQ) and a second "
    "kernel sums them in key-block order, so that dQ is the same bit for bit "
    "on every run; off: f32 atomic adds into one buffer (FlashAttention's "
    "deterministic flag)">;

def GpuPersistent : GpuKnob<"persistent", "persistent", "bool", "false",
    "kernels=wgmma: persistent CTAs: a grid of one CTA per SM (the SM count "
    "read from the device at launch), each looping over (query block, head, "
    "batch) tiles in a static round-robin order, causal ones longest first; "
    "false launches one CTA per tile. Off by default: no device run has "
    "timed or checked either schedule yet (docs/gpu.md)">;

def GpuSoftmaxOverlap : GpuKnob<"softmaxOverlap", "softmax-overlap", "bool",
    "false",
    "kernels=wgmma: each consumer warpgroup issues Q.K^T of key tile j and "
    "P.V of tile j - 1 together and computes the softmax of tile j while "
    "P.V runs (FlashAttention-3's intra-warpgroup overlap: two wgmma groups "
    "in flight, wait_group 1); false waits for each GEMM before the softmax "
    "that follows it. Off by default: not yet run on a device "
    "(docs/gpu.md)">;

#endif // ATTN_TUNING_TUNING_TD
