// The translator's arena plan: buffers that live at the same time never overlap, buffers dead
// after the encoder share memory with the decoder's, and the plan is what Create allocates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "mtlite/mtlite.hpp"
#include "translator_bounds.h"
#include "unit/translator_test_util.h"

namespace mtlite {
namespace {

using testing_util::LoadOrDie;

void CheckPlan(const ArenaPlanInfo& plan, const std::string& what) {
  std::map<std::string, int> phase;
  for (size_t i = 0; i < plan.phases.size(); ++i) phase[plan.phases[i]] = int(i);
  ASSERT_EQ(plan.phases.size(), 5u);
  size_t end = 0, sum = 0;
  for (const ArenaBufferInfo& b : plan.buffers) {
    ASSERT_TRUE(phase.count(b.first_phase) && phase.count(b.last_phase)) << b.name;
    EXPECT_LE(phase[b.first_phase], phase[b.last_phase]) << b.name;
    EXPECT_EQ(b.offset % 64, 0u) << b.name;
    EXPECT_GT(b.bytes, 0u) << b.name;
    end = std::max(end, b.offset + b.bytes);
    sum += (b.bytes + 63) / 64 * 64;
  }
  EXPECT_LE(end, plan.total_bytes) << what;
  EXPECT_EQ(sum, plan.unshared_bytes) << what;
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    for (size_t j = i + 1; j < plan.buffers.size(); ++j) {
      const ArenaBufferInfo& a = plan.buffers[i];
      const ArenaBufferInfo& b = plan.buffers[j];
      const bool live_together = a.persistent || b.persistent ||
                                 (phase[a.first_phase] <= phase[b.last_phase] && phase[b.first_phase] <= phase[a.last_phase]);
      const bool overlap = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
      EXPECT_FALSE(live_together && overlap) << what << ": " << a.name << " and " << b.name << " overlap";
    }
}

TEST(ArenaPlan, LiveBuffersNeverOverlapAndEncoderMemoryIsReused) {
  for (const char* q : {"int8", "fp32"}) {
    auto model = LoadOrDie(q);
    ASSERT_TRUE(model);
    std::mt19937 rng(7);
    for (int i = 0; i < 40; ++i) {
      TranslatorLimits lim;
      lim.max_batch = 1 + int(rng() % 16);
      lim.max_source_tokens = 1 + int(rng() % 300);
      lim.max_target_tokens = 1 + int(rng() % 300);
      lim.max_beam = 1 + int(rng() % 6);
      lim.max_n_best = 1 + int(rng() % lim.max_beam);
      lim.alignments = rng() % 2;
      lim.profiling = rng() % 3 == 0;
      lim.num_threads = 1 + int(rng() % 3);
      auto plan = Translator::PlanArena(*model, lim);
      ASSERT_TRUE(plan.ok()) << plan.status().ToString();
      CheckPlan(plan.value(), std::string(q) + " case " + std::to_string(i));
      EXPECT_LT(plan.value().total_bytes, plan.value().unshared_bytes);
      auto bytes = Translator::ArenaBytes(*model, lim);
      ASSERT_TRUE(bytes.ok());
      EXPECT_EQ(bytes.value(), plan.value().total_bytes);
    }
  }
}

// The demo model at limits 1,256,256,4 needed 9,099,520 bytes before buffers shared memory.
TEST(ArenaPlan, DemoArenaDroppedByAQuarter) {
  auto model = LoadOrDie("int8");
  ASSERT_TRUE(model);
  TranslatorLimits lim;
  lim.max_batch = 1;
  lim.max_source_tokens = 256;
  lim.max_target_tokens = 256;
  lim.max_beam = 4;
  auto plan = Translator::PlanArena(*model, lim);
  ASSERT_TRUE(plan.ok());
  EXPECT_LE(plan.value().total_bytes, 6824640u);
  // The KV cache reuses the encoder's activations.
  std::map<std::string, ArenaBufferInfo> by_name;
  for (const auto& b : plan.value().buffers) by_name[b.name] = b;
  ASSERT_TRUE(by_name.count("decoder.k_cache") && by_name.count("encoder.q"));
  const auto& k = by_name["decoder.k_cache"];
  const auto& e = by_name["encoder.q"];
  EXPECT_TRUE(e.offset < k.offset + k.bytes && k.offset < e.offset + e.bytes);
  auto tr = Translator::Create(model, lim);
  ASSERT_TRUE(tr.ok());
  EXPECT_EQ(tr.value()->arena_bytes(), plan.value().total_bytes);
}

// One bound for the beam: the limits stop where the search and the loader stop
// (model_damage_test: a model declaring default_beam = kMaxBeam + 1 is refused).
TEST(ArenaPlan, MaxBeamStopsWhereTheSearchAndTheLoaderStop) {
  auto model = LoadOrDie("int8");
  ASSERT_TRUE(model);
  EXPECT_LE(model->config().default_beam, detail::kMaxBeam);
  TranslatorLimits lim;
  lim.max_source_tokens = lim.max_target_tokens = 16;
  lim.max_beam = detail::kMaxBeam;
  auto tr = Translator::Create(model, lim);
  ASSERT_TRUE(tr.ok()) << tr.status().ToString();
  TranslateOptions opt;
  opt.beam_size = detail::kMaxBeam;
  std::vector<std::string> in = {"A dog."};
  std::vector<TranslationResult> out;
  const Status s = tr.value()->Translate(in, opt, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  lim.max_beam = detail::kMaxBeam + 1;
  auto over = Translator::PlanArena(*model, lim);
  EXPECT_EQ(over.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(over.status().message().find("max_beam"), std::string::npos) << over.status().ToString();
}

TEST(ArenaPlan, InfoPrintsThePlanAsJson) {
  const std::string cmd = std::string(MTLITE_BINARY_DIR) + "/mtlite info " + testing_util::ModelPath("int8") +
                          " --limits 1,256,256,4 --json";
  FILE* f = popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  EXPECT_EQ(pclose(f), 0);
  EXPECT_NE(out.find("\"arena_plan\""), std::string::npos);
  EXPECT_NE(out.find("\"name\": \"decoder.k_cache\""), std::string::npos);
  EXPECT_NE(out.find("\"first_phase\": \"decode\""), std::string::npos);
}

}  // namespace
}  // namespace mtlite
