// A small command-line parser for the mtlite commands and tools: typed options with ranges,
// positionals, cross-option checks and a --help text generated from the option list. It never
// exits the process and does no I/O: problems come back as a message in a ParseResult, which
// the command prints with PrintParseResult.
//
//   Args a;                                   // defaults live in the struct
//   ArgParser p("mtlite info", "Size profile and config of a model file.");
//   p.Positional("MODEL", &a.path, "the .mtlite file");
//   p.Flag("--json", &a.json, "print JSON");
//   p.Int("--beam", "N", 1, 64, &a.beam, "beam size");
//   ParseResult r = p.Parse(argc, argv);      // argv[0] is the command name
//   if (!r.ok()) return PrintParseResult(r, "mtlite info");
//
// Syntax: `--name VALUE` or `--name=VALUE` (the value is taken verbatim, even when it starts
// with '-'); `-h`/`--help` anywhere asks for the help text; `--` ends the options; `-` alone
// is a positional. The first problem ends the parse.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mtlite {
namespace cli {

struct ParseResult {
  enum class Kind { kOk, kHelp, kError };
  Kind kind = Kind::kOk;
  std::string text;   // kHelp: the help text; kError: the message (never empty)
  std::string usage;  // kError: the usage line

  bool ok() const { return kind == Kind::kOk; }
  static ParseResult Ok() { return {}; }
  static ParseResult Help(std::string help) { return {Kind::kHelp, std::move(help), {}}; }
  static ParseResult Error(std::string message, std::string usage) {
    return {Kind::kError, message.empty() ? "invalid arguments" : std::move(message), std::move(usage)};
  }
};

// Prints a result that is not ok (help to stdout; "<program>: <message>" and the usage to
// stderr) and returns the process exit code: 0 for help, 2 for an error (0 for kOk).
int PrintParseResult(const ParseResult& r, const std::string& program);

class ArgParser {
 public:
  // `program` names the command in the usage line ("mtlite info"); `summary` is printed
  // under it by --help (may hold several lines).
  ArgParser(std::string program, std::string summary);

  // Options. `names`: the spellings, comma-separated, e.g. "-m,--model" or "--beam"; each must
  // start with '-'. Values are stored through the pointer when the option is given; the value
  // the pointer holds now is shown as the default in --help.
  ArgParser& Flag(std::string_view names, bool* out, std::string help);
  ArgParser& Int(std::string_view names, std::string metavar, int lo, int hi, int* out, std::string help);
  // A finite number in [lo, hi] (the whole finite range by default).
  ArgParser& Float(std::string_view names, std::string metavar, float* out, std::string help);
  ArgParser& Float(std::string_view names, std::string metavar, float lo, float hi, float* out, std::string help);
  ArgParser& String(std::string_view names, std::string metavar, std::string* out, std::string help);  // non-empty
  ArgParser& Choice(std::string_view names, std::vector<std::string> choices, std::string* out, std::string help);
  // A value checked and stored by `parse`, which returns "" when it accepts the value, else the
  // rest of a message that starts with the option's name (e.g. "expects B,S (e.g. 1,2)").
  ArgParser& Custom(std::string_view names, std::string metavar, std::function<std::string(const std::string&)> parse,
                    std::string help);
  // Marks the option added last as required.
  ArgParser& Required();
  // The last option added sets *given to true when the command line gives it (a default that
  // comes from elsewhere, e.g. the model's, applies only when it does not).
  ArgParser& Given(bool* given);

  // Positionals, filled in the order they are declared; then Rest takes all remaining ones.
  // A single positional must not be empty.
  ArgParser& Positional(std::string metavar, std::string* out, std::string help, bool required = true);
  ArgParser& Rest(std::string metavar, std::vector<std::string>* out, std::string help);

  // Run in order after a successful parse (constraints between options): "" or an error message.
  ArgParser& Check(std::function<std::string()> check);

  ParseResult Parse(int argc, const char* const* argv) const;
  std::string Usage() const;  // "usage: mtlite info [options] MODEL"
  std::string Help() const;   // the usage line, the summary and one line per option

 private:
  enum class Type { kFlag, kInt, kFloat, kString, kChoice, kCustom };
  struct Option {
    std::vector<std::string> names;
    Type type = Type::kFlag;
    std::string metavar, help, default_text;
    bool required = false;
    bool* given = nullptr;
    bool* flag = nullptr;
    int* int_out = nullptr;
    int int_lo = 0, int_hi = 0;
    float* float_out = nullptr;
    float float_lo = 0, float_hi = 0;
    std::string* string_out = nullptr;
    std::vector<std::string> choices;
    std::function<std::string(const std::string&)> custom;
  };
  struct PositionalArg {
    std::string metavar, help;
    std::string* out = nullptr;
    bool required = true;
  };

  Option& Add(std::string_view names, Type type, std::string metavar, std::string help);
  const Option* FindOption(std::string_view name) const;
  std::string SetValue(const Option& o, const std::string& name, const std::string& value) const;
  static std::string Spelling(const Option& o);  // "-m, --model MODEL"

  std::string program_, summary_;
  std::vector<Option> options_;
  std::vector<PositionalArg> positionals_;
  PositionalArg rest_;
  std::vector<std::string>* rest_out_ = nullptr;
  std::vector<std::function<std::string()>> checks_;
};

// Strict integer parsing shared with comma-separated option values: decimal (leading spaces
// and a sign allowed, as strtol), no trailing characters, within [lo, hi].
bool ParseInt(const std::string& s, int lo, int hi, int* out);

}  // namespace cli
}  // namespace mtlite
