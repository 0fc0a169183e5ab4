// Hooks for tests of the translator's internals (not part of the public API).
#pragma once

#include <cstddef>
#include <cstdint>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace detail {

struct TestingAccess {
  static TranslatorImpl* Impl(Translator& t) { return t.impl_.get(); }
  static const TranslatorImpl* Impl(const Translator& t) { return t.impl_.get(); }
};

// Fills every per-call buffer of the arena (not the persistent ones: layers, position tables,
// results) with `byte`, as stale or uninitialised memory would look.
void FillArenaForTesting(Translator& t, uint8_t byte);
// The countdown-th linear layer run from now fails with kInternal (< 0: off).
void InjectLinearFaultForTesting(Translator& t, long countdown);
// Row-parallel decoder steps (>= 8 rows per thread) split their larger int8 layers by output
// columns: 0 when the kernel table asks for it (the default), 1 always, -1 never.
void SetDecoderColumnSplitForTesting(Translator& t, int mode);
// The arena buffer named `name` (arena_plan.cc), or null.
const void* ArenaBufferForTesting(const Translator& t, const char* name, size_t* bytes);

}  // namespace detail
}  // namespace mtlite
