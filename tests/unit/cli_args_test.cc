// The CLI argument parser, the parsers of every `mtlite` subcommand (bad values, missing
// values, unknown flags, generated help), the JSON writer and the line reader. In process:
// nothing is loaded, nothing exits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "json_writer.h"
#include "line_input.h"

namespace mtlite {
namespace cli {
namespace {

using Kind = ParseResult::Kind;

// argv with argv[0] = the command name.
class Argv {
 public:
  Argv(const std::vector<const char*>& args) : strings_(args.begin(), args.end()) {
    strings_.insert(strings_.begin(), "cmd");
    for (const std::string& s : strings_) ptrs_.push_back(s.c_str());
  }
  int argc() const { return int(ptrs_.size()); }
  const char* const* argv() const { return ptrs_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<const char*> ptrs_;
};

template <class Args, class ParseFn>
ParseResult ParseWith(ParseFn parse, const std::vector<const char*>& args, Args* out) {
  const Argv a(args);
  return parse(a.argc(), a.argv(), out);
}

#define EXPECT_ERROR(result, fragment)                                          \
  do {                                                                          \
    const ParseResult r_ = (result);                                            \
    EXPECT_EQ(r_.kind, Kind::kError);                                           \
    EXPECT_NE(r_.text.find(fragment), std::string::npos) << r_.text;            \
    EXPECT_NE(r_.usage.find("usage: "), std::string::npos) << r_.usage;         \
  } while (0)

// ---- ArgParser ------------------------------------------------------------------------------

struct Demo {
  bool flag = false;
  int n = 3;
  float x = 0.5f, unit = 0.25f;
  std::string name, mode = "a", file;
  std::vector<std::string> rest;
  int pair_sum = 0;
};

ArgParser DemoParser(Demo* d) {
  ArgParser p("demo", "A parser for the tests.");
  p.Positional("FILE", &d->file, "input file");
  p.Rest("WORD", &d->rest, "words");
  p.Flag("-f,--flag", &d->flag, "a flag");
  p.Int("-n,--number", "N", 1, 10, &d->n, "a number");
  p.Float("--x", "F", &d->x, "any finite number");
  p.Float("--unit", "F", 0.0f, 1.0f, &d->unit, "in [0, 1]");
  p.String("--name", "NAME", &d->name, "a name").Required();
  p.Choice("--mode", {"a", "b"}, &d->mode, "a mode");
  p.Custom("--pair", "A,B",
           [d](const std::string& v) {
             const size_t comma = v.find(',');
             int a = 0, b = 0;
             if (comma == std::string::npos || !ParseInt(v.substr(0, comma), 0, 9, &a) ||
                 !ParseInt(v.substr(comma + 1), 0, 9, &b)) {
               return std::string("expects two digits A,B");
             }
             d->pair_sum = a + b;
             return std::string();
           },
           "two digits");
  p.Check([d] { return d->n == 7 && d->flag ? std::string("-n 7 and --flag do not go together") : std::string(); });
  return p;
}

ParseResult ParseDemo(const std::vector<const char*>& args, Demo* d) {
  const ArgParser p = DemoParser(d);
  const Argv a(args);
  return p.Parse(a.argc(), a.argv());
}

TEST(ArgParser, ParsesEveryKindOfValue) {
  Demo d;
  const ParseResult r = ParseDemo({"in.txt", "--name", "-dash-", "-f", "--number=7", "w1", "--x", "-2.5e3", "--unit",
                                   "1", "--mode", "b", "--pair", "4,5", "-", "w3"},
                                  &d);
  ASSERT_EQ(r.kind, Kind::kError) << "the check rejects -n 7 with --flag";
  EXPECT_NE(r.text.find("do not go together"), std::string::npos);
  d = Demo();
  ASSERT_TRUE(ParseDemo({"in.txt", "--name", "-dash-", "-f", "--number=6", "w1", "--x", "-2.5e3", "--unit", "1",
                         "--mode", "b", "--pair", "4,5", "-", "w3"},
                        &d)
                  .ok());
  EXPECT_EQ(d.file, "in.txt");
  EXPECT_EQ(d.name, "-dash-");  // a value is taken verbatim, even when it starts with '-'
  EXPECT_TRUE(d.flag);
  EXPECT_EQ(d.n, 6);
  EXPECT_EQ(d.x, -2500.0f);
  EXPECT_EQ(d.unit, 1.0f);
  EXPECT_EQ(d.mode, "b");
  EXPECT_EQ(d.pair_sum, 9);
  EXPECT_EQ(d.rest, (std::vector<std::string>{"w1", "-", "w3"}));
}

TEST(ArgParser, DefaultsStayWhenOptionsAreAbsent) {
  Demo d;
  ASSERT_TRUE(ParseDemo({"f", "--name", "n"}, &d).ok());
  EXPECT_FALSE(d.flag);
  EXPECT_EQ(d.n, 3);
  EXPECT_EQ(d.x, 0.5f);
  EXPECT_EQ(d.mode, "a");
  EXPECT_TRUE(d.rest.empty());
}

TEST(ArgParser, DoubleDashEndsTheOptions) {
  Demo d;
  ASSERT_TRUE(ParseDemo({"--name", "n", "--", "-f", "--number", "-"}, &d).ok());
  EXPECT_EQ(d.file, "-f");
  EXPECT_EQ(d.rest, (std::vector<std::string>{"--number", "-"}));
  EXPECT_FALSE(d.flag);
}

TEST(ArgParser, RejectsBadValues) {
  // Arguments after "f --name", and a part of the message.
  const std::pair<std::vector<const char*>, const char*> cases[] = {
      {{"n", "-n", "0"}, "-n must be an integer in [1, 10], got '0'"},
      {{"n", "-n", "11"}, "in [1, 10]"},
      {{"n", "--number", "3x"}, "got '3x'"},
      {{"n", "--number", ""}, "got ''"},
      {{"n", "--number", "99999999999999999999"}, "integer"},
      {{"n", "--x", "nan"}, "--x must be a number, got 'nan'"},
      {{"n", "--x", "inf"}, "must be a number"},
      {{"n", "--x", "1e39"}, "must be a number"},
      {{"n", "--x", "1.5.2"}, "must be a number"},
      {{"n", "--unit", "1.01"}, "--unit must be a number in [0, 1]"},
      {{"n", "--mode", "c"}, "--mode must be one of a|b, got 'c'"},
      {{"n", "--pair", "4"}, "--pair expects two digits A,B"},
      {{"n", "--flag=1"}, "--flag takes no value"},
      {{""}, "--name must not be empty"},
  };
  Demo d;
  for (const auto& [args, message] : cases) {
    std::vector<const char*> argv = {"f", "--name"};
    argv.insert(argv.end(), args.begin(), args.end());
    EXPECT_ERROR(ParseDemo(argv, &d), message);
  }
  EXPECT_ERROR(ParseDemo({"f", "--name="}, &d), "--name must not be empty");
  EXPECT_EQ(d.n, 3);  // a rejected value is not stored
}

TEST(ArgParser, RejectsMissingValuesUnknownFlagsAndStrayArguments) {
  Demo d;
  EXPECT_ERROR(ParseDemo({"f", "--name"}, &d), "--name needs a value (NAME)");
  EXPECT_ERROR(ParseDemo({"f", "--name", "n", "-n"}, &d), "-n needs a value (N)");
  EXPECT_ERROR(ParseDemo({"f", "--name", "n", "--nmber", "2"}, &d), "unknown option '--nmber'");
  EXPECT_ERROR(ParseDemo({"f", "--name", "n", "--nmber=2"}, &d), "unknown option '--nmber'");
  EXPECT_ERROR(ParseDemo({"f", "--name", "n", "-x"}, &d), "unknown option '-x'");
  EXPECT_ERROR(ParseDemo({"f"}, &d), "--name NAME is required");
  EXPECT_ERROR(ParseDemo({"--name", "n"}, &d), "missing FILE");
  EXPECT_ERROR(ParseDemo({"", "--name", "n"}, &d), "FILE must not be empty");
  // Without Rest, a second positional is an error.
  std::string one;
  ArgParser p("single", "");
  p.Positional("ONE", &one, "the one");
  const Argv a({"x", "y"});
  EXPECT_ERROR(p.Parse(a.argc(), a.argv()), "unexpected argument 'y'");
}

TEST(ArgParser, HelpIsGeneratedFromTheOptionList) {
  Demo d;
  d.n = 4;
  const ArgParser p = DemoParser(&d);
  const std::string help = p.Help();
  EXPECT_EQ(help.find(p.Usage()), 0u);
  EXPECT_EQ(p.Usage(), "usage: demo [options] --name NAME FILE [WORD ...]");
  for (const char* want : {"A parser for the tests.", "-f, --flag", "-n, --number N", "(1..10, default 4)", "--x F",
                           "--unit F", "(0..1, default 0.25)", "--name NAME", "(required)", "--mode a|b",
                           "(default a)", "--pair A,B", "FILE", "WORD ...", "-h, --help"}) {
    EXPECT_NE(help.find(want), std::string::npos) << want << "\n" << help;
  }
  const std::vector<std::vector<const char*>> cases = {{"-h"}, {"f", "--help"}, {"--help=x"}, {"-n", "0", "--help"}};
  for (const auto& args : cases) {
    Demo e;
    e.n = 4;  // the default shown in the help
    const ParseResult r = ParseDemo(args, &e);
    if (std::string(args[0]) == "-n") {
      EXPECT_EQ(r.kind, Kind::kError);  // the first problem ends the parse
    } else {
      EXPECT_EQ(r.kind, Kind::kHelp);
      EXPECT_EQ(r.text, help);
    }
  }
}

TEST(ArgParser, PrintParseResultGivesTheExitCodes) {
  EXPECT_EQ(PrintParseResult(ParseResult::Ok(), "t"), 0);
  EXPECT_EQ(PrintParseResult(ParseResult::Help("usage: t\n"), "t"), 0);
  EXPECT_EQ(PrintParseResult(ParseResult::Error("bad", "usage: t"), "t"), 2);
  EXPECT_FALSE(ParseResult::Error("", "usage: t").text.empty());  // an error always has a message
}

TEST(ArgParser, ParseIntIsStrict) {
  int v = -1;
  EXPECT_TRUE(ParseInt("42", 0, 100, &v));
  EXPECT_EQ(v, 42);
  EXPECT_TRUE(ParseInt("-5", -10, 0, &v));
  EXPECT_EQ(v, -5);
  for (const char* bad : {"", "x", "4 2", "42 ", "0x10", "101", "1e2", "9223372036854775808"}) {
    EXPECT_FALSE(ParseInt(bad, 0, 100, &v)) << bad;
  }
  EXPECT_EQ(v, -5);
}

// ---- mtlite convert -------------------------------------------------------------------------

TEST(ConvertArgs, Parses) {
  ConvertArgs a;
  ASSERT_TRUE(ParseWith(ParseConvertArgs, {"hf", "-o", "m.mtlite"}, &a).ok());
  EXPECT_EQ(a.input, "hf");
  EXPECT_TRUE(a.vocabs.empty());
  EXPECT_EQ(a.semantics, "");
  EXPECT_EQ(a.output, "m.mtlite");
  EXPECT_EQ(a.quantize, "int8");
  EXPECT_FALSE(a.quiet);
  a = ConvertArgs();
  ASSERT_TRUE(ParseWith(ParseConvertArgs, {"--quantize", "fp16", "--output", "x", "-q", "hf"}, &a).ok());
  EXPECT_EQ(a.quantize, "fp16");
  EXPECT_TRUE(a.quiet);
  a = ConvertArgs();
  ASSERT_TRUE(ParseWith(ParseConvertArgs, {"m.npz", "--vocab", "s.spm", "--vocab", "t.spm", "-o", "x", "--semantics", "hf"}, &a).ok());
  EXPECT_EQ(a.vocabs, (std::vector<std::string>{"s.spm", "t.spm"}));
  EXPECT_EQ(a.semantics, "hf");
  EXPECT_ERROR(ParseWith(ParseConvertArgs, {"m.npz", "-o", "x", "--semantics", "fairseq"}, &a), "marian|hf");
}

TEST(ConvertArgs, Rejects) {
  ConvertArgs a;
  EXPECT_ERROR(ParseWith(ParseConvertArgs, {}, &a), "-o MODEL is required");
  EXPECT_ERROR(ParseWith(ParseConvertArgs, {"hf"}, &a), "-o MODEL is required");
  EXPECT_ERROR(ParseWith(ParseConvertArgs, {"-o", "x"}, &a), "missing INPUT");
  EXPECT_ERROR(ParseWith(ParseConvertArgs, {"hf", "-o"}, &a), "-o needs a value");
  EXPECT_ERROR(ParseWith(ParseConvertArgs, {"hf", "-o", "x", "--quantize", "int4"}, &a), "int8|fp16|fp32");
  EXPECT_ERROR(ParseWith(ParseConvertArgs, {"hf", "-o", "x", "--quantize"}, &a), "--quantize needs a value");
  EXPECT_ERROR(ParseWith(ParseConvertArgs, {"hf", "-o", "x", "--fast"}, &a), "unknown option '--fast'");
  EXPECT_ERROR(ParseWith(ParseConvertArgs, {"hf", "other", "-o", "x"}, &a), "unexpected argument 'other'");
  EXPECT_EQ(ParseWith(ParseConvertArgs, {"--help"}, &a).kind, Kind::kHelp);
}

// ---- mtlite info ----------------------------------------------------------------------------

TEST(InfoArgs, Parses) {
  InfoArgs a;
  ASSERT_TRUE(ParseWith(ParseInfoArgs, {"m.mtlite"}, &a).ok());
  EXPECT_EQ(a.path, "m.mtlite");
  EXPECT_FALSE(a.json || a.verify || a.limits_given);
  a = InfoArgs();
  ASSERT_TRUE(ParseWith(ParseInfoArgs, {"--json", "--limits", "2,64,32,4", "m", "--verify"}, &a).ok());
  EXPECT_TRUE(a.json && a.verify && a.limits_given);
  EXPECT_EQ(a.limits.max_batch, 2);
  EXPECT_EQ(a.limits.max_source_tokens, 64);
  EXPECT_EQ(a.limits.max_target_tokens, 32);
  EXPECT_EQ(a.limits.max_beam, 4);
  a = InfoArgs();
  ASSERT_TRUE(ParseWith(ParseInfoArgs, {"m", "--limits=1,256,256,1"}, &a).ok());
  EXPECT_EQ(a.limits.max_beam, 1);
  EXPECT_EQ(a.limits.max_n_best, 1);  // n-best never exceeds the beam
}

TEST(InfoArgs, Rejects) {
  InfoArgs a;
  EXPECT_ERROR(ParseWith(ParseInfoArgs, {}, &a), "missing MODEL");
  EXPECT_ERROR(ParseWith(ParseInfoArgs, {""}, &a), "MODEL must not be empty");
  EXPECT_ERROR(ParseWith(ParseInfoArgs, {"a", "b"}, &a), "unexpected argument 'b'");
  EXPECT_ERROR(ParseWith(ParseInfoArgs, {"m", "--jsn"}, &a), "unknown option '--jsn'");
  EXPECT_ERROR(ParseWith(ParseInfoArgs, {"m", "--json=yes"}, &a), "--json takes no value");
  EXPECT_ERROR(ParseWith(ParseInfoArgs, {"m", "--limits"}, &a), "--limits needs a value");
  for (const char* bad : {"1,2,3", "1,2,3,4,5", "a,b,c,d", "0,1,1,1", "1,,1,1", "1,1,1,-4", "", ",,,", "1,1,1,4,",
                          "1;1;1;1", "1,1,1,99999999999"}) {
    EXPECT_ERROR(ParseWith(ParseInfoArgs, {"m", "--limits", bad}, &a), "--limits expects BATCH,SRC,TGT,BEAM");
  }
  EXPECT_EQ(ParseWith(ParseInfoArgs, {"-h"}, &a).kind, Kind::kHelp);
}

// ---- mtlite translate -----------------------------------------------------------------------

TEST(TranslateArgs, Parses) {
  TranslateArgs a;
  ASSERT_TRUE(ParseWith(ParseTranslateArgs, {"-m", "m.mtlite"}, &a).ok());
  EXPECT_EQ(a.model, "m.mtlite");
  EXPECT_EQ(a.beam, 1);
  EXPECT_EQ(a.max_length, 256);
  EXPECT_TRUE(a.texts.empty());
  a = TranslateArgs();
  ASSERT_TRUE(ParseWith(ParseTranslateArgs,
                  {"Hello .", "--model", "m", "--beam", "4", "--n-best", "4", "--batch", "16", "--threads", "2",
                   "--max-length", "9", "--max-source-tokens", "12", "--max-input-bytes", "100", "--length-penalty",
                   "-0.5", "--max-length-ratio", "1.5", "--scores", "--alignments", "--output-ids", "--input-ids",
                   "--verify", "-q", "--forced-logits", "out.bin", "-", "--", "-3 degrees"},
                  &a)
                  .ok());
  EXPECT_EQ(a.beam, 4);
  EXPECT_EQ(a.n_best, 4);
  EXPECT_EQ(a.batch, 16);
  EXPECT_EQ(a.threads, 2);
  EXPECT_EQ(a.max_length, 9);
  EXPECT_EQ(a.max_source_tokens, 12);
  EXPECT_EQ(a.max_input_bytes, 100);
  EXPECT_EQ(a.length_penalty, -0.5f);
  EXPECT_EQ(a.max_length_ratio, 1.5f);
  EXPECT_TRUE(a.scores && a.alignments && a.output_ids && a.input_ids && a.verify && a.quiet);
  EXPECT_EQ(a.forced_logits, "out.bin");
  EXPECT_EQ(a.texts, (std::vector<std::string>{"Hello .", "-", "-3 degrees"}));
}

TEST(TranslateArgs, Rejects) {
  TranslateArgs a;
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {}, &a), "-m MODEL is required");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"text"}, &a), "-m MODEL is required");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m"}, &a), "-m needs a value");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", ""}, &a), "-m must not be empty");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", "m", "--beam", "0"}, &a), "--beam must be an integer in [1, 64], got '0'");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", "m", "--beam", "65"}, &a), "[1, 64]");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", "m", "--beam", "four"}, &a), "got 'four'");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", "m", "--beam"}, &a), "--beam needs a value");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", "m", "--batch", "1025"}, &a), "--batch must be an integer in [1, 1024]");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", "m", "--threads", "-1"}, &a), "--threads");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", "m", "--max-length", "0"}, &a), "--max-length");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", "m", "--max-input-bytes", "16777217"}, &a), "--max-input-bytes");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", "m", "--length-penalty", "nan"}, &a), "--length-penalty must be a number");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", "m", "--max-length-ratio", "-inf"}, &a), "--max-length-ratio");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", "m", "--forced-logits"}, &a), "--forced-logits needs a value");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", "m", "--beam", "2", "--n-best", "3"}, &a),
               "--n-best (3) cannot exceed --beam (2)");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", "m", "--nbest", "3"}, &a), "unknown option '--nbest'");
  EXPECT_ERROR(ParseWith(ParseTranslateArgs, {"-m", "m", "-5 dollars"}, &a), "unknown option '-5 dollars'");
  EXPECT_EQ(ParseWith(ParseTranslateArgs, {"-m", "m", "--help"}, &a).kind, Kind::kHelp);
}

