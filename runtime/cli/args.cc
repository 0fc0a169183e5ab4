#include "args.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace mtlite {
namespace cli {
namespace {

constexpr float kFloatMax = std::numeric_limits<float>::max();
constexpr size_t kHelpColumn = 30;  // option spellings are padded to this width in --help

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

std::string FloatText(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", double(v));
  return buf;
}

bool ParseFloat(const std::string& s, float lo, float hi, float* out) {
  const char* p = s.c_str();
  char* end = nullptr;
  const float v = std::strtof(p, &end);
  if (s.empty() || *end || !std::isfinite(v) || v < lo || v > hi) return false;
  *out = v;
  return true;
}

}  // namespace

bool ParseInt(const std::string& s, int lo, int hi, int* out) {
  const char* p = s.c_str();
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(p, &end, 10);
  if (s.empty() || end == p || *end || errno == ERANGE || v < lo || v > hi) return false;
  *out = int(v);
  return true;
}

int PrintParseResult(const ParseResult& r, const std::string& program) {
  switch (r.kind) {
    case ParseResult::Kind::kOk: return 0;
    case ParseResult::Kind::kHelp:
      std::fputs(r.text.c_str(), stdout);
      return 0;
    case ParseResult::Kind::kError:
      std::fprintf(stderr, "%s: %s\n%s\n(%s --help lists the options)\n", program.c_str(), r.text.c_str(),
                   r.usage.c_str(), program.c_str());
      return 2;
  }
  return 2;
}

ArgParser::ArgParser(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

ArgParser::Option& ArgParser::Add(std::string_view names, Type type, std::string metavar, std::string help) {
  Option o;
  while (!names.empty()) {
    const size_t comma = names.find(',');
    std::string_view n = names.substr(0, comma);
    while (!n.empty() && n.front() == ' ') n.remove_prefix(1);
    while (!n.empty() && n.back() == ' ') n.remove_suffix(1);
    if (!n.empty()) o.names.emplace_back(n);
    names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
  }
  o.type = type;
  o.metavar = std::move(metavar);
  o.help = std::move(help);
  options_.push_back(std::move(o));
  return options_.back();
}

ArgParser& ArgParser::Flag(std::string_view names, bool* out, std::string help) {
  Add(names, Type::kFlag, "", std::move(help)).flag = out;
  return *this;
}

ArgParser& ArgParser::Int(std::string_view names, std::string metavar, int lo, int hi, int* out, std::string help) {
  Option& o = Add(names, Type::kInt, std::move(metavar), std::move(help));
  o.int_out = out;
  o.int_lo = lo;
  o.int_hi = hi;
  o.default_text = std::to_string(lo) + ".." + std::to_string(hi) + ", default " + std::to_string(*out);
  return *this;
}

ArgParser& ArgParser::Float(std::string_view names, std::string metavar, float* out, std::string help) {
  return Float(names, std::move(metavar), -kFloatMax, kFloatMax, out, std::move(help));
}

ArgParser& ArgParser::Float(std::string_view names, std::string metavar, float lo, float hi, float* out,
                            std::string help) {
  Option& o = Add(names, Type::kFloat, std::move(metavar), std::move(help));
  o.float_out = out;
  o.float_lo = lo;
  o.float_hi = hi;
  o.default_text = "default " + FloatText(*out);
  if (lo > -kFloatMax || hi < kFloatMax) o.default_text = FloatText(lo) + ".." + FloatText(hi) + ", " + o.default_text;
  return *this;
}

ArgParser& ArgParser::String(std::string_view names, std::string metavar, std::string* out, std::string help) {
  Option& o = Add(names, Type::kString, std::move(metavar), std::move(help));
  o.string_out = out;
  if (!out->empty()) o.default_text = "default " + *out;
  return *this;
}

ArgParser& ArgParser::Choice(std::string_view names, std::vector<std::string> choices, std::string* out,
                             std::string help) {
  std::string metavar;
  for (const std::string& c : choices) metavar += (metavar.empty() ? "" : "|") + c;
  Option& o = Add(names, Type::kChoice, std::move(metavar), std::move(help));
  o.string_out = out;
  o.choices = std::move(choices);
  if (!out->empty()) o.default_text = "default " + *out;
  return *this;
}

ArgParser& ArgParser::Custom(std::string_view names, std::string metavar,
                             std::function<std::string(const std::string&)> parse, std::string help) {
  Add(names, Type::kCustom, std::move(metavar), std::move(help)).custom = std::move(parse);
  return *this;
}

ArgParser& ArgParser::Required() {
  if (!options_.empty()) {
    Option& o = options_.back();
    o.required = true;
    o.default_text = o.type == Type::kInt ? std::to_string(o.int_lo) + ".." + std::to_string(o.int_hi) + ", required"
                                          : "required";
  }
  return *this;
}

ArgParser& ArgParser::Given(bool* given) {
  if (!options_.empty()) options_.back().given = given;
  return *this;
}

ArgParser& ArgParser::Positional(std::string metavar, std::string* out, std::string help, bool required) {
  positionals_.push_back({std::move(metavar), std::move(help), out, required});
  return *this;
}

ArgParser& ArgParser::Rest(std::string metavar, std::vector<std::string>* out, std::string help) {
  rest_ = {std::move(metavar), std::move(help), nullptr, false};
  rest_out_ = out;
  return *this;
}

ArgParser& ArgParser::Check(std::function<std::string()> check) {
  checks_.push_back(std::move(check));
  return *this;
}

const ArgParser::Option* ArgParser::FindOption(std::string_view name) const {
  for (const Option& o : options_) {
    for (const std::string& n : o.names) {
      if (n == name) return &o;
    }
  }
  return nullptr;
}

std::string ArgParser::SetValue(const Option& o, const std::string& name, const std::string& value) const {
  switch (o.type) {
    case Type::kFlag: return name + " takes no value";
    case Type::kInt:
      if (ParseInt(value, o.int_lo, o.int_hi, o.int_out)) return "";
      return name + " must be an integer in [" + std::to_string(o.int_lo) + ", " + std::to_string(o.int_hi) +
             "], got " + Quoted(value);
    case Type::kFloat:
      if (ParseFloat(value, o.float_lo, o.float_hi, o.float_out)) return "";
      if (o.float_lo > -kFloatMax || o.float_hi < kFloatMax) {
        return name + " must be a number in [" + FloatText(o.float_lo) + ", " + FloatText(o.float_hi) + "], got " +
               Quoted(value);
      }
      return name + " must be a number, got " + Quoted(value);
    case Type::kString:
      if (value.empty()) return name + " must not be empty";
      *o.string_out = value;
      return "";
    case Type::kChoice:
      for (const std::string& c : o.choices) {
        if (value == c) {
          *o.string_out = value;
          return "";
        }
      }
      return name + " must be one of " + o.metavar + ", got " + Quoted(value);
    case Type::kCustom: {
      const std::string problem = o.custom(value);
      return problem.empty() ? "" : name + " " + problem;
    }
  }
  return name + ": unknown option type";
}

ParseResult ArgParser::Parse(int argc, const char* const* argv) const {
  auto error = [&](std::string message) { return ParseResult::Error(std::move(message), Usage()); };
  std::vector<bool> seen(options_.size(), false);
  size_t next_positional = 0;
  bool options_ended = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i] ? argv[i] : "";
    const bool is_option = !options_ended && arg.size() > 1 && arg[0] == '-';
    if (is_option && arg == "--") {
      options_ended = true;
      continue;
    }
    if (is_option) {
      std::string name = arg, value;
      bool has_value = false;
      const size_t eq = arg.find('=');
      if (arg.compare(0, 2, "--") == 0 && eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
        has_value = true;
      }
      if (name == "-h" || name == "--help") return ParseResult::Help(Help());
      const Option* o = FindOption(name);
      if (!o) return error("unknown option " + Quoted(name));
      seen[size_t(o - options_.data())] = true;
      if (o->given) *o->given = true;
      if (o->type == Type::kFlag) {
        if (has_value) return error(name + " takes no value");
        *o->flag = true;
        continue;
      }
      if (!has_value) {
        if (i + 1 >= argc || !argv[i + 1]) return error(name + " needs a value (" + o->metavar + ")");
        value = argv[++i];
      }
      const std::string problem = SetValue(*o, name, value);
      if (!problem.empty()) return error(problem);
      continue;
    }
    if (next_positional < positionals_.size()) {
      const PositionalArg& p = positionals_[next_positional++];
      if (arg.empty()) return error(p.metavar + " must not be empty");
      *p.out = arg;
    } else if (rest_out_) {
      rest_out_->push_back(arg);
    } else {
      return error("unexpected argument " + Quoted(arg));
    }
  }
  for (size_t i = 0; i < options_.size(); ++i) {
    if (options_[i].required && !seen[i]) return error(options_[i].names.front() + " " + options_[i].metavar + " is required");
  }
  for (size_t i = next_positional; i < positionals_.size(); ++i) {
    if (positionals_[i].required) return error("missing " + positionals_[i].metavar + " (" + positionals_[i].help + ")");
  }
  for (const auto& check : checks_) {
    std::string problem = check();
    if (!problem.empty()) return error(std::move(problem));
  }
  return ParseResult::Ok();
}

