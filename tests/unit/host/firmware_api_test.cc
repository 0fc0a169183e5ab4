// Caller-owned memory (firmware): Model::FromBuffer into caller storage, Translator::Create in a
// caller arena, their C equivalents, and `mtlite embed`. Loading, creating, translating and
// destroying in caller memory make zero heap allocations (counted by interposing glibc's
// malloc, as zero_alloc_test.cc does); too small or misaligned buffers are clear errors naming
// the bytes needed; results equal the heap-allocated API's.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "hf_convert.h"
#include "model_data.h"
#include "mtlite/mtlite.h"
#include "mtlite/mtlite.hpp"
#include "unit/host/model_test_helpers.h"
#include "unit/alloc_counter.h"
#include "unit/translator_test_util.h"

using mtlite::testing_util::g_allocs;
using mtlite::testing_util::g_counting;

namespace mtlite {
namespace {

using testing_util::DevLines;
using testing_util::ModelPath;

#define SKIP_WITHOUT_COUNTING()                                                                   \
  do {                                                                                            \
    if (!kCounts) GTEST_SKIP() << "AddressSanitizer owns malloc: allocations cannot be counted"; \
  } while (0)
#ifdef MTLITE_COUNTS_ALLOCATIONS
constexpr bool kCounts = true;
#else
constexpr bool kCounts = false;
#endif

// Counts the allocations of the calls between construction and count().
class AllocCounter {
 public:
  AllocCounter() {
    g_allocs = 0;
    g_counting = true;
  }
  ~AllocCounter() { g_counting = false; }
  long count() {
    g_counting = false;
    return g_allocs.load();
  }
};

// 64-byte aligned heap memory for the tests (allocated before counting starts).
struct Buffer {
  explicit Buffer(size_t n, size_t offset = 0) : bytes(n) {
    base.reset(static_cast<uint8_t*>(std::aligned_alloc(64, (n + offset + 63) / 64 * 64 + 64)));
    data = base.get() + offset;
  }
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> base;
  uint8_t* data;
  size_t bytes;
};

// The demo model's file in 64-byte aligned memory.
const Buffer& DemoFile() {
  static const Buffer* file = [] {
    const converter::AlignedBytes b = testing::ReadAligned(ModelPath("int8"));
    auto* f = new Buffer(b.size());
    std::memcpy(f->data, b.data(), b.size());
    return f;
  }();
  return *file;
}

std::vector<std::string_view> Views(const std::vector<std::string>& lines) { return {lines.begin(), lines.end()}; }

TEST(CallerStorage, ModelLoadsWithoutAHeapAllocationAndEqualsTheHeapModel) {
  SKIP_WITHOUT_COUNTING();
  const Buffer& file = DemoFile();
  auto need = Model::StorageBytes(file.data, file.bytes);
  ASSERT_TRUE(need.ok()) << need.status().ToString();
  Buffer storage(need.value());
  std::shared_ptr<const Model> model;
  long allocs = 0;
  {
    AllocCounter counter;
    auto m = Model::FromBuffer(file.data, file.bytes, storage.data, storage.bytes, LoadOptions{true});
    allocs = counter.count();
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    model = m.value();
  }
  EXPECT_EQ(allocs, 0) << "heap allocations while loading into caller storage (checksums verified)";

  auto heap = Model::FromBuffer(file.data, file.bytes);
  ASSERT_TRUE(heap.ok());
  const detail::ModelData &a = model->data(), &b = (*heap)->data();
  EXPECT_EQ(a.config.d_model, b.config.d_model);
  EXPECT_EQ(a.config.source_lang, b.config.source_lang);
  EXPECT_EQ(a.encoder.size(), b.encoder.size());
  EXPECT_EQ(a.checks.size(), b.checks.size());
  EXPECT_TRUE(a.source_spm.pieces == b.source_spm.pieces);
  EXPECT_TRUE(a.target_vocab.id_to_piece == b.target_vocab.id_to_piece);
  EXPECT_EQ(a.encoder[5].ffn.fc2.data, b.encoder[5].ffn.fc2.data);  // the same bytes, read in place
  // <pad> (8000) is banned in the file; every search masks it anyway, so caller storage leaves
  // it out of the (allocating) std::vector.
  EXPECT_EQ(b.config.bad_word_ids, std::vector<int>{8000});
  EXPECT_TRUE(a.config.bad_word_ids.empty());
  // Everything the loader built lies in the caller's storage.
  for (const void* p : {static_cast<const void*>(model.get()), static_cast<const void*>(&a),
                        static_cast<const void*>(a.checks.data()), static_cast<const void*>(a.source_spm.pieces.data())}) {
    EXPECT_GE(static_cast<const uint8_t*>(p), storage.data);
    EXPECT_LT(static_cast<const uint8_t*>(p), storage.data + storage.bytes);
  }
  EXPECT_TRUE(model->VerifyChecksums().ok());
  AllocCounter counter;
  model.reset();  // destroyed in place: frees nothing
  EXPECT_EQ(counter.count(), 0);
}

TEST(CallerStorage, TooSmallMisalignedOrNullStorageAreClearErrors) {
  const Buffer& file = DemoFile();
  const size_t need = Model::StorageBytes(file.data, file.bytes).value();
  Buffer storage(need, 16);  // data is 16 bytes past a 64-byte boundary
  auto small = Model::FromBuffer(file.data, file.bytes, storage.base.get(), need - 1);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(small.status().message().find(std::to_string(need)), std::string::npos) << small.status().message();
  auto misaligned = Model::FromBuffer(file.data, file.bytes, storage.data, need);
  EXPECT_EQ(misaligned.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(misaligned.status().message().find("64-byte aligned"), std::string::npos);
  EXPECT_EQ(Model::FromBuffer(file.data, file.bytes, nullptr, need).status().code(), StatusCode::kInvalidArgument);
  // Not a model: StorageBytes and the load say so instead of sizing anything.
  Buffer junk(4096);
  std::memset(junk.data, 0x5a, junk.bytes);
  EXPECT_EQ(Model::StorageBytes(junk.data, junk.bytes).status().code(), StatusCode::kInvalidModel);
  EXPECT_EQ(Model::FromBuffer(junk.data, junk.bytes, storage.base.get(), need).status().code(), StatusCode::kInvalidModel);
  EXPECT_EQ(Model::StorageBytes(file.data, 10).status().code(), StatusCode::kInvalidModel);
}

TEST(CallerArena, CreateTranslateDestroyAllocateNothingAndMatchTheHeapTranslator) {
  SKIP_WITHOUT_COUNTING();
  const Buffer& file = DemoFile();
  Buffer storage(Model::StorageBytes(file.data, file.bytes).value());
  auto model = Model::FromBuffer(file.data, file.bytes, storage.data, storage.bytes);
  ASSERT_TRUE(model.ok());
  TranslatorLimits lim;
  lim.max_batch = 2;
  lim.max_source_tokens = 64;
  lim.max_target_tokens = 48;
  lim.max_beam = 4;
  lim.max_n_best = 2;
  lim.alignments = true;
  auto need = Translator::ArenaBytes(**model, lim);
  ASSERT_TRUE(need.ok());
  Buffer arena(need.value());
  const std::vector<std::string> lines = DevLines(2);
  const std::vector<std::string_view> in = Views(lines);
  TranslateOptions opt;
  opt.beam_size = 4;
  opt.n_best = 2;
  opt.return_alignments = true;

  auto heap_tr = Translator::Create(model.value(), lim);
  ASSERT_TRUE(heap_tr.ok());
  const SentenceResultView* want = nullptr;
  ASSERT_TRUE(heap_tr.value()->TranslateViews(in.data(), in.size(), opt, &want).ok());

  long allocs = 0;
  {
    AllocCounter counter;
    auto tr = Translator::Create(model.value(), lim, arena.data, arena.bytes);
    ASSERT_TRUE(tr.ok()) << tr.status().ToString();
    EXPECT_EQ(tr.value()->arena_bytes(), need.value());
    EXPECT_GE(reinterpret_cast<uint8_t*>(tr.value().get()), arena.data);
    EXPECT_LT(reinterpret_cast<uint8_t*>(tr.value().get()), arena.data + arena.bytes);
    const SentenceResultView* got = nullptr;
    ASSERT_TRUE(tr.value()->TranslateViews(in.data(), in.size(), opt, &got).ok());
    for (size_t b = 0; b < in.size(); ++b) {
      ASSERT_EQ(got[b].num_hypotheses, want[b].num_hypotheses);
      for (int k = 0; k < got[b].num_hypotheses; ++k) {
        EXPECT_EQ(got[b].hypotheses[k].text, want[b].hypotheses[k].text);
        EXPECT_EQ(got[b].hypotheses[k].score, want[b].hypotheses[k].score);
      }
    }
    tr.value().reset();  // runs the destructors in the arena, frees nothing
    allocs = counter.count();
  }
  EXPECT_EQ(allocs, 0) << "heap allocations: create + translate + destroy in a caller arena";
  // The arena can be used again.
  auto again = Translator::Create(model.value(), lim, arena.data, arena.bytes);
  ASSERT_TRUE(again.ok());
  const SentenceResultView* res = nullptr;
  EXPECT_TRUE(again.value()->TranslateViews(in.data(), 1, opt, &res).ok());
}

TEST(CallerArena, TooSmallMisalignedOrNullArenaAreClearErrors) {
  auto model = Model::Load(ModelPath("int8"));
  ASSERT_TRUE(model.ok());
  TranslatorLimits lim;
  const size_t need = Translator::ArenaBytes(**model, lim).value();
  Buffer arena(need, 8);
  auto small = Translator::Create(model.value(), lim, arena.base.get(), need - 64);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(small.status().message().find("need " + std::to_string(need) + " bytes"), std::string::npos)
      << small.status().message();
  EXPECT_EQ(Translator::Create(model.value(), lim, arena.data, need).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Translator::Create(model.value(), lim, nullptr, need).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Translator::Create(nullptr, lim, arena.base.get(), need).status().code(), StatusCode::kInvalidArgument);
  TranslatorLimits bad = lim;
  bad.max_batch = 0;
  EXPECT_EQ(Translator::Create(model.value(), bad, arena.base.get(), need).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(CallerArena, ArenaBytesIncludesTheTranslatorObjectsAndMatchesThePlan) {
  auto model = Model::Load(ModelPath("int8"));
  ASSERT_TRUE(model.ok());
  TranslatorLimits lim;
  lim.max_batch = 3;
  auto bytes = Translator::ArenaBytes(**model, lim);
  auto plan = Translator::PlanArena(**model, lim);
  ASSERT_TRUE(bytes.ok() && plan.ok());
  EXPECT_EQ(plan->total_bytes, bytes.value());
  ASSERT_FALSE(plan->buffers.empty());
  const ArenaBufferInfo& head = plan->buffers.front();
  EXPECT_EQ(head.name, "translator.objects");
  EXPECT_EQ(head.offset, 0u);
  EXPECT_TRUE(head.persistent);
  size_t end = 0;
  for (const ArenaBufferInfo& b : plan->buffers) {
    if (&b != &head) {
      EXPECT_GE(b.offset, head.bytes) << b.name;
    }
    EXPECT_EQ(b.offset % 64, 0u) << b.name;
    end = std::max(end, b.offset + b.bytes);
  }
  EXPECT_LE(end, bytes.value());
  auto tr = Translator::Create(model.value(), lim);
  ASSERT_TRUE(tr.ok());
  EXPECT_EQ(tr.value()->arena_bytes(), bytes.value());
}

TEST(CApiCallerMemory, LoadCreateTranslateFreeAllocateNothing) {
  SKIP_WITHOUT_COUNTING();
  const Buffer& file = DemoFile();
  size_t storage_bytes = 0;
  ASSERT_EQ(mtlite_model_storage_bytes(file.data, file.bytes, &storage_bytes), MTLITE_OK);
  EXPECT_GT(storage_bytes, Model::StorageBytes(file.data, file.bytes).value());  // + the C handle
  Buffer storage(storage_bytes);
  mtlite_limits lim;
  mtlite_limits_default(&lim);
  lim.max_batch = 2;
  lim.max_source_tokens = 64;
  lim.max_target_tokens = 32;
  const std::vector<std::string> lines = DevLines(2);
  const char* texts[2] = {lines[0].c_str(), lines[1].c_str()};
  mtlite_options opt;
  mtlite_options_default(&opt);
  opt.beam_size = 2;

  std::unique_ptr<Buffer> arena;
  long allocs = 0;
  std::string text;
  {
    mtlite_model* model = nullptr;
    mtlite_translator* tr = nullptr;
    size_t arena_bytes = 0;
    {
      AllocCounter counter;
      ASSERT_EQ(mtlite_model_from_buffer_storage(file.data, file.bytes, 1, storage.data, storage.bytes, &model),
                MTLITE_OK)
          << mtlite_last_error();
      ASSERT_EQ(mtlite_arena_bytes(model, &lim, &arena_bytes), MTLITE_OK);
      allocs += counter.count();
    }
    arena = std::make_unique<Buffer>(arena_bytes);  // (the test's own allocation, not counted)
    {
      AllocCounter counter;
      ASSERT_EQ(mtlite_translator_create_in_arena(model, &lim, arena->data, arena->bytes, &tr), MTLITE_OK)
          << mtlite_last_error();
      ASSERT_EQ(mtlite_translate(tr, texts, nullptr, 2, &opt), MTLITE_OK) << mtlite_last_error();
      mtlite_hypothesis h;
      ASSERT_EQ(mtlite_result_get(tr, 1, 0, &h), MTLITE_OK);
      allocs += counter.count();
      text.assign(h.text, h.text_len);
      AllocCounter counter2;
      mtlite_translator_free(tr);
      mtlite_model_free(model);
      allocs += counter2.count();
    }
  }
  EXPECT_EQ(allocs, 0) << "heap allocations in the C API's caller-memory path";
  // The same as the heap-allocating C API.
  mtlite_model* m = nullptr;
  mtlite_translator* t = nullptr;
  ASSERT_EQ(mtlite_model_from_buffer(file.data, file.bytes, 0, &m), MTLITE_OK);
  ASSERT_EQ(mtlite_translator_create(m, &lim, &t), MTLITE_OK);
  ASSERT_EQ(mtlite_translate(t, texts, nullptr, 2, &opt), MTLITE_OK);
  mtlite_hypothesis h;
  ASSERT_EQ(mtlite_result_get(t, 1, 0, &h), MTLITE_OK);
  EXPECT_EQ(std::string(h.text, h.text_len), text);
  EXPECT_FALSE(text.empty());
  mtlite_translator_free(t);
  mtlite_model_free(m);
}

TEST(CApiCallerMemory, TooSmallBuffersNameTheBytesNeeded) {
  const Buffer& file = DemoFile();
  size_t storage_bytes = 0;
  ASSERT_EQ(mtlite_model_storage_bytes(file.data, file.bytes, &storage_bytes), MTLITE_OK);
  Buffer storage(storage_bytes, 32);
  mtlite_model* model = nullptr;
  EXPECT_EQ(mtlite_model_from_buffer_storage(file.data, file.bytes, 0, storage.base.get(), storage_bytes - 1, &model),
            MTLITE_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(mtlite_last_error()).find(std::to_string(storage_bytes)), std::string::npos)
      << mtlite_last_error();
  EXPECT_EQ(model, nullptr);
  EXPECT_EQ(mtlite_model_from_buffer_storage(file.data, file.bytes, 0, storage.data, storage_bytes, &model),
            MTLITE_INVALID_ARGUMENT);  // misaligned
  EXPECT_EQ(mtlite_model_from_buffer_storage(file.data, file.bytes, 0, nullptr, storage_bytes, &model),
            MTLITE_INVALID_ARGUMENT);
  EXPECT_EQ(mtlite_model_storage_bytes(file.data, 100, &storage_bytes), MTLITE_INVALID_MODEL);

  ASSERT_EQ(mtlite_model_from_buffer(file.data, file.bytes, 0, &model), MTLITE_OK);
  size_t arena_bytes = 0;
  ASSERT_EQ(mtlite_arena_bytes(model, nullptr, &arena_bytes), MTLITE_OK);
  Buffer arena(arena_bytes);
  mtlite_translator* tr = nullptr;
  EXPECT_EQ(mtlite_translator_create_in_arena(model, nullptr, arena.data, arena_bytes - 1, &tr),
            MTLITE_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(mtlite_last_error()).find("need " + std::to_string(arena_bytes) + " bytes"), std::string::npos)
      << mtlite_last_error();
  EXPECT_EQ(tr, nullptr);
  mtlite_limits bad;
  mtlite_limits_default(&bad);
  bad.max_beam = 0;
  EXPECT_EQ(mtlite_arena_bytes(model, &bad, &arena_bytes), MTLITE_INVALID_ARGUMENT);
  EXPECT_EQ(mtlite_translator_create_in_arena(model, &bad, arena.data, arena.bytes, &tr), MTLITE_INVALID_ARGUMENT);
  ASSERT_EQ(mtlite_arena_bytes(model, nullptr, &arena_bytes), MTLITE_OK);
  ASSERT_EQ(mtlite_translator_create_in_arena(model, nullptr, arena.data, arena.bytes, &tr), MTLITE_OK);
  mtlite_translator_free(tr);
  mtlite_model_free(model);
}

// ---- mtlite embed -------------------------------------------------------------------------------

int Embed(std::vector<std::string> args) {
  args.insert(args.begin(), "embed");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return cli::EmbedMain(int(argv.size()), argv.data());
}

TEST(Embed, ArgumentsAreChecked) {
  cli::EmbedArgs a;
  auto parse = [&](std::vector<const char*> v) {
    a = cli::EmbedArgs();
    v.insert(v.begin(), "embed");
    return cli::ParseEmbedArgs(int(v.size()), v.data(), &a);
  };
  ASSERT_TRUE(parse({"m.mtlite", "-o", "x.S", "--symbol", "g_model", "--section", ".flash.model"}).ok());
  EXPECT_EQ(a.symbol, "g_model");
  EXPECT_EQ(a.section, ".flash.model");
  ASSERT_TRUE(parse({"m.mtlite", "-o", "x.c"}).ok());
  EXPECT_EQ(a.symbol, "mtlite_model_data");
  EXPECT_EQ(a.section, ".rodata");
  EXPECT_FALSE(parse({"m.mtlite", "-o", "x.txt"}).ok());
  EXPECT_FALSE(parse({"m.mtlite", "-o", "x.s"}).ok());  // not preprocessed: the .S uses #if
  EXPECT_FALSE(parse({"m.mtlite"}).ok());
  EXPECT_FALSE(parse({"m.mtlite", "-o", "x.S", "--symbol", "1abc"}).ok());
  EXPECT_FALSE(parse({"m.mtlite", "-o", "x.S", "--symbol", "a-b"}).ok());
  EXPECT_FALSE(parse({"m.mtlite", "-o", "x.S", "--section", "a b"}).ok());
  EXPECT_FALSE(parse({"m.mtlite", "-o", "x.S", "--section", "x\",\"aw"}).ok());
  testing::TempDir dir;
  EXPECT_EQ(Embed({dir.path() + "/missing.mtlite", "-o", dir.path() + "/x.S"}), 1);
  testing::WriteText(dir.path() + "/junk.mtlite", std::string(1000, 'j'));
  EXPECT_EQ(Embed({dir.path() + "/junk.mtlite", "-o", dir.path() + "/x.S"}), 1);
  EXPECT_EQ(Embed({ModelPath("int8"), "-o", dir.path() + "/x.bin"}), 2);
}

// The comment that opens both outputs is whole (closed) whatever the lengths of the path and the
// symbol.
TEST(Embed, LongSymbolsKeepTheHeaderCommentWhole) {
  testing::TempDir dir;
  const std::string symbol(300, 's');
  for (const char* ext : {".S", ".c"}) {
    const std::string out = dir.path() + "/model_data" + ext;
    ASSERT_EQ(Embed({ModelPath("int8"), "-o", out, "--symbol", symbol}), 0) << ext;
    const std::string source = testing::ReadText(out);
    EXPECT_NE(source.find(" *   extern const size_t " + symbol + "_size;\n"), std::string::npos) << ext;
    EXPECT_NE(source.find("_size, ...) (C++); see docs/deploy.md. */\n"), std::string::npos) << ext;
  }
}

// .incbin cannot name a path with a line break: that is the error, reported before anything is
// written (a .c array does not name the path).
TEST(Embed, ALineBreakInTheModelPathIsNamedAsTheReason) {
  testing::TempDir dir;
  const std::string model = dir.path() + "/line\nbreak.mtlite", out = dir.path() + "/model_data.S";
  testing::WriteText(model, testing::ReadText(ModelPath("int8")));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(Embed({model, "-o", out}), 1);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("the model path has a line break, which .incbin cannot name; use -o FILE.c"), std::string::npos)
      << err;
  EXPECT_NE(access(out.c_str(), F_OK), 0) << "nothing is written";
  EXPECT_EQ(Embed({model, "-o", dir.path() + "/model_data.c"}), 0);
}

// Embeds a tiny model both ways (.S with .incbin into a named section, .c as an array) and
// builds a program from each with the system C compiler: the array holds the file's bytes,
// 64-byte aligned, in the section asked for, and NAME_size is the file's size.
TEST(Embed, AsmAndCOutputsBuildIntoAProgramHoldingTheModel) {
  if (std::system("cc --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no C compiler (cc) on PATH";
  testing::TempDir dir;
  converter::AlignedBytes bytes;
  converter::ConversionReport report;
  testing::MakeTinyHf().Write(dir.path());
  ASSERT_TRUE(converter::ConvertToBytes(dir.path(), converter::Quantization::kInt8, &bytes, &report).ok());
  const std::string model = dir.path() + "/tiny model \"quoted\".mtlite";  // a path that needs escaping
  testing::WriteText(model, std::string(bytes.begin(), bytes.end()));
  const std::string check = dir.path() + "/check.c";
  testing::WriteText(check, R"(#include <stdint.h>
#include <stdio.h>
#include <string.h>
extern const unsigned char g_model[];
extern const size_t g_model_size;
extern const unsigned char __start_mtlite_flash[], __stop_mtlite_flash[];
int main(int argc, char** argv) {
  static unsigned char file[1 << 22];
  FILE* f = fopen(argv[1], "rb");
  size_t n = fread(file, 1, sizeof file, f);
  if (n != g_model_size) return 1;
  if (memcmp(file, g_model, n)) return 2;
  if ((uintptr_t)g_model % 64) return 3;
  if (g_model < __start_mtlite_flash || g_model + n > __stop_mtlite_flash) return 4;
  if ((const unsigned char*)&g_model_size < __start_mtlite_flash ||
      (const unsigned char*)&g_model_size >= __stop_mtlite_flash) return 5;
  return 0;
}
)");
  for (const char* ext : {".S", ".c"}) {
    const std::string out = dir.path() + "/model_data" + ext, exe = dir.path() + "/check" + ext + ".exe";
    ASSERT_EQ(Embed({model, "-o", out, "--symbol", "g_model", "--section", "mtlite_flash"}), 0) << ext;
    const std::string source = testing::ReadText(out);
    EXPECT_NE(source.find("mtlite_flash"), std::string::npos);
    if (std::string(ext) == ".S") {
      EXPECT_NE(source.find(".incbin \"/"), std::string::npos) << source;
    }
    const auto built = testing::Run("cc -O1 -o '" + exe + "' '" + check + "' '" + out + "' 2>&1");
    ASSERT_EQ(built.exit_code, 0) << ext << ": " << built.output;
    const auto ran = testing::Run("'" + exe + "' '" + model + "'");
    EXPECT_EQ(ran.exit_code, 0) << ext << ": the program found the embedded model wrong (code " << ran.exit_code << ")";
  }
}

}  // namespace
}  // namespace mtlite