TEST(TranslateArgs, LimitsFollowTheOptions) {
  TranslateArgs a;
  ASSERT_TRUE(ParseWith(ParseTranslateArgs, {"-m", "m", "--beam", "3", "--batch", "5", "--threads", "2", "--max-length",
                                       "300", "--max-source-tokens", "400"},
                  &a)
                  .ok());
  ModelConfig c;
  c.max_positions = 256;
  c.positions = mtlite::PositionKind::kSinusoidMarian;  // computed sinusoid: no cap
  TranslatorLimits l = TranslationLimits(a, c);
  EXPECT_EQ(l.max_batch, 5);
  EXPECT_EQ(l.max_beam, 3);
  EXPECT_EQ(l.max_n_best, 1);
  EXPECT_EQ(l.num_threads, 2);
  EXPECT_EQ(l.max_target_tokens, 300);
  EXPECT_EQ(l.max_source_tokens, 400);
  c.positions = mtlite::PositionKind::kTable;  // a stored table has max_positions rows
  l = TranslationLimits(a, c);
  EXPECT_EQ(l.max_target_tokens, 256);
  EXPECT_EQ(l.max_source_tokens, 256);
}

// ---- JSON writer ----------------------------------------------------------------------------

// Lines come back as std::getline gave them: bytes unchanged (NUL included), a last line without
// '\n' counted, nothing after a final '\n'; ReadTextLine also drops one '\r' before the '\n'.
TEST(LineInput, ReadsLinesLikeGetline) {
  const std::string data("one\r\n\ntwo\0three\r\r\nlast", 22);
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(data.data(), 1, data.size(), f), data.size());
  std::rewind(f);
  std::vector<std::string> raw, text;
  std::string line;
  while (ReadLine(f, &line)) raw.push_back(line);
  EXPECT_EQ(raw, (std::vector<std::string>{"one\r", "", std::string("two\0three\r\r", 11), "last"}));
  std::rewind(f);
  while (ReadTextLine(f, &line)) text.push_back(line);
  EXPECT_EQ(text, (std::vector<std::string>{"one", "", std::string("two\0three\r", 10), "last"}));
  std::fclose(f);

  std::FILE* g = std::tmpfile();
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(ReadLine(g, &line));  // empty input: no line
  EXPECT_EQ(std::fputs("x\n", g), 1);
  std::rewind(g);
  EXPECT_TRUE(ReadLine(g, &line));
  EXPECT_EQ(line, "x");
  EXPECT_FALSE(ReadLine(g, &line));  // nothing after the final '\n'
  EXPECT_TRUE(line.empty());
  std::fclose(g);
}

