// The argument parsers of `mtlite profile` and `mtlite attention` (defaults, ranges, conflicts,
// help) and the measurement helpers they share with the benchmarks. In process: nothing is
// loaded, nothing exits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "commands.h"
#include "measure.h"

namespace mtlite {
namespace cli {
namespace {

using Kind = ParseResult::Kind;

template <class Args, class ParseFn>
ParseResult ParseWith(ParseFn parse, std::vector<const char*> args, Args* out) {
  args.insert(args.begin(), "cmd");
  return parse(int(args.size()), args.data(), out);
}

// Parses into fresh arguments (values of an earlier parse must not leak into the next case).
ParseResult Profile(std::vector<const char*> args) {
  ProfileArgs a;
  return ParseWith(ParseProfileArgs, std::move(args), &a);
}
ParseResult Attention(std::vector<const char*> args) {
  AttentionArgs a;
  return ParseWith(ParseAttentionArgs, std::move(args), &a);
}

void ExpectError(const ParseResult& r, const std::string& fragment) {
  EXPECT_EQ(r.kind, Kind::kError) << fragment;
  EXPECT_NE(r.text.find(fragment), std::string::npos) << r.text;
  EXPECT_EQ(r.usage.rfind("usage: ", 0), 0u) << r.usage;
}

TEST(ProfileArgs, DefaultsAndValues) {
  ProfileArgs a;
  ASSERT_TRUE(ParseWith(ParseProfileArgs, {"-m", "x.mtlite", "hello", "world"}, &a).ok());
  EXPECT_EQ(a.model, "x.mtlite");
  EXPECT_EQ(a.texts, (std::vector<std::string>{"hello", "world"}));
  EXPECT_EQ(a.repeat, 1);
  EXPECT_EQ(a.beam, 1);
  EXPECT_EQ(a.batch, 1);
  EXPECT_EQ(a.roofline_mib, 256);
  EXPECT_FALSE(a.roofline || a.layers || a.quiet);

  ProfileArgs b;
  ASSERT_TRUE(ParseWith(ParseProfileArgs,
                        {"-m", "x.mtlite", "--input", "in.txt", "--beam", "4", "--batch=8", "--threads", "2",
                         "--max-length", "64", "--repeat", "3", "--trace", "t.json", "--json", "-", "--layers",
                         "--roofline", "--roofline-mib", "32", "-q"},
                        &b)
                  .ok());
  EXPECT_EQ(b.input, "in.txt");
  EXPECT_EQ(b.beam, 4);
  EXPECT_EQ(b.batch, 8);
  EXPECT_EQ(b.threads, 2);
  EXPECT_EQ(b.max_length, 64);
  EXPECT_EQ(b.repeat, 3);
  EXPECT_EQ(b.trace, "t.json");
  EXPECT_EQ(b.json, "-");
  EXPECT_EQ(b.roofline_mib, 32);
  EXPECT_TRUE(b.layers && b.roofline && b.quiet);
}

TEST(ProfileArgs, BadArguments) {
  ExpectError(Profile({"hello"}), "-m MODEL is required");
  ExpectError(Profile({"-m", "x", "--repeat", "0"}), "--repeat must be an integer in [1,");
  ExpectError(Profile({"-m", "x", "--batch", "0"}), "--batch must be an integer");
  ExpectError(Profile({"-m", "x", "--trace"}), "--trace needs a value");
  ExpectError(Profile({"-m", "x", "--json="}), "--json must not be empty");
  ExpectError(Profile({"-m", "x", "--roofline-mib", "-1"}), "--roofline-mib must be");
  ExpectError(Profile({"-m", "x", "--input", "f", "text"}), "not both");
  ExpectError(Profile({"-m", "x", "--tracee", "t"}), "unknown option '--tracee'");
  const ParseResult help = Profile({"--help"});
  EXPECT_EQ(help.kind, Kind::kHelp);
  EXPECT_EQ(help.text.rfind("usage: mtlite profile", 0), 0u);
  for (const char* option : {"--trace", "--json", "--repeat", "--roofline", "--layers", "--input"})
    EXPECT_NE(help.text.find(option), std::string::npos) << option;
}

TEST(AttentionArgs, DefaultsAndValues) {
  AttentionArgs a;
  ASSERT_TRUE(ParseWith(ParseAttentionArgs, {"-m", "x.mtlite", "A dog runs.", "-o", "map.SVG"}, &a).ok());
  EXPECT_EQ(a.texts.size(), 1u);
  EXPECT_EQ(a.batch, 1);  // the TEXTs form the batch
  EXPECT_EQ(a.sentence, 0);
  EXPECT_EQ(a.layer, -1);
  EXPECT_EQ(a.output, "map.SVG");

  AttentionArgs b;
  ASSERT_TRUE(ParseWith(ParseAttentionArgs,
                        {"-m", "x", "a", "b c d", "--sentence", "1", "--layer", "2", "--json", "m.json", "--beam",
                         "2", "--crop"},
                        &b)
                  .ok());
  EXPECT_EQ(b.batch, 2);
  EXPECT_EQ(b.sentence, 1);
  EXPECT_EQ(b.layer, 2);
  EXPECT_EQ(b.beam, 2);
  EXPECT_TRUE(b.crop);
  EXPECT_TRUE(b.output.empty());
}

TEST(AttentionArgs, BadArguments) {
  ExpectError(Attention({"-m", "x", "-o", "m.svg"}), "missing TEXT");
  ExpectError(Attention({"-m", "x", "text"}), "give -o FILE.svg|FILE.json");
  ExpectError(Attention({"-m", "x", "text", "-o", "map.png"}), "must end in .svg or .json");
  ExpectError(Attention({"-m", "x", "one", "two", "--sentence", "2", "-o", "m.svg"}),
              "--sentence 2 but there are 2 TEXTs");
  ExpectError(Attention({"-m", "x", "one", "--sentence", "-1", "-o", "m.svg"}),
              "--sentence must be an integer");
  ExpectError(Attention({"-m", "x", "one", "--layer", "-2", "-o", "m.svg"}),
              "--layer must be an integer");
  ExpectError(Attention({"text", "-o", "m.svg"}), "-m MODEL is required");
  EXPECT_EQ(Attention({"-h"}).kind, Kind::kHelp);
}

TEST(Measure, PercentileInterpolatesLikeNumpy) {
  EXPECT_EQ(Percentile({}, 50), 0.0);
  EXPECT_EQ(Percentile({7}, 99), 7.0);
  // numpy.percentile([1, 2, 3, 4], [50, 90, 99]) = 2.5, 3.7, 3.97
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_NEAR(Percentile({4, 1, 3, 2}, 90), 3.7, 1e-12);
  EXPECT_NEAR(Percentile({4, 1, 3, 2}, 99), 3.97, 1e-12);
  EXPECT_EQ(Percentile({4, 1, 3, 2}, 0), 1.0);
  EXPECT_EQ(Percentile({4, 1, 3, 2}, 100), 4.0);
}

TEST(Measure, RooflineNumbersArePositive) {
  EXPECT_GT(MaxRssKb(), 0);
  EXPECT_GT(ProcStatusKb("VmHWM"), 0);
  EXPECT_EQ(ProcStatusKb("NoSuchKey"), -1);
  EXPECT_GT(ReadBandwidthGBs(size_t(1) << 20, 1), 0.0);
  std::string name;
  EXPECT_GT(GemmGops(8, 16, 12, 1, &name), 0.0);  // partial tiles: n, k not multiples of the block
  EXPECT_FALSE(name.empty());
  EXPECT_EQ(GemmGops(0, 16, 16, 1, &name), 0.0);
}

}  // namespace
}  // namespace cli
}  // namespace mtlite
