// The public Translator: object placement in its arena (Create, ArenaBytes, PlanArena) and the
// calls that forward to TranslatorImpl; the testing hooks (testing_hooks.h).
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "arena_plan.h"
#include "platform.h"
#include "mtlite/mtlite.hpp"
#include "testing_hooks.h"
#include "translator_impl.h"

namespace mtlite {

using detail::ArenaPlan;

namespace {
Status Err(StatusCode c, std::string m) { return Status(c, std::move(m)); }
}  // namespace

// Object placement. One 64-byte aligned block holds a Translator completely:
//   [ArenaHead][Translator][TranslatorImpl][planned buffers (ArenaPlan)]
// Create() allocates the block (not zero-filled: every buffer is written before it is read, and
// pages the declared limits reserve but a translation never reaches stay untouched, not
// resident); the caller-arena Create() places the same layout in the caller's memory and
// allocates nothing. Deleting the Translator destroys the objects in place, then
// Translator::operator delete frees the block if the head says it came from the heap.
namespace {

struct ArenaHead {
  uint64_t magic;
  void* heap_block;  // the block to free with the Translator, or null (caller-owned arena)
};
constexpr uint64_t kArenaMagic = 0x6d746c6974656172ull;  // "mtlitear"
constexpr size_t kArenaAlign = 64;
constexpr size_t ArenaAlignUp(size_t x) { return (x + kArenaAlign - 1) & ~(kArenaAlign - 1); }
constexpr size_t kTranslatorOffset = ArenaAlignUp(sizeof(ArenaHead));
constexpr size_t kImplOffset = kTranslatorOffset + ArenaAlignUp(sizeof(Translator));
constexpr size_t kHeadBytes = kImplOffset + ArenaAlignUp(sizeof(TranslatorImpl));  // before the planned buffers

}  // namespace

// Places a Translator in block[0, bytes) (64-byte aligned, bytes >= ArenaBytes).
Result<std::unique_ptr<Translator>> Translator::Place(std::shared_ptr<const Model> model,
                                                      const TranslatorLimits& limits, uint8_t* block, size_t bytes,
                                                      bool heap_block) {
  new (block) ArenaHead{kArenaMagic, nullptr};
  auto* impl = new (block + kImplOffset) TranslatorImpl();
  if (Status s = impl->Init(std::move(model), limits, block + kHeadBytes, bytes - kHeadBytes); !s.ok()) {
    impl->~TranslatorImpl();
    return s;
  }
  reinterpret_cast<ArenaHead*>(block)->heap_block = heap_block ? block : nullptr;
  return std::unique_ptr<Translator>(new (block + kTranslatorOffset) Translator(impl));
}

namespace {

// The second translator of a pivot chain: the limits of the first, without the text layer, and
// inputs as long as the first's outputs can be.
TranslatorLimits SecondLimits(const TranslatorLimits& l) {
  TranslatorLimits s = l;
  s.max_text_bytes = 0;
  const long long text_cap = (long long)std::max(l.max_target_tokens, 1) * 64 + 16;  // ArenaPlan's text_cap
  s.max_input_bytes = int(std::min<long long>(1 << 24, std::max<long long>(l.max_input_bytes, text_cap)));
  return s;
}
// Where the second translator starts in the block: after the first's buffers.
size_t SecondOffset(size_t first_bytes) { return ArenaAlignUp(first_bytes); }
// The second part's head: its TranslatorImpl and the first's max_batch result views it reads.
size_t SecondHeadBytes(const TranslatorLimits& l) {
  return ArenaAlignUp(sizeof(TranslatorImpl)) + ArenaAlignUp(size_t(std::max(l.max_batch, 1)) * sizeof(std::string_view));
}

std::string LowerLanguage(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '_' || c == '-') break;
    o += char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  return o;
}

Status CheckChain(const Model& first, const Model& second) {
  const std::string a = LowerLanguage(first.config().target_lang), b = LowerLanguage(second.config().source_lang);
  if (!a.empty() && !b.empty() && a != b)
    return Err(StatusCode::kInvalidArgument, "pivot: the first model translates into '" + first.config().target_lang +
                                                 "' but the second translates from '" + second.config().source_lang +
                                                 "'");
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Translator>> Translator::PlacePivot(std::shared_ptr<const Model> first,
                                                           std::shared_ptr<const Model> second,
                                                           const TranslatorLimits& limits, uint8_t* block,
                                                           size_t bytes) {
  auto one = ArenaBytes(*first, limits);
  if (!one.ok()) return one.status();
  new (block) ArenaHead{kArenaMagic, nullptr};
  auto* impl = new (block + kImplOffset) TranslatorImpl();
  if (Status s = impl->Init(std::move(first), limits, block + kHeadBytes, one.value() - kHeadBytes); !s.ok()) {
    impl->~TranslatorImpl();
    return s;
  }
  const size_t off = SecondOffset(one.value());
  const TranslatorLimits l2 = SecondLimits(limits);
  auto* impl2 = new (block + off) TranslatorImpl();
  impl->next = impl2;  // destroyed with impl from here on
  impl->pivot_views = reinterpret_cast<std::string_view*>(block + off + ArenaAlignUp(sizeof(TranslatorImpl)));
  const size_t head2 = SecondHeadBytes(limits);
  if (Status s = impl2->Init(std::move(second), l2, block + off + head2, bytes - off - head2); !s.ok()) {
    impl->~TranslatorImpl();
    return s;
  }
  reinterpret_cast<ArenaHead*>(block)->heap_block = block;
  return std::unique_ptr<Translator>(new (block + kTranslatorOffset) Translator(impl));
}

Result<std::unique_ptr<Translator>> Translator::Create(std::shared_ptr<const Model> first,
                                                       std::shared_ptr<const Model> second,
                                                       const TranslatorLimits& limits) {
  if (!first || !second) return Err(StatusCode::kInvalidArgument, "null model");
  if (Status s = CheckChain(*first, *second); !s.ok()) return s;
  auto bytes = ArenaBytes(*first, *second, limits);
  if (!bytes.ok()) return bytes.status();
  auto* block = static_cast<uint8_t*>(platform::AlignedAlloc(kArenaAlign, ArenaAlignUp(bytes.value())));
  if (!block)
    return Err(StatusCode::kResourceExhausted, "cannot allocate the arena of " + std::to_string(bytes.value()) + " bytes");
  auto t = PlacePivot(std::move(first), std::move(second), limits, block, bytes.value());
  if (!t.ok()) platform::AlignedFree(block);
  return t;
}

Result<std::unique_ptr<Translator>> Translator::Create(std::shared_ptr<const Model> model,
                                                       const TranslatorLimits& limits) {
  if (!model) return Err(StatusCode::kInvalidArgument, "null model");
  auto bytes = ArenaBytes(*model, limits);
  if (!bytes.ok()) return bytes.status();
  auto* block = static_cast<uint8_t*>(platform::AlignedAlloc(kArenaAlign, ArenaAlignUp(bytes.value())));
  if (!block)
    return Err(StatusCode::kResourceExhausted, "cannot allocate the arena of " + std::to_string(bytes.value()) + " bytes");
  auto t = Place(std::move(model), limits, block, bytes.value(), true);
  if (!t.ok()) platform::AlignedFree(block);
  return t;
}

Result<std::unique_ptr<Translator>> Translator::Create(std::shared_ptr<const Model> model,
                                                       const TranslatorLimits& limits, void* arena, size_t bytes) {
  if (!model) return Err(StatusCode::kInvalidArgument, "null model");
  if (!arena) return Err(StatusCode::kInvalidArgument, "null arena");
  if (reinterpret_cast<uintptr_t>(arena) % kArenaAlign != 0)
    return Err(StatusCode::kInvalidArgument,
               "the arena must be 64-byte aligned (declare it with alignas(64) or __attribute__((aligned(64))))");
  auto need = ArenaBytes(*model, limits);
  if (!need.ok()) return need.status();
  if (bytes < need.value())
    return Err(StatusCode::kResourceExhausted,
               "arena of " + std::to_string(bytes) + " bytes is too small: these limits need " +
                   std::to_string(need.value()) + " bytes (Translator::ArenaBytes; `mtlite info --limits` prints it)");
  return Place(std::move(model), limits, static_cast<uint8_t*>(arena), bytes, false);
}

void Translator::operator delete(void* p) {
  if (!p) return;
  const auto* head = reinterpret_cast<const ArenaHead*>(static_cast<uint8_t*>(p) - kTranslatorOffset);
  if (head->magic == kArenaMagic && head->heap_block) platform::AlignedFree(head->heap_block);
}

void Translator::ImplDeleter::operator()(TranslatorImpl* impl) const { impl->~TranslatorImpl(); }

namespace {

// The plan of `limits`, checked to fit size_t with the head in front (and Create's round-up).
Result<ArenaPlan> MakePlan(const Model& model, const TranslatorLimits& limits) {
  auto plan = ArenaPlan::Make(model.data(), limits);
  if (!plan.ok()) return plan.status();
  if (!(detail::CheckedSize(kHeadBytes) + plan.value().total_bytes() + (kArenaAlign - 1)).ok())
    return detail::ArenaTooLarge("the arena");
  return plan;
}

}  // namespace

Result<size_t> Translator::ArenaBytes(const Model& model, const TranslatorLimits& limits) {
  auto plan = MakePlan(model, limits);
  if (!plan.ok()) return plan.status();
  return kHeadBytes + plan.value().total_bytes();
}

Result<ArenaPlanInfo> Translator::PlanArena(const Model& model, const TranslatorLimits& limits) {
  auto plan = MakePlan(model, limits);
  if (!plan.ok()) return plan.status();
  // The planned buffers follow the Translator's objects (the head): one more persistent buffer.
  ArenaPlanInfo info = plan.value().Describe();
  for (ArenaBufferInfo& b : info.buffers) b.offset += kHeadBytes;
  ArenaBufferInfo head;
  head.name = "translator.objects";
  head.bytes = kHeadBytes;
  head.persistent = true;
  head.first_phase = info.phases.front();
  head.last_phase = info.phases.back();
  info.buffers.insert(info.buffers.begin(), std::move(head));
  info.total_bytes += kHeadBytes;
  info.unshared_bytes += kHeadBytes;
  return info;
}

Result<size_t> Translator::ArenaBytes(const Model& first, const Model& second, const TranslatorLimits& limits) {
  auto one = ArenaBytes(first, limits);
  if (!one.ok()) return one.status();
  auto plan2 = MakePlan(second, SecondLimits(limits));
  if (!plan2.ok()) return Err(plan2.status().code(), "second model: " + plan2.status().message());
  const detail::CheckedSize total =
      detail::CheckedSize(SecondOffset(one.value())) + SecondHeadBytes(limits) + plan2.value().total_bytes();
  if (!total.ok()) return detail::ArenaTooLarge("the arena");
  return total.value();
}

Result<ArenaPlanInfo> Translator::PlanArena(const Model& first, const Model& second, const TranslatorLimits& limits) {
  auto info = PlanArena(first, limits);
  if (!info.ok()) return info.status();
  auto plan2 = MakePlan(second, SecondLimits(limits));
  if (!plan2.ok()) return Err(plan2.status().code(), "second model: " + plan2.status().message());
  ArenaPlanInfo out = std::move(info).value();
  const size_t off = SecondOffset(out.total_bytes);
  ArenaBufferInfo head;
  head.name = "second.translator.objects";
  head.offset = off;
  head.bytes = SecondHeadBytes(limits);
  head.persistent = true;
  head.first_phase = out.phases.front();
  head.last_phase = out.phases.back();
  out.buffers.push_back(head);
  ArenaPlanInfo two = plan2.value().Describe();
  for (ArenaBufferInfo& b : two.buffers) {
    b.name = "second." + b.name;
    b.offset += off + head.bytes;
    out.buffers.push_back(std::move(b));
  }
  out.total_bytes = off + head.bytes + two.total_bytes;
  out.unshared_bytes += head.bytes + two.unshared_bytes;
  return out;
}

bool Translator::is_pivot() const { return impl_->next != nullptr; }

Translator::Translator(TranslatorImpl* impl) : impl_(impl) {}
Translator::~Translator() = default;
size_t Translator::arena_bytes() const {
  const size_t one = kHeadBytes + impl_->plan.total_bytes();
  if (!impl_->next) return one;
  return SecondOffset(one) + SecondHeadBytes(impl_->lim) + impl_->next->plan.total_bytes();
}
const TranslatorLimits& Translator::limits() const { return impl_->lim; }
const ProfileView* Translator::last_profile() const { return impl_->last_profile(); }

Status Translator::TranslateViews(const std::string_view* inputs, size_t n, const TranslateOptions& options,
                                  const SentenceResultView** out) {
  if (!inputs && n > 0) return Err(StatusCode::kInvalidArgument, "null inputs for " + std::to_string(n) + " sentences");
  return impl_->RunChain(inputs, nullptr, nullptr, n, options, out);
}

Status Translator::TranslateText(std::string_view text, const TextOptions& text_options,
                                 const TranslateOptions& options, const TextResultView** out,
                                 TextSentenceCallback on_sentence, void* on_sentence_user) {
  return impl_->text.Run(impl_.get(), text, text_options, options, out, on_sentence, on_sentence_user);
}

Status Translator::TranslateIdsViews(const int32_t* const* source_ids, const int* source_lengths, size_t n,
                                     const TranslateOptions& options, const SentenceResultView** out) {
  if ((!source_ids || !source_lengths) && n > 0)
    return Err(StatusCode::kInvalidArgument, "null source ids for " + std::to_string(n) + " sentences");
  return impl_->RunChain(nullptr, source_ids, source_lengths, n, options, out);
}

Status Translator::ForcedLogits(const int32_t* source_ids, int source_len, const int32_t* target_ids, int target_len,
                                float* logits_out) {
  if (impl_->next) return Err(StatusCode::kUnsupported, "ForcedLogits: not for a pivot translator (score each model)");
  return impl_->Forced(source_ids, source_len, target_ids, target_len, logits_out);
}

namespace detail {
void FillArenaForTesting(Translator& t, uint8_t byte) {
  TranslatorImpl& impl = *TestingAccess::Impl(t);
  for (int i = 0; i < kNumBuffers; ++i) {
    const PlannedBuffer& b = impl.plan.buffer(i);
    if (b.bytes && !b.persistent) std::memset(impl.arena() + b.offset, byte, b.bytes);
  }
}
void InjectLinearFaultForTesting(Translator& t, long countdown) { TestingAccess::Impl(t)->fault.countdown = countdown; }
void SetDecoderColumnSplitForTesting(Translator& t, int mode) { TestingAccess::Impl(t)->set_column_split(mode); }
const void* ArenaBufferForTesting(const Translator& t, const char* name, size_t* bytes) {
  const TranslatorImpl& impl = *TestingAccess::Impl(t);
  for (int i = 0; i < kNumBuffers; ++i) {
    const PlannedBuffer& b = impl.plan.buffer(i);
    if (b.bytes && std::strcmp(b.name, name) == 0) {
      if (bytes) *bytes = b.bytes;
      return impl.arena() + b.offset;
    }
  }
  return nullptr;
}
}  // namespace detail

}  // namespace mtlite