TEST(JsonWriter, MultilineAndInlineContainers) {
  JsonWriter w;
  w.BeginObject().Key("file").String("a\"b\\c\n\x01").Key("n").Uint(18446744073709551615ull).Key("i").Int(-3);
  w.Key("x").Fixed(1.23456, 3).Key("nan").Fixed(std::nan(""), 2).Key("ok").Bool(true).Key("none").Null();
  w.Key("inline").BeginObject(JsonWriter::kInline).Key("a").Int(1).Key("b").BeginArray(JsonWriter::kInline);
  w.Int(1).Int(2).EndArray().EndObject();
  w.Key("rows").BeginArray().BeginObject(JsonWriter::kInline).Key("k").Raw("[1]").EndObject();
  w.BeginObject(JsonWriter::kInline).EndObject().EndArray();
  w.Key("empty").BeginArray().EndArray().EndObject();
  EXPECT_EQ(w.str(),
            "{\n"
            "  \"file\": \"a\\\"b\\\\c\\u000a\\u0001\",\n"
            "  \"n\": 18446744073709551615,\n"
            "  \"i\": -3,\n"
            "  \"x\": 1.235,\n"
            "  \"nan\": null,\n"
            "  \"ok\": true,\n"
            "  \"none\": null,\n"
            "  \"inline\": {\"a\": 1, \"b\": [1, 2]},\n"
            "  \"rows\": [\n"
            "    {\"k\": [1]},\n"
            "    {}\n"
            "  ],\n"
            "  \"empty\": []\n"
            "}");
}

TEST(JsonWriter, QuotesUtf8Unchanged) {
  EXPECT_EQ(JsonQuote("Fahrrad fährt"), "\"Fahrrad fährt\"");
  EXPECT_EQ(JsonQuote(""), "\"\"");
  JsonWriter w;
  EXPECT_EQ(w.Fixed(1e300, 1).str().size(), 303u);  // long numbers are not cut
}

}  // namespace
}  // namespace cli
}  // namespace mtlite