std::string ArgParser::Usage() const {
  std::string u = "usage: " + program_;
  if (!options_.empty()) u += " [options]";
  for (const Option& o : options_) {
    if (o.required) u += " " + o.names.front() + " " + o.metavar;
  }
  for (const PositionalArg& p : positionals_) u += p.required ? " " + p.metavar : " [" + p.metavar + "]";
  if (rest_out_) u += " [" + rest_.metavar + " ...]";
  return u;
}

std::string ArgParser::Spelling(const Option& o) {
  std::string s;
  for (const std::string& n : o.names) s += (s.empty() ? "" : ", ") + n;
  return o.metavar.empty() ? s : s + " " + o.metavar;
}

std::string ArgParser::Help() const {
  auto line = [](const std::string& left, const std::string& help) {
    std::string l = "  " + left;
    l += l.size() + 1 < kHelpColumn ? std::string(kHelpColumn - l.size(), ' ') : "\n" + std::string(kHelpColumn, ' ');
    return l + help + "\n";
  };
  std::string h = Usage() + "\n";
  if (!summary_.empty()) h += "\n" + summary_ + "\n";
  if (!positionals_.empty() || rest_out_) {
    h += "\narguments:\n";
    for (const PositionalArg& p : positionals_) h += line(p.metavar, p.help);
    if (rest_out_) h += line(rest_.metavar + " ...", rest_.help);
  }
  h += "\noptions:\n";
  for (const Option& o : options_) {
    h += line(Spelling(o), o.default_text.empty() ? o.help : o.help + " (" + o.default_text + ")");
  }
  h += line("-h, --help", "print this help");
  return h;
}

}  // namespace cli
}  // namespace mtlite
