// Bad input end to end through `mtlite translate` (stdin -> stdout, int8 demo model): invalid
// UTF-8 of every kind, NUL bytes, a BOM, control and bidi characters, a 1 MB line, 10^5 short
// lines, an empty file, a file without a final newline, CRLF. The CLI must translate each line or
// print a clear error naming it, keep one output line per input line, go on with the next line,
// and exit 1 exactly when some line failed. docs/usage.md ("Bad input") documents these cases.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "unit/host/model_test_helpers.h"

namespace mtlite {
namespace {

using testing::CliPath;
using testing::DemoModel;
using testing::ReadText;
using testing::TempDir;
using testing::WriteText;

struct CliResult {
  int exit_code = -1;
  std::vector<std::string> out;  // stdout split at '\n' (each line must end with one)
  std::string err;
  bool out_ends_with_newline = true;
};

std::vector<std::string> SplitLines(const std::string& s, bool* ends_with_newline) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < s.size()) {
    const size_t nl = s.find('\n', start);
    if (nl == std::string::npos) {
      lines.push_back(s.substr(start));
      *ends_with_newline = false;
      break;
    }
    lines.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// Runs `mtlite translate -m demo.int8.mtlite -q FLAGS < input`.
CliResult Translate(const std::string& input, const std::string& flags = "") {
  TempDir dir;
  WriteText(dir / "in", input);
  const testing::CommandResult r = testing::Run("( '" + CliPath() + "' translate -m '" + DemoModel("int8") + "' -q " +
                                                flags + " < '" + (dir / "in") + "' > '" + (dir / "out") + "' 2> '" +
                                                (dir / "err") + "' )");
  CliResult c;
  c.exit_code = r.exit_code;
  c.out = SplitLines(ReadText(dir / "out"), &c.out_ends_with_newline);
  c.err = ReadText(dir / "err") + r.output;  // r.output: only the shell's own messages
  return c;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t p = haystack.find(needle); p != std::string::npos; p = haystack.find(needle, p + 1)) ++n;
  return n;
}

const std::vector<std::string> kInvalidUtf8 = {
    "A man \xc0\xaf walks.",           // overlong 2-byte '/'
    "x\xe0\x80\xafy",                  // overlong 3-byte
    "\xf0\x82\x82\xac euro",           // overlong 4-byte
    "half \xed\xa0\x80 pair",          // high surrogate
    "\xed\xbf\xbf",                    // low surrogate
    "\xed\xa0\xbd\xed\xb8\x80",        // CESU-8 surrogate pair
    "big \xf4\x90\x80\x80",            // U+110000, beyond U+10FFFF
    "\xf7\xbf\xbf\xbf",                // U+1FFFFF
    "A dog \xff runs.",                // 0xff never appears in UTF-8
    "\xfe",                            // nor 0xfe
    "\x80 cat",                        // lone continuation byte
    "snow \xe2\x82",                   // truncated at the end of the line (2 of 3 bytes)
    "A bike \xf0\x9f\x98",             // truncated (3 of 4 bytes)
    "\xc3 A woman sits.",              // truncated in the middle
};

TEST(CliBadInput, InvalidUtf8IsAPerLineErrorAndTheOtherLinesAreTranslated) {
  const std::vector<std::string> good = {"A dog runs in the park.", "Two children play in the snow."};
  const CliResult ref = Translate(Join(good));
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  ASSERT_EQ(ref.out.size(), 2u);
  ASSERT_FALSE(ref.out[0].empty());

  std::vector<std::string> lines = {good[0]};
  for (const std::string& bad : kInvalidUtf8) lines.push_back(bad);
  lines.push_back(good[1]);
  // --split none: a line is one model input, as before the text layer (the default keeps a bad
  // sentence in place instead: TextModeKeepsBadSentencesInPlace)
  for (const char* flags : {"--split none", "--split none --batch 4", "--split none --batch 16 --beam 2"}) {
    SCOPED_TRACE(flags);
    const CliResult r = Translate(Join(lines), flags);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    ASSERT_EQ(r.out.size(), lines.size()) << "one output line per input line";
    if (std::string(flags).find("beam") == std::string::npos) {
      EXPECT_EQ(r.out.front(), ref.out[0]);
      EXPECT_EQ(r.out.back(), ref.out[1]);
    } else {
      EXPECT_FALSE(r.out.front().empty());
      EXPECT_FALSE(r.out.back().empty());
    }
    for (size_t i = 1; i + 1 < lines.size(); ++i) {
      EXPECT_EQ(r.out[i], "") << "line " << i + 1;
      EXPECT_NE(r.err.find("line " + std::to_string(i + 1) + ": INVALID_ARGUMENT"), std::string::npos)
          << "line " << i + 1 << " not named in:\n" << r.err;
    }
    EXPECT_EQ(Count(r.err, "invalid UTF-8 in input at byte offset"), kInvalidUtf8.size()) << r.err;
    EXPECT_EQ(Count(r.err, "mtlite translate: line "), kInvalidUtf8.size()) << r.err;
    EXPECT_EQ(Count(r.err, "sentence 0"), 0u) << "the retried line is named by its line number only:\n" << r.err;
  }
}

// The default (--split paragraph): a sentence that cannot be translated is kept in its place,
// reported with its line number; the other sentences of its line and the other lines are
// translated; one output line per input line.
TEST(CliBadInput, TextModeKeepsBadSentencesInPlace) {
  const std::string good = "A dog runs in the park.";
  const CliResult ref = Translate(good + "\n");
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  std::vector<std::string> lines = {good};
  for (const std::string& bad : kInvalidUtf8) lines.push_back(good + " " + bad);
  for (const char* flags : {"", "--batch 4"}) {
    SCOPED_TRACE(flags);
    const CliResult r = Translate(Join(lines), flags);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    ASSERT_EQ(r.out.size(), lines.size());
    EXPECT_EQ(r.out[0], ref.out[0]);
    for (size_t i = 1; i < lines.size(); ++i) {
      // the bad sentence is the whole line or follows the good one: it is kept as it was
      const std::string& bad = kInvalidUtf8[i - 1];
      EXPECT_NE(r.out[i].find(bad.substr(bad.find_first_not_of(' '))), std::string::npos) << "line " << i + 1;
      EXPECT_NE(r.err.find("line " + std::to_string(i + 1) + ": INVALID_ARGUMENT"), std::string::npos)
          << "line " << i + 1 << " not named in:\n" << r.err;
    }
  }
  // a line longer than --max-text-bytes is kept, and the limit named
  std::string huge;
  while (huge.size() < 70000) huge += "word ";
  const CliResult r = Translate("A dog runs.\n" + huge + "\nA cat sleeps.\n");
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_EQ(r.out.size(), 3u);
  EXPECT_FALSE(r.out[0].empty());
  EXPECT_EQ(r.out[1], huge);
  EXPECT_FALSE(r.out[2].empty());
  EXPECT_NE(r.err.find("line 2: OUT_OF_RANGE"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("max_text_bytes"), std::string::npos) << r.err;
}

TEST(CliBadInput, NulBomControlAndBidiCharactersAreTranslated) {
  // The tokenizer normalizes as sentencepiece's nmt_nfkc does: C0 controls and DEL are removed,
  // U+FEFF (BOM) is removed, NUL and bidi controls stay (as unknown pieces).
  const std::vector<std::string> lines = {
      "\xef\xbb\xbf" "A man is riding a bike.",        // BOM at the start of the file
      "A man is riding a bike.",
      "Two dogs\x01 play\x7f in the\x1b snow.",
      "Two dogs play in the snow.",
      std::string("A dog\0 runs in the park.", 24),  // NUL inside the line
      "A \xe2\x80\xae" "man\xe2\x80\xac is \xe2\x81\xa7riding\xe2\x81\xa9 a bike \xe2\x80\x8f.",  // bidi controls
      "Zero\xe2\x80\x8bwidth\xe2\x80\x8d joiners \xef\xbb\xbf inside.",
      "carriage\rreturn inside",
  };
  ASSERT_EQ(lines[4].size(), 24u);
  const CliResult r = Translate(Join(lines));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ASSERT_EQ(r.out.size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_FALSE(r.out[i].empty()) << "line " << i + 1;
  EXPECT_EQ(r.out[0], r.out[1]) << "a BOM changes nothing";
  EXPECT_EQ(r.out[2], r.out[3]) << "control characters are removed";
}

TEST(CliBadInput, OneMegabyteLineIsAnErrorNamingTheLimit) {
  std::string huge;
  while (huge.size() < (1u << 20)) huge += "word ";
  const std::string input = "A dog runs.\n" + huge + "\nA cat sleeps.\n";
  CliResult r = Translate(input, "--split none");
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_EQ(r.out.size(), 3u);
  EXPECT_FALSE(r.out[0].empty());
  EXPECT_EQ(r.out[1], "");
  EXPECT_FALSE(r.out[2].empty());
  EXPECT_NE(r.err.find("line 2: OUT_OF_RANGE"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("max_input_bytes"), std::string::npos) << r.err;
  // With the byte limit raised, the token limit catches it.
  r = Translate(input, "--split none --max-input-bytes 2000000");
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_EQ(r.out.size(), 3u);
  EXPECT_EQ(r.out[1], "");
  EXPECT_NE(r.err.find("line 2: OUT_OF_RANGE"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("max_source_tokens"), std::string::npos) << r.err;
}

TEST(CliBadInput, HundredThousandShortLinesKeepTheirOrder) {
  // 10^5 lines: every 100th is a sentence, every 1000th (offset 550) invalid UTF-8, the rest
  // empty or blank (translated to empty lines without running the model, so the test stays fast;
  // bench/soak_bench.cc pushes 10^5 real sentences through one translator).
  const std::vector<std::string> sentences = {"Hi.", "A dog runs.", "Two cats sleep.", "Thank you."};
  const CliResult ref = Translate(Join(sentences));
  ASSERT_EQ(ref.exit_code, 0) << ref.err;
  ASSERT_EQ(ref.out.size(), sentences.size());
  constexpr int kLines = 100000;
  std::string input;
  for (int i = 0; i < kLines; ++i) {
    if (i % 100 == 0) input += sentences[size_t(i / 100) % sentences.size()];
    else if (i % 1000 == 550) input += "bad \xff";
    else if (i % 3 == 1) input += " \t ";
    input += '\n';
  }
  const CliResult r = Translate(input, "--split none --batch 8");
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_EQ(r.out.size(), size_t(kLines));
  int wrong = 0;
  for (int i = 0; i < kLines; ++i) {
    const std::string want = i % 100 == 0 ? ref.out[size_t(i / 100) % sentences.size()] : "";
    if (r.out[size_t(i)] != want && ++wrong <= 5) ADD_FAILURE() << "line " << i + 1 << ": '" << r.out[size_t(i)] << "'";
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(Count(r.err, ": INVALID_ARGUMENT"), size_t(kLines / 1000)) << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("line 551: INVALID_ARGUMENT"), std::string::npos);
  EXPECT_NE(r.err.find("line 99551: INVALID_ARGUMENT"), std::string::npos);
}

TEST(CliBadInput, EmptyFileNoFinalNewlineAndCrlf) {
  CliResult r = Translate("");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(r.err, "");

  r = Translate("\n");  // one empty line -> one empty output line
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.out.size(), 1u);
  EXPECT_EQ(r.out[0], "");

  const CliResult with_newline = Translate("A dog runs.\nTwo cats sleep.\n");
  ASSERT_EQ(with_newline.exit_code, 0) << with_newline.err;
  ASSERT_EQ(with_newline.out.size(), 2u);
  r = Translate("A dog runs.\nTwo cats sleep.");  // no final newline: the last line still counts
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, with_newline.out);
  EXPECT_TRUE(r.out_ends_with_newline);
  r = Translate("A dog runs.\r\nTwo cats sleep.\r\n");  // CRLF: the \r is dropped
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, with_newline.out);
}

TEST(CliBadInput, ExitCodeSaysWhetherAnyLineFailed) {
  EXPECT_EQ(Translate("A dog runs.\n").exit_code, 0);
  EXPECT_EQ(Translate("A dog runs.\n\xff\n").exit_code, 1);
  EXPECT_EQ(Translate("\xff\nA dog runs.\n", "--batch 2").exit_code, 1);
  // Bad arguments are a usage error (2), not a translation failure.
  EXPECT_EQ(Translate("A dog runs.\n", "--beam 0").exit_code, 2);
  EXPECT_EQ(Translate("A dog runs.\n", "--no-such-flag").exit_code, 2);
}

}  // namespace
}  // namespace mtlite
