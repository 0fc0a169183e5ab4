// libFuzzer target: the argument parsers of every `mtlite` command on arbitrary argument
// vectors. Input: byte 0 picks the command (0 convert, 1 info, 2 translate, 4 profile,
// 5 attention, else the generic ArgParser with every option type), the rest is split at NUL
// bytes into arguments. The parsers must not
// crash, exit, do I/O or load anything; an error always carries a message and the usage line,
// --help returns the help text, and a successful parse leaves values inside their ranges.
// Seeds: tests/fuzz/seeds/cli_args/.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"

namespace {

using mtlite::cli::ParseResult;

void Require(bool ok) {
  if (!ok) std::abort();  // a fuzz finding
}

void CheckResult(const ParseResult& r) {
  switch (r.kind) {
    case ParseResult::Kind::kOk: break;
    case ParseResult::Kind::kHelp: Require(r.text.rfind("usage: ", 0) == 0); break;
    case ParseResult::Kind::kError: Require(!r.text.empty() && r.usage.rfind("usage: ", 0) == 0); break;
  }
}

// Every option type, required options, positionals, rest and a check.
ParseResult ParseGeneric(int argc, const char* const* argv) {
  bool flag = false;
  int n = 5;
  float x = 0, unit = 0.5f;
  std::string name, mode = "a", file, custom;
  std::vector<std::string> rest;
  mtlite::cli::ArgParser p("generic", "every option type");
  p.Positional("FILE", &file, "a file", false).Rest("WORD", &rest, "words");
  p.Flag("-f,--flag", &flag, "flag").Int("-n,--number", "N", -3, 1000, &n, "int");
  p.Float("--x", "F", &x, "finite").Float("--unit", "F", 0.0f, 1.0f, &unit, "unit interval");
  p.String("--name", "NAME", &name, "name").Required();
  p.Choice("--mode", {"a", "bb", ""}, &mode, "mode");
  p.Custom("--custom", "V", [&custom](const std::string& v) { return v.size() % 2 ? "has odd length" : (custom = v, ""); },
           "even length");
  p.Check([&] { return flag && n == 0 ? "flag with n = 0" : ""; });
  const ParseResult r = p.Parse(argc, argv);
  (void)p.Help();
  if (r.ok()) {
    Require(n >= -3 && n <= 1000 && std::isfinite(x) && unit >= 0 && unit <= 1 && !name.empty());
    Require(custom.size() % 2 == 0 && !(flag && n == 0));
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 4096) return 0;
  std::vector<std::string> args = {"cmd"};
  std::string current;
  for (size_t i = 1; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current += char(data[i]);
    }
  }
  if (size > 1) args.push_back(current);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  const int argc = int(argv.size());

  switch (data[0] % 6) {
    case 0: {
      mtlite::cli::ConvertArgs a;
      const ParseResult r = mtlite::cli::ParseConvertArgs(argc, argv.data(), &a);
      CheckResult(r);
      if (r.ok()) Require(!a.input.empty() && !a.output.empty() &&
                          (a.quantize == "int8" || a.quantize == "fp16" || a.quantize == "fp32"));
      break;
    }
    case 1: {
      mtlite::cli::InfoArgs a;
      const ParseResult r = mtlite::cli::ParseInfoArgs(argc, argv.data(), &a);
      CheckResult(r);
      if (r.ok()) {
        Require(!a.path.empty());
        const mtlite::TranslatorLimits& l = a.limits;
        Require(l.max_batch >= 1 && l.max_source_tokens >= 1 && l.max_target_tokens >= 1 && l.max_beam >= 1 &&
                l.max_n_best <= l.max_beam);
      }
      break;
    }
    case 2: {
      mtlite::cli::TranslateArgs a;
      const ParseResult r = mtlite::cli::ParseTranslateArgs(argc, argv.data(), &a);
      CheckResult(r);
      if (r.ok()) {
        // n_best is checked against the model's default beam when --beam is not given (translate_cmd.cc)
        Require(!a.model.empty() && a.beam >= 1 && a.beam <= 64 && a.n_best >= 1 && (!a.beam_given || a.n_best <= a.beam));
        Require(a.batch >= 1 && a.batch <= 1024 && a.threads >= 1 && a.max_length >= 1 && a.max_source_tokens >= 1);
        Require(a.max_input_bytes >= 1 && std::isfinite(a.length_penalty) && std::isfinite(a.max_length_ratio));
        mtlite::ModelConfig c;
        c.positions = mtlite::PositionKind::kTable;
        c.max_positions = 16;
        const mtlite::TranslatorLimits l = mtlite::cli::TranslationLimits(a, c);
        Require(l.max_target_tokens <= 16 && l.max_source_tokens <= 16 && l.max_batch == a.batch);
      }
      break;
    }
    case 4: {
      mtlite::cli::ProfileArgs a;
      const ParseResult r = mtlite::cli::ParseProfileArgs(argc, argv.data(), &a);
      CheckResult(r);
      if (r.ok()) {
        Require(!a.model.empty() && a.beam >= 1 && a.beam <= 64 && a.batch >= 1 && a.batch <= 1024);
        Require(a.threads >= 1 && a.max_length >= 1 && a.repeat >= 1 && a.roofline_mib >= 1);
        Require(a.input.empty() || a.texts.empty());
      }
      break;
    }
    case 5: {
      mtlite::cli::AttentionArgs a;
      const ParseResult r = mtlite::cli::ParseAttentionArgs(argc, argv.data(), &a);
      CheckResult(r);
      if (r.ok()) {
        Require(!a.model.empty() && !a.texts.empty() && a.sentence >= 0 && size_t(a.sentence) < a.texts.size());
        Require(a.batch == int(a.texts.size()) && a.layer >= -1 && a.beam >= 1 && (!a.output.empty() || !a.json.empty()));
      }
      break;
    }
    default: CheckResult(ParseGeneric(argc, argv.data())); break;
  }
  return 0;
}
