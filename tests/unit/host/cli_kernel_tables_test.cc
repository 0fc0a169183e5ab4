// Every kernel table this CPU can run translates alike, end to end: `mtlite translate` in a child
// process per table (MTLITE_KERNELS=<name>), the same output bytes as the reference table's.
// The kernel tests compare each kernel with the reference; this runs them the way a translation
// does (encoder rows, beam rows, the shortlist's gathered blocks, the thread pool's parts), so a
// table whose entries disagree with the reference in a combination the unit shapes miss shows
// up as a different translation. On a CPU with AMX this runs the avx512-amx table (m >= 5: the
// encoder, beam 4, batches).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "kernels.h"
#include "model_test_helpers.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace {

std::string Translate(const std::string& table, const std::string& model, const std::string& args,
                      const std::string& input) {
  const auto r = testing::Run("MTLITE_KERNELS=" + table + " '" + testing::CliPath() + "' translate -m '" + model +
                              "' " + args + " < '" + input + "' 2>&1");
  EXPECT_EQ(r.exit_code, 0) << table << " " << args << "\n" << r.output;
  return r.output;
}

TEST(CliKernelTables, EveryTableTranslatesLikeTheReference) {
  const kernels::KernelTable* tables[16];
  const int n = kernels::AvailableKernels(tables, 16);
  ASSERT_GE(n, 1);
  ASSERT_STREQ(tables[0]->name, "reference");
  if (n == 1) GTEST_SKIP() << "no SIMD kernel table on this CPU: only the reference runs here";

  testing::TempDir dir;
  // 6 sentences of the dev set (the reference kernels are slow under the sanitizers)
  const std::string all = testing::ReadText(std::string(MTLITE_SOURCE_DIR) + "/tests/data/dev/multi30k.val.en");
  size_t end = 0;
  for (int i = 0; i < 6 && end != std::string::npos; ++i) end = all.find('\n', end + 1);
  const std::string input = dir / "in.txt";
  testing::WriteText(input, all.substr(0, end == std::string::npos ? all.size() : end + 1));

  const std::string demo = testing::DemoModel("int8"), shortlisted = dir / "shortlist.mtlite";
  const auto sl = testing::RunCli("shortlist -m '" + demo + "' --source '" + MTLITE_SOURCE_DIR +
                                  "/tests/data/shortlist/train.en' --target '" + MTLITE_SOURCE_DIR +
                                  "/tests/data/shortlist/train.de' -o '" + shortlisted + "' 2>&1");
  ASSERT_EQ(sl.exit_code, 0) << sl.output;

  struct Case {
    const std::string* model;
    const char* args;
  };
  const Case cases[] = {{&demo, "--beam 4 --batch 3 --threads 2"},
                        {&demo, "--batch 6"},
                        {&shortlisted, "--shortlist --beam 4 --batch 2"}};
  for (const Case& c : cases) {
    const std::string want = Translate("reference", *c.model, c.args, input);
    ASSERT_FALSE(want.empty()) << c.args;
    for (int t = 1; t < n; ++t)
      EXPECT_EQ(want, Translate(tables[t]->name, *c.model, c.args, input)) << tables[t]->name << " " << c.args;
  }
}

// `mtlite version` names the table translations use and every table this CPU can run;
// MTLITE_KERNELS picks any of them, and a name that is none of them (misspelt, or a table this CPU
// lacks) is reported on stderr instead of silently running the default table.
TEST(CliKernelTables, VersionNamesTheTableAndAnUnknownNameIsReported) {
  const kernels::KernelTable* tables[16];
  const int n = kernels::AvailableKernels(tables, 16);
  ASSERT_GE(n, 1);
  std::string runs;
  for (int t = 0; t < n; ++t) runs += std::string(" ") + tables[t]->name;
  const std::string cli = "'" + testing::CliPath() + "' version 2>&1";

  for (int t = 0; t < n; ++t) {
    const auto r = testing::Run(std::string("MTLITE_KERNELS=") + tables[t]->name + " " + cli);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output, std::string("mtlite ") + Version() + "\nkernels " + tables[t]->name +
                            " (this CPU can run:" + runs + ")\n");
  }
  const auto bad = testing::Run("MTLITE_KERNELS=avx513 " + cli);
  EXPECT_EQ(bad.exit_code, 0) << bad.output;
  const std::string best = tables[n - 1]->name;
  EXPECT_NE(bad.output.find("mtlite: MTLITE_KERNELS=avx513 is not a kernel table this CPU can run (it can run:" +
                            runs + "); using " + best + "\n"),
            std::string::npos)
      << bad.output;
  EXPECT_NE(bad.output.find("kernels " + best + " ("), std::string::npos) << bad.output;

  const auto v = testing::Run("env -u MTLITE_KERNELS '" + testing::CliPath() + "' --version 2>&1");
  EXPECT_EQ(v.output, std::string("mtlite ") + Version() + "\n");
}

}  // namespace
}  // namespace mtlite
