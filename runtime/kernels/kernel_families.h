// Kernel tables by family. Each ISA implements the table entries in one file per family,
// runtime/kernels/<isa>/<family>_<isa>.cc (families: quantize, gemm, norm, attention, activation,
// search), and each such file defines the function that puts its entries into a table:
//   template <> void AddGemmKernels<IsaAvx2>(KernelTable& t) { t.gemm_s8_blocked = ...; }
// dispatch.cc builds the tables from them; a table may take some families from another ISA
// (e.g. "neon-dotprod" is "neon" with the dotprod GEMM, "avx-vnni" is "avx2" with its GEMM,
// "avx512-amx" is "avx512-vnni" with its GEMM;
// armv7's "neon" float families are the reference's, and so are "mve"'s norm, attention and
// search).
#pragma once

#include "kernels.h"

namespace mtlite {
namespace kernels {

// ISA tags (runtime/kernels/<dir>/): reference/, avx2/, avxvnni/, avx512/, amx/, neon/, neon_dotprod/, wasm/, mve/.
struct IsaReference;
struct IsaAvx2;
struct IsaAvxVnni;
struct IsaAvx512;
struct IsaAmx;
struct IsaNeon;
struct IsaNeonDotProd;
struct IsaWasm;
struct IsaMve;

template <class Isa> void AddQuantizeKernels(KernelTable& t);    // quantize_rows_s8
template <class Isa> void AddGemmKernels(KernelTable& t);        // gemm_s8_blocked{,_acc,_gather}
template <class Isa> void AddNormKernels(KernelTable& t);        // layer_norm
template <class Isa> void AddAttentionKernels(KernelTable& t);   // softmax_masked, dot_f32, attn_*
template <class Isa> void AddActivationKernels(KernelTable& t);  // activation
template <class Isa> void AddSearchKernels(KernelTable& t);      // max_sum_exp, scan_gt, argmax

// Every family of one ISA (each ISA directory implements all of them, or takes some from
// another ISA inside its own family file).
template <class Isa>
KernelTable AllFamilies(const char* name) {
  KernelTable t{};
  t.name = name;
  AddQuantizeKernels<Isa>(t);
  AddGemmKernels<Isa>(t);
  AddNormKernels<Isa>(t);
  AddAttentionKernels<Isa>(t);
  AddActivationKernels<Isa>(t);
  AddSearchKernels<Isa>(t);
  return t;
}

// The specialisations the ISA directories define (declared here so that every use sees them).
#define MTLITE_KERNEL_FAMILIES(ISA)                          \
  template <> void AddQuantizeKernels<ISA>(KernelTable& t);  \
  template <> void AddGemmKernels<ISA>(KernelTable& t);      \
  template <> void AddNormKernels<ISA>(KernelTable& t);      \
  template <> void AddAttentionKernels<ISA>(KernelTable& t); \
  template <> void AddActivationKernels<ISA>(KernelTable& t); \
  template <> void AddSearchKernels<ISA>(KernelTable& t);
MTLITE_KERNEL_FAMILIES(IsaReference)
MTLITE_KERNEL_FAMILIES(IsaAvx2)
MTLITE_KERNEL_FAMILIES(IsaNeon)
MTLITE_KERNEL_FAMILIES(IsaAvx512)
MTLITE_KERNEL_FAMILIES(IsaWasm)
MTLITE_KERNEL_FAMILIES(IsaMve)
#undef MTLITE_KERNEL_FAMILIES
template <> void AddGemmKernels<IsaAvxVnni>(KernelTable& t);
template <> void AddGemmKernels<IsaAmx>(KernelTable& t);
template <> void AddGemmKernels<IsaNeonDotProd>(KernelTable& t);

}  // namespace kernels
}  // namespace mtlite
