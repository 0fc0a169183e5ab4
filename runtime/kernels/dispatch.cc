// Run-time choice of the kernel table. ISA tables register here as they are added.
#include <cstdlib>
#include <cstring>

#include "kernels.h"

namespace mtlite {
namespace kernels {

int AvailableKernels(const KernelTable** out, int max) {
  int n = 0;
  if (n < max) out[n++] = &ReferenceKernels();
  return n;
}

const KernelTable& BestKernels() {
  static const KernelTable* best = [] {
    const KernelTable* tables[8];
    int n = AvailableKernels(tables, 8);
    const KernelTable* pick = tables[n - 1];
    if (const char* want = std::getenv("MTLITE_KERNELS")) {
      for (int i = 0; i < n; ++i)
        if (std::strcmp(tables[i]->name, want) == 0) pick = tables[i];
    }
    return pick;
  }();
  return *best;
}

}  // namespace kernels
}  // namespace mtlite
