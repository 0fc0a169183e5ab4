// `mtlite translate --stream` into a pipe: partial translations are lines starting with a tab,
// and the other lines are exactly the output without --stream (the terminal redraw is tested by
// tests/python/test_stream.py on a pseudo-terminal).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model_test_helpers.h"

namespace mtlite {
namespace {

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin < s.size()) {
    size_t end = s.find('\n', begin);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

struct Output {
  int exit_code = -1;
  std::string stdout_text;
};

// `mtlite translate -m demo ARGS < input`, stdout only.
Output Translate(const std::string& args, const std::string& input) {
  testing::TempDir dir;
  testing::WriteText(dir / "in.txt", input);
  const auto r = testing::Run("{ '" + testing::CliPath() + "' translate -m '" + testing::DemoModel("int8") + "' " +
                              args + " < '" + (dir / "in.txt") + "' 2>/dev/null; }");
  return {r.exit_code, r.output};
}

const char kInput[] =
    "A man in a blue shirt is standing on a ladder cleaning windows.\n"
    "\n"
    "Two dogs play in the snow.\n"
    "A little girl climbs into a wooden playhouse.\n";

TEST(CliStream, FinalLinesEqualTheOutputWithoutStream) {
  for (const std::string& args : {std::string("--beam 1"), std::string("--beam 4"),
                                  std::string("--beam 4 --n-best 2 --scores"), std::string("--output-ids"),
                                  std::string("--beam 2 --batch 3 --alignments")}) {
    const Output plain = Translate(args, kInput);
    const Output streamed = Translate(args + " --stream", kInput);
    ASSERT_EQ(plain.exit_code, 0) << args;
    ASSERT_EQ(streamed.exit_code, 0) << args;
    std::vector<std::string> finals, partials;
    for (const std::string& l : Lines(streamed.stdout_text)) (l.rfind('\t', 0) == 0 ? partials : finals).push_back(l);
    EXPECT_EQ(finals, Lines(plain.stdout_text)) << args;
    EXPECT_GE(partials.size(), 6u) << args << "\n" << streamed.stdout_text;
  }
}

TEST(CliStream, GreedyPartialsGrowTokenByTokenBeforeTheirLine) {
  const Output plain = Translate("--output-ids", kInput);
  const Output streamed = Translate("--output-ids --stream", kInput);
  ASSERT_EQ(streamed.exit_code, 0);
  const std::vector<std::string> want = Lines(plain.stdout_text);
  // Per sentence: one partial line per generated token (prefixes of the final ids), then the line.
  std::vector<std::string> expected;
  for (const std::string& ids : want) {
    std::string prefix;
    size_t begin = 0;
    while (begin < ids.size()) {
      size_t end = ids.find(' ', begin);
      if (end == std::string::npos) end = ids.size();
      prefix = ids.substr(0, end);
      expected.push_back("\t" + prefix);
      begin = end + 1;
    }
    expected.push_back(ids);
  }
  EXPECT_EQ(Lines(streamed.stdout_text), expected);
}

TEST(CliStream, FailingLinesAreEmptyAsWithoutStream) {
  const std::string input = std::string("A dog runs.\n") + "caf\xc3\n" + std::string(300, 'x') + "\nThe end.\n";
  const Output plain = Translate("--split none --max-input-bytes 256", input);
  const Output streamed = Translate("--max-input-bytes 256 --stream", input);
  EXPECT_EQ(plain.exit_code, 1);
  EXPECT_EQ(streamed.exit_code, 1);
  std::vector<std::string> finals;
  for (const std::string& l : Lines(streamed.stdout_text))
    if (l.rfind('\t', 0) != 0) finals.push_back(l);
  EXPECT_EQ(finals, Lines(plain.stdout_text));
  const auto err = testing::Run("{ printf 'caf\\303\\n' | '" + testing::CliPath() + "' translate -m '" +
                                testing::DemoModel("int8") + "' --stream 2>&1 >/dev/null; }");
  EXPECT_EQ(err.exit_code, 1);
  EXPECT_NE(err.output.find("line 1: "), std::string::npos) << err.output;
}

TEST(CliStream, RejectsForcedLogits) {
  const auto r = testing::RunCli("translate -m '" + testing::DemoModel("int8") + "' --stream --forced-logits x.bin");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--stream cannot be combined with --forced-logits"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace mtlite
