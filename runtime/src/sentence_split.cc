// Sentence splitting: see sentence_split.h for the rules. The abbreviation tables below are the
// project's own; each is sorted by bytes (checked at compile time) and searched by bisection.
#include "sentence_split.h"

#include <cstdint>
#include <iterator>
#include <string>

namespace mtlite {
namespace text {

namespace {

// ---- tables ----------------------------------------------------------------------------------

enum AbbrevClass : uint8_t {
  kAlways = 0,   // never a boundary after it ("Dr.", "z. B.")
  kNumeric = 1,  // no boundary before a digit ("No. 5"), a boundary before an uppercase word
  kWeak = 2,     // a boundary before an uppercase word or digit ("etc. The")
};

struct Abbrev {
  std::string_view key;  // the parts without their final '.', joined by '.' without spaces
  AbbrevClass cls;
};

template <size_t N>
constexpr bool SortedUnique(const Abbrev (&a)[N]) {
  for (size_t i = 1; i < N; ++i)
    if (!(a[i - 1].key < a[i].key)) return false;
  return true;
}
template <size_t N>
constexpr bool SortedUnique(const std::string_view (&a)[N]) {
  for (size_t i = 1; i < N; ++i)
    if (!(a[i - 1] < a[i])) return false;
  return true;
}

// Applies to every language (after the language's own table).
constexpr Abbrev kGenericAbbrevs[] = {
    {"Dr", kAlways},   {"Fig", kNumeric}, {"Jr", kAlways},   {"Mr", kAlways},   {"Mrs", kAlways},
    {"Ms", kAlways},   {"No", kNumeric},  {"Nr", kAlways},   {"Ph.D", kWeak},   {"Prof", kAlways},
    {"Sr", kAlways},   {"St", kAlways},   {"Vol", kNumeric}, {"a.m", kWeak},    {"approx", kAlways},
    {"art", kNumeric}, {"ca", kAlways},   {"cf", kAlways},   {"e.g", kAlways},  {"etc", kWeak},
    {"fig", kNumeric}, {"i.e", kAlways},  {"no", kNumeric},  {"nr", kNumeric},  {"p.m", kWeak},
    {"pp", kNumeric},  {"vol", kNumeric}, {"vs", kAlways},
};

constexpr Abbrev kEnglishAbbrevs[] = {
    {"Adm", kAlways},   {"Apr", kAlways},  {"Art", kNumeric}, {"Aug", kAlways},   {"Ave", kWeak},
    {"Bros", kWeak},    {"Capt", kAlways}, {"Ch", kNumeric},  {"Co", kWeak},      {"Col", kAlways},
    {"Corp", kWeak},    {"Dec", kAlways},  {"Dept", kAlways}, {"Drs", kAlways},   {"Eq", kNumeric},
    {"Feb", kAlways},   {"Gen", kAlways},  {"Gov", kAlways},  {"Hon", kAlways},   {"Inc", kWeak},
    {"Jan", kAlways},   {"Jul", kAlways},  {"Jun", kAlways},  {"Lt", kAlways},    {"Ltd", kWeak},
    {"Maj", kAlways},   {"Messrs", kAlways}, {"Mt", kAlways}, {"Nos", kNumeric},  {"Nov", kAlways},
    {"Oct", kAlways},   {"Rep", kAlways},  {"Rev", kAlways},  {"Sec", kNumeric},  {"Sen", kAlways},
    {"Sep", kAlways},   {"Sept", kAlways}, {"Sgt", kAlways},  {"Supt", kAlways},  {"U.S", kAlways},
    {"al", kWeak},      {"ch", kNumeric},  {"eq", kNumeric},  {"est", kAlways},   {"para", kNumeric},
    {"sec", kNumeric},  {"viz", kAlways},
};

constexpr Abbrev kGermanAbbrevs[] = {
    {"Abb", kNumeric}, {"Abs", kNumeric}, {"Abt", kAlways},  {"Anm", kAlways},  {"Apr", kAlways},
    {"Aug", kAlways},  {"Bd", kNumeric},  {"Bsp", kAlways},  {"Dez", kAlways},  {"Dipl", kAlways},
    {"Dir", kAlways},  {"Fa", kAlways},   {"Feb", kAlways},  {"Fr", kAlways},   {"Frl", kAlways},
    {"Hbf", kAlways},  {"Hr", kAlways},   {"Hrn", kAlways},  {"Hrsg", kAlways}, {"Ing", kAlways},
    {"Jan", kAlways},  {"Jh", kAlways},   {"Jhd", kAlways},  {"Jul", kAlways},  {"Jun", kAlways},
    {"Kap", kNumeric}, {"Mag", kAlways},  {"Min", kAlways},  {"Mio", kAlways},  {"Mrd", kAlways},
    {"Mär", kAlways},  {"Nov", kAlways},  {"Okt", kAlways},  {"Pl", kAlways},   {"Sep", kAlways},
    {"Sept", kAlways}, {"Std", kAlways},  {"Str", kAlways},  {"Tel", kAlways},  {"Tsd", kAlways},
    {"Univ", kAlways}, {"Ziff", kNumeric}, {"allg", kAlways}, {"bzw", kAlways}, {"d.h", kAlways},
    {"dgl", kAlways},  {"evtl", kAlways}, {"geb", kAlways},  {"gegr", kAlways}, {"ggf", kAlways},
    {"i.A", kAlways},  {"i.d.R", kAlways}, {"inkl", kAlways}, {"jun", kAlways}, {"kath", kAlways},
    {"lt", kAlways},   {"o.ä", kAlways},  {"s.o", kAlways},  {"s.u", kAlways},  {"sog", kAlways},
    {"u.a", kAlways},  {"u.v.m", kWeak},  {"u.ä", kAlways},  {"usf", kWeak},    {"usw", kWeak},
    {"v.a", kAlways},  {"vgl", kAlways},  {"z.B", kAlways},  {"z.T", kAlways},  {"z.Zt", kAlways},
    {"zzgl", kAlways},
};

constexpr Abbrev kFrenchAbbrevs[] = {
    {"Cie", kWeak},    {"MM", kAlways},    {"Me", kAlways},   {"Mlle", kAlways}, {"Mlles", kAlways},
    {"Mme", kAlways},  {"Mmes", kAlways},  {"Pr", kAlways},   {"Ste", kAlways},  {"av", kAlways},
    {"avr", kAlways},  {"bd", kAlways},    {"c.-à-d", kAlways}, {"chap", kNumeric}, {"déc", kAlways}, {"env", kAlways},
    {"févr", kAlways}, {"janv", kAlways},  {"juil", kAlways}, {"nov", kAlways},  {"oct", kAlways},
    {"p.ex", kAlways}, {"sept", kAlways},
};

constexpr Abbrev kSpanishAbbrevs[] = {
    {"Av", kAlways},    {"Avda", kAlways},  {"Dra", kAlways},  {"Dña", kAlways},  {"Excma", kAlways}, {"Excmo", kAlways},
    {"Ilmo", kAlways},  {"Ing", kAlways},   {"Lic", kAlways},  {"Sra", kAlways},   {"Sres", kAlways},
    {"Srta", kAlways},  {"Sta", kAlways},   {"Sto", kAlways},  {"Ud", kAlways},    {"Uds", kAlways},
    {"Vd", kAlways},    {"Vds", kAlways},   {"abr", kAlways},  {"ago", kAlways},   {"aprox", kAlways},
    {"cap", kNumeric},  {"dic", kAlways},   {"ene", kAlways},  {"núm", kNumeric},  {"p.ej", kAlways},
    {"pág", kNumeric},  {"págs", kNumeric},
};

constexpr Abbrev kItalianAbbrevs[] = {
    {"Arch", kAlways},     {"Avv", kAlways},  {"Dott", kAlways},     {"Dott.ssa", kAlways},
    {"Geom", kAlways},     {"Ing", kAlways},  {"Prof.ssa", kAlways}, {"Rag", kAlways},
    {"S.p.A", kWeak},      {"Sig", kAlways},  {"Sig.na", kAlways},   {"Sig.ra", kAlways},
    {"Sigg", kAlways},     {"cap", kNumeric}, {"ecc", kWeak},        {"es", kAlways},
    {"pag", kNumeric},
};

constexpr Abbrev kDutchAbbrevs[] = {
    {"Dhr", kAlways},  {"Mevr", kAlways}, {"apr", kAlways},  {"art", kNumeric}, {"aug", kAlways},
    {"bijv", kAlways}, {"blz", kNumeric}, {"d.w.z", kAlways}, {"dec", kAlways}, {"dhr", kAlways},
    {"dr", kAlways},   {"drs", kAlways},  {"enz", kWeak},    {"evt", kAlways},  {"feb", kAlways},
    {"i.v.m", kAlways}, {"ing", kAlways}, {"ir", kAlways},   {"jan", kAlways},  {"jul", kAlways},
    {"jun", kAlways},  {"m.a.w", kAlways}, {"m.b.t", kAlways}, {"mevr", kAlways}, {"mr", kAlways},
    {"mrt", kAlways},  {"mw", kAlways},   {"nl", kAlways},   {"nov", kAlways},  {"okt", kAlways},
    {"prof", kAlways}, {"resp", kAlways}, {"sep", kAlways},  {"sept", kAlways}, {"t.o.v", kAlways},
    {"vnl", kAlways},
};

constexpr Abbrev kPortugueseAbbrevs[] = {
    {"Av", kAlways},   {"Dra", kAlways},   {"Exma", kAlways},  {"Exmo", kAlways}, {"Lda", kWeak},
    {"Ltda", kWeak},   {"Profa", kAlways}, {"S.A", kWeak},     {"Sra", kAlways},  {"Srta", kAlways},
    {"Sta", kAlways},  {"Sto", kAlways},   {"aprox", kAlways}, {"cap", kNumeric}, {"p.ex", kAlways},
    {"pág", kNumeric}, {"págs", kNumeric},
};

// Cyrillic keys sort after the ASCII ones (UTF-8 lead bytes >= 0xd0).
constexpr Abbrev kRussianAbbrevs[] = {
    {"акад", kAlways}, {"гг", kAlways},   {"др", kWeak},     {"им", kAlways},  {"млн", kWeak},
    {"млрд", kWeak},   {"напр", kAlways}, {"проф", kAlways}, {"рис", kNumeric}, {"руб", kWeak},
    {"см", kAlways},   {"стр", kNumeric}, {"т.д", kWeak},    {"т.е", kAlways}, {"т.к", kAlways},
    {"т.п", kWeak},    {"тыс", kWeak},    {"ул", kAlways},
};

// German ordinals: "<number>. <month>" and "<article/preposition> <number>. <noun>".
constexpr std::string_view kGermanMonths[] = {
    "April", "August", "Dez", "Dezember", "Feb", "Februar", "Jan", "Januar", "Juli", "Juni", "Jänner",
    "Mai", "November", "Nov", "Okt", "Oktober", "September", "Sept", "Sep", "März",
};
constexpr std::string_view kGermanOrdinalContext[] = {
    "ab", "am", "an", "auf", "bis", "beim", "dem", "den", "der", "des", "die", "das", "ein", "eine", "einem",
    "einen", "einer", "eines", "für", "ihr", "ihre", "ihrem", "ihren", "ihrer", "im", "ins", "jeden", "jedem",
    "jeder", "jedes", "nach", "sein", "seine", "seinem", "seinen", "seiner", "seit", "unser", "unsere",
    "unserem", "unseren", "unserer", "vom", "vor", "zum", "zur",
};

}  // namespace

struct SplitterLanguage {
  const char* name;
  const Abbrev* abbrevs;
  size_t n_abbrevs;
  const std::string_view* months;  // German-style ordinals ("1. Januar") when not null
  size_t n_months;
  const std::string_view* ordinal_context;
  size_t n_ordinal_context;
  const char* suffix = nullptr;  // words ending with it are abbreviations too ("Hauptstr.")
  size_t suffix_len = 0;
};

namespace {

template <size_t N>
constexpr size_t Count(const Abbrev (&)[N]) { return N; }

// The month and context lists are short and searched linearly; the abbreviation tables bisected.
static_assert(SortedUnique(kGenericAbbrevs), "kGenericAbbrevs must be sorted by bytes, without duplicates");
static_assert(SortedUnique(kEnglishAbbrevs), "kEnglishAbbrevs must be sorted");
static_assert(SortedUnique(kGermanAbbrevs), "kGermanAbbrevs must be sorted");
static_assert(SortedUnique(kFrenchAbbrevs), "kFrenchAbbrevs must be sorted");
static_assert(SortedUnique(kSpanishAbbrevs), "kSpanishAbbrevs must be sorted");
static_assert(SortedUnique(kItalianAbbrevs), "kItalianAbbrevs must be sorted");
static_assert(SortedUnique(kDutchAbbrevs), "kDutchAbbrevs must be sorted");
static_assert(SortedUnique(kPortugueseAbbrevs), "kPortugueseAbbrevs must be sorted");
static_assert(SortedUnique(kRussianAbbrevs), "kRussianAbbrevs must be sorted");

const SplitterLanguage kGeneric = {"generic", nullptr, 0, nullptr, 0, nullptr, 0};
const SplitterLanguage kEnglish = {"en", kEnglishAbbrevs, Count(kEnglishAbbrevs), nullptr, 0, nullptr, 0};
const SplitterLanguage kGerman = {"de",          kGermanAbbrevs,        Count(kGermanAbbrevs),
                                  kGermanMonths, std::size(kGermanMonths), kGermanOrdinalContext,
                                  std::size(kGermanOrdinalContext), "str", 3};
const SplitterLanguage kFrench = {"fr", kFrenchAbbrevs, Count(kFrenchAbbrevs), nullptr, 0, nullptr, 0};
const SplitterLanguage kSpanish = {"es", kSpanishAbbrevs, Count(kSpanishAbbrevs), nullptr, 0, nullptr, 0};
const SplitterLanguage kItalian = {"it", kItalianAbbrevs, Count(kItalianAbbrevs), nullptr, 0, nullptr, 0};
const SplitterLanguage kDutch = {"nl", kDutchAbbrevs, Count(kDutchAbbrevs), nullptr, 0, nullptr, 0};
const SplitterLanguage kPortuguese = {"pt", kPortugueseAbbrevs, Count(kPortugueseAbbrevs), nullptr, 0, nullptr, 0};
const SplitterLanguage kRussian = {"ru", kRussianAbbrevs, Count(kRussianAbbrevs), nullptr, 0, nullptr, 0};

struct CodeName {
  std::string_view code;
  const SplitterLanguage* lang;
};
// ISO 639-1 and 639-3 (both bibliographic and terminological) codes.
constexpr CodeName kCodes[] = {
    {"de", &kGerman},  {"deu", &kGerman},  {"dut", &kDutch},   {"en", &kEnglish},  {"eng", &kEnglish},
    {"es", &kSpanish}, {"fr", &kFrench},   {"fra", &kFrench},  {"fre", &kFrench},  {"ger", &kGerman},
    {"it", &kItalian}, {"ita", &kItalian}, {"nl", &kDutch},    {"nld", &kDutch},   {"por", &kPortuguese},
    {"pt", &kPortuguese}, {"ru", &kRussian}, {"rus", &kRussian}, {"spa", &kSpanish},
};

// ---- UTF-8 and character classes -------------------------------------------------------------

// The code point at s[i] (strict UTF-8: no overlong forms, surrogates or values past U+10FFFF);
// -1 with *len 1 for a byte that does not start a valid sequence.
int32_t Decode(const uint8_t* s, size_t n, size_t i, size_t* len) {
  const uint8_t c = s[i];
  *len = 1;
  if (c < 0x80) return c;
  auto cont = [&](size_t k, uint8_t lo, uint8_t hi) { return i + k < n && s[i + k] >= lo && s[i + k] <= hi; };
  if (c >= 0xc2 && c <= 0xdf) {
    if (!cont(1, 0x80, 0xbf)) return -1;
    *len = 2;
    return int32_t(c & 0x1f) << 6 | (s[i + 1] & 0x3f);
  }
  if (c >= 0xe0 && c <= 0xef) {
    if (!cont(1, c == 0xe0 ? 0xa0 : 0x80, c == 0xed ? 0x9f : 0xbf) || !cont(2, 0x80, 0xbf)) return -1;
    *len = 3;
    return int32_t(c & 0x0f) << 12 | int32_t(s[i + 1] & 0x3f) << 6 | (s[i + 2] & 0x3f);
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (!cont(1, c == 0xf0 ? 0x90 : 0x80, c == 0xf4 ? 0x8f : 0xbf) || !cont(2, 0x80, 0xbf) ||
        !cont(3, 0x80, 0xbf))
      return -1;
    *len = 4;
    return int32_t(c & 0x07) << 18 | int32_t(s[i + 1] & 0x3f) << 12 | int32_t(s[i + 2] & 0x3f) << 6 |
           (s[i + 3] & 0x3f);
  }
  return -1;
}

// The code point that ends at s[e] (e > lo), not reaching before lo; -1 with *len 1 when the
// bytes before e are not one valid sequence.
int32_t DecodeBefore(const uint8_t* s, size_t lo, size_t e, size_t* len) {
  size_t k = e - 1;
  while (k > lo && e - k < 4 && (s[k] & 0xc0) == 0x80) --k;
  size_t l = 0;
  const int32_t cp = Decode(s, e, k, &l);
  if (cp >= 0 && k + l == e) {
    *len = l;
    return cp;
  }
  *len = 1;
  return s[e - 1] < 0x80 ? int32_t(s[e - 1]) : -1;
}

bool IsUnicodeSpace(int32_t cp) {
  return cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

// Bytes of the whitespace character at s[i], 0 when it is not whitespace.
size_t SpaceLen(const uint8_t* s, size_t n, size_t i) {
  const uint8_t c = s[i];
  if (c < 0x80) return (c == ' ' || (c >= '\t' && c <= '\r')) ? 1 : 0;
  if (c != 0xc2 && c != 0xe1 && c != 0xe2 && c != 0xe3) return 0;
  size_t len = 0;
  const int32_t cp = Decode(s, n, i, &len);
  return IsUnicodeSpace(cp) ? len : 0;
}

bool IsUpper(int32_t c) {
  if (c < 0x80) return c >= 'A' && c <= 'Z';
  if (c >= 0xc0 && c <= 0xde) return c != 0xd7;
  if (c >= 0x100 && c <= 0x137) return c % 2 == 0;
  if (c >= 0x139 && c <= 0x148) return c % 2 == 1;
  if (c >= 0x14a && c <= 0x177) return c % 2 == 0;
  if (c == 0x178) return true;
  if (c >= 0x179 && c <= 0x17e) return c % 2 == 1;
  if (c == 0x386 || (c >= 0x388 && c <= 0x38f) || (c >= 0x391 && c <= 0x3ab)) return true;
  if (c >= 0x400 && c <= 0x42f) return true;
  if ((c >= 0x460 && c <= 0x481) || (c >= 0x48a && c <= 0x52f)) return c % 2 == 0;
  if (c >= 0x531 && c <= 0x556) return true;
  if (c >= 0x1e00 && c <= 0x1eff) return c % 2 == 0;
  return c >= 0xff21 && c <= 0xff3a;
}

bool IsLower(int32_t c) {
  if (c < 0x80) return c >= 'a' && c <= 'z';
  if (c == 0xaa || c == 0xb5 || c == 0xba) return true;
  if (c >= 0xdf && c <= 0xff) return c != 0xf7;
  if (c >= 0x100 && c <= 0x17f) return !IsUpper(c);
  if (c >= 0x180 && c <= 0x24f) return false;  // Latin Extended-B: counted as caseless below
  if (c >= 0x250 && c <= 0x2af) return true;    // IPA
  if (c == 0x390 || (c >= 0x3ac && c <= 0x3ce)) return true;
  if (c >= 0x430 && c <= 0x45f) return true;
  if ((c >= 0x460 && c <= 0x481) || (c >= 0x48a && c <= 0x52f)) return c % 2 == 1;
  if (c >= 0x561 && c <= 0x587) return true;
  if (c >= 0x1d00 && c <= 0x1dbf) return true;
  if (c >= 0x1e00 && c <= 0x1eff) return c % 2 == 1;
  return c >= 0xff41 && c <= 0xff5a;
}

bool IsDigit(int32_t c) {
  return (c >= '0' && c <= '9') || (c >= 0xff10 && c <= 0xff19) || (c >= 0x660 && c <= 0x669) ||
         (c >= 0x6f0 && c <= 0x6f9) || (c >= 0x966 && c <= 0x96f);
}

// Letters of scripts without case (and Latin Extended-B), which may start a sentence.
bool IsCaselessLetter(int32_t c) {
  if (c >= 0x180 && c <= 0x24f) return true;
  if (c < 0x5d0) return false;
  if (c >= 0x2000 && c <= 0x2e7f) return false;  // punctuation, symbols, arrows, box drawing, ...
  if (c >= 0x3000 && c <= 0x303f) return false;  // CJK symbols and punctuation
  if (c >= 0xfe10 && c <= 0xfe6f) return false;  // vertical forms, small forms
  if (c >= 0xff00 && c <= 0xff0f) return false;  // fullwidth punctuation
  if (c >= 0xff1a && c <= 0xff20) return false;
  if (c >= 0xff3b && c <= 0xff40) return false;
  if (c >= 0xff5b && c <= 0xff65) return false;
  if (c >= 0xfff0 && c <= 0xffff) return false;
  if (c >= 0x1f000 && c <= 0x1faff) return false;  // emoji and pictographs
  if (c >= 0xe000 && c <= 0xf8ff) return false;    // private use
  if (c == 0x61f || c == 0x60c || c == 0x6d4 || c == 0x964 || c == 0x965) return false;
  return !IsUpper(c) && !IsLower(c) && !IsDigit(c);
}

bool IsLetter(int32_t c) { return IsUpper(c) || IsLower(c) || IsCaselessLetter(c); }

bool IsCjkTerminator(int32_t c) { return c == 0x3002 || c == 0xff01 || c == 0xff1f || c == 0xff0e || c == 0xff61; }

bool IsTerminator(int32_t c) {
  return c == '.' || c == '!' || c == '?' || c == 0x2026 || c == 0x203d || c == 0x2047 || c == 0x2048 ||
         c == 0x2049 || c == 0x61f || c == 0x6d4 || c == 0x964 || c == 0x965 || IsCjkTerminator(c);
}

bool IsQuote(int32_t c) {
  return c == '"' || c == '\'' || c == 0xab || c == 0xbb || (c >= 0x2018 && c <= 0x201f) || c == 0x2039 ||
         c == 0x203a || c == 0x300c || c == 0x300d || c == 0x300e || c == 0x300f || c == 0xff02 || c == 0xff07 ||
         c == 0x301d || c == 0x301e || c == 0x301f;
}

bool IsClosingBracket(int32_t c) {
  return c == ')' || c == ']' || c == '}' || c == 0x3009 || c == 0x300b || c == 0x3011 || c == 0x3015 ||
         c == 0x3017 || c == 0x3019 || c == 0x301b || c == 0xff09 || c == 0xff3d || c == 0xff5d || c == 0xff63;
}

bool IsOpeningBracket(int32_t c) {
  return c == '(' || c == '[' || c == '{' || c == 0x3008 || c == 0x300a || c == 0x3010 || c == 0x3014 ||
         c == 0x3016 || c == 0x3018 || c == 0x301a || c == 0xff08 || c == 0xff3b || c == 0xff5b || c == 0xff62;
}

bool IsCloser(int32_t c) { return IsQuote(c) || IsClosingBracket(c); }

// What may come before the first letter of a sentence: quotes, brackets, inverted marks, dashes,
// bullets.
bool IsOpener(int32_t c) {
  return IsQuote(c) || IsOpeningBracket(c) || c == 0xa1 || c == 0xbf || c == '-' || c == 0x2013 || c == 0x2014 ||
         c == 0x2022 || c == '*';
}

bool IsHan(int32_t c) {
  return (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x3040 && c <= 0x30ff) ||
         (c >= 0xf900 && c <= 0xfaff) || (c >= 0x20000 && c <= 0x2ffff);
}

bool IsHiragana(int32_t c) { return c >= 0x3040 && c <= 0x309f; }

// ---- boundary rules --------------------------------------------------------------------------

struct Text {
  const uint8_t* s;
  size_t n;
};

struct WordRef {
  size_t b = 0, e = 0;
};

// How the word after a gap starts (after its openers).
enum class Start { kStarter, kDigit, kOther };

// Openers that, standing alone between spaces, belong to the next word ("- What?", "« Non »"); a
// quote or closing bracket alone after a terminator belongs to the sentence before it.
bool IsStandaloneOpener(int32_t c) {
  return IsOpeningBracket(c) || c == 0xab || c == 0x2039 || c == 0x201e || c == 0x201a || c == 0x201c ||
         c == 0x2018 || c == 0xa1 || c == 0xbf || c == '-' || c == 0x2013 || c == 0x2014 || c == 0x2022 || c == '*';
}

Start NextStart(const Text& t, size_t i, size_t* first_letter) {
  for (int word = 0; word < 2; ++word) {
    bool standalone = true;
    while (i < t.n && SpaceLen(t.s, t.n, i) == 0) {
      size_t len = 0;
      const int32_t cp = Decode(t.s, t.n, i, &len);
      if (cp >= 0 && IsOpener(cp)) {
        standalone = standalone && IsStandaloneOpener(cp);
        i += len;
        continue;
      }
      *first_letter = i;
      if (cp >= 0 && IsDigit(cp)) return Start::kDigit;
      if (cp >= 0 && (IsUpper(cp) || IsCaselessLetter(cp))) return Start::kStarter;
      return Start::kOther;
    }
    // the word was openers only: look at the word after it when they all open
    if (!standalone) break;
    while (i < t.n) {
      const size_t l = SpaceLen(t.s, t.n, i);
      if (l == 0) break;
      i += l;
    }
  }
  *first_letter = i;
  return Start::kOther;
}

const Abbrev* Find(const Abbrev* table, size_t n, std::string_view key) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const int c = table[mid].key.compare(key);
    if (c == 0) return &table[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return nullptr;
}

bool InList(const std::string_view* list, size_t n, std::string_view w) {
  for (size_t i = 0; i < n; ++i)
    if (list[i] == w) return true;
  return false;
}

// [b, e) without its leading openers and trailing closers.
void StripPunct(const Text& t, size_t* b, size_t* e) {
  while (*b < *e) {
    size_t len = 0;
    const int32_t cp = Decode(t.s, *e, *b, &len);
    if (cp < 0 || !IsOpener(cp)) break;
    *b += len;
  }
  while (*e > *b) {
    size_t len = 0;
    const int32_t cp = DecodeBefore(t.s, *b, *e, &len);
    if (cp < 0 || !IsCloser(cp)) break;
    *e -= len;
  }
}

bool AllAsciiDigits(const Text& t, size_t b, size_t e) {
  if (b == e || e - b > 4) return false;
  for (size_t i = b; i < e; ++i)
    if (t.s[i] < '0' || t.s[i] > '9') return false;
  return true;
}

// "U.S", "e.g", "U.S.A": single letters joined by '.'.
bool IsDottedLetters(const Text& t, size_t b, size_t e) {
  size_t letters = 0;
  bool want_letter = true;
  for (size_t i = b; i < e;) {
    size_t len = 0;
    const int32_t cp = Decode(t.s, e, i, &len);
    if (want_letter) {
      if (cp < 0 || !IsLetter(cp)) return false;
      ++letters;
    } else if (cp != '.') {
      return false;
    }
    want_letter = !want_letter;
    i += len;
  }
  return letters >= 2 && !want_letter;
}

bool IsSingleLetter(const Text& t, size_t b, size_t e) {
  if (b >= e) return false;
  size_t len = 0;
  const int32_t cp = Decode(t.s, e, b, &len);
  return cp >= 0 && b + len == e && IsLetter(cp);
}

// The word of the current sentence before the one that ends at the gap, lowercased (ASCII) into
// buf; empty when there is none or it is long.
std::string_view LowerWord(const Text& t, const WordRef& w, char* buf, size_t cap) {
  size_t b = w.b, e = w.e;
  StripPunct(t, &b, &e);
  if (e <= b || e - b > cap) return {};
  for (size_t i = b; i < e; ++i) {
    const char c = char(t.s[i]);
    buf[i - b] = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  }
  return std::string_view(buf, e - b);
}

// The letters that start the word at i (for month names): up to the first ASCII non-letter.
std::string_view LeadingLetters(const Text& t, size_t i) {
  size_t e = i;
  while (e < t.n && e - i < 16) {
    const uint8_t c = t.s[e];
    if (c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      if (c >= 0x80 && SpaceLen(t.s, t.n, e) != 0) break;
      ++e;
    } else {
      break;
    }
  }
  return std::string_view(reinterpret_cast<const char*>(t.s) + i, e - i);
}

constexpr size_t kMaxKey = 32;
constexpr Abbrev kSuffixAbbrev = {"", kAlways};

// Lowercases the first letter of buf (ASCII, Cyrillic А-Я); false when it is not uppercase.
bool LowerFirst(char* buf, size_t len) {
  const uint8_t c = uint8_t(buf[0]);
  if (c >= 'A' && c <= 'Z') {
    buf[0] = char(c - 'A' + 'a');
    return true;
  }
  if (len >= 2 && c == 0xd0) {
    const uint8_t d = uint8_t(buf[1]);
    if (d >= 0x90 && d <= 0x9f) { buf[1] = char(d + 0x20); return true; }
    if (d >= 0xa0 && d <= 0xaf) { buf[0] = char(0xd1); buf[1] = char(d - 0x20); return true; }
  }
  return false;
}

// Looks up the abbreviation that ends the word `words[nw - 1]` (its final '.' removed: up to e),
// joined with up to two preceding words of the sentence that end with '.' ("z." + "B" -> "z.B").
// Longest match first.
const Abbrev* FindAbbrev(const Text& t, const SplitterLanguage& lang, const WordRef* words, size_t nw, size_t e) {
  for (size_t parts = nw < 3 ? nw : 3; parts >= 1; --parts) {
    char buf[kMaxKey];
    size_t len = 0;
    bool ok = true;
    for (size_t k = nw - parts; k < nw && ok; ++k) {
      size_t pb = words[k].b, pe = k + 1 == nw ? e : words[k].e;
      if (k + 1 != nw) {  // an earlier part: must end with '.', which is dropped
        if (pe <= pb || t.s[pe - 1] != '.') { ok = false; break; }
        --pe;
      }
      if (k == nw - parts) {  // the first part: without its openers
        size_t dummy = pe;
        StripPunct(t, &pb, &dummy);
        if (dummy < pe) { ok = false; break; }  // a closer inside
      }
      if (pe <= pb || len + (pe - pb) + 1 > kMaxKey) { ok = false; break; }
      if (len > 0) buf[len++] = '.';
      for (size_t i = pb; i < pe; ++i) buf[len++] = char(t.s[i]);
    }
    if (!ok) continue;
    for (int lower = 0; lower < 2; ++lower) {
      if (lower && !LowerFirst(buf, len)) break;  // then as written with its first letter lowercased
      const std::string_view key(buf, len);
      if (const Abbrev* a = lang.abbrevs ? Find(lang.abbrevs, lang.n_abbrevs, key) : nullptr) return a;
      if (const Abbrev* a = Find(kGenericAbbrevs, std::size(kGenericAbbrevs), key)) return a;
    }
    if (parts == 1 && lang.suffix != nullptr && len > lang.suffix_len &&
        std::string_view(buf + len - lang.suffix_len, lang.suffix_len) == std::string_view(lang.suffix, lang.suffix_len))
      return &kSuffixAbbrev;
  }
  return nullptr;
}

// Whether the sentence ends in the gap after words[nw - 1] (nw >= 1: the words of the current
// sentence, the last ones only), the next word starting at `next`.
bool IsBoundary(const Text& t, const SplitterLanguage& lang, const WordRef* words, size_t nw, bool first_word,
                size_t next) {
  // trailing closers, then the terminator run; a word of closers only ("Non. »") takes the
  // terminator of the word before it
  size_t e = 0;
  for (int back = 0; back < 2 && nw >= 1; ++back) {
    const WordRef& w = words[nw - 1];
    e = w.e;
    while (e > w.b) {
      size_t len = 0;
      const int32_t cp = DecodeBefore(t.s, w.b, e, &len);
      if (cp < 0 || !IsCloser(cp)) break;
      e -= len;
    }
    if (e > w.b || nw < 2 || back == 1) break;
    --nw;
  }
  const WordRef& w = words[nw - 1];
  size_t tb = e;
  bool cjk = false, strong = false;
  size_t dots = 0;
  while (tb > w.b) {
    size_t len = 0;
    const int32_t cp = DecodeBefore(t.s, w.b, tb, &len);
    if (cp < 0 || !IsTerminator(cp)) break;
    if (IsCjkTerminator(cp)) cjk = true;
    else if (cp == '.') ++dots;
    else strong = true;  // ! ? … and the others
    tb -= len;
  }
  if (tb == e) return false;  // no terminator
  if (cjk) return true;
  size_t first_letter = next;
  const Start start = NextStart(t, next, &first_letter);
  if (start == Start::kOther) return false;
  if (strong || dots > 1) return true;
  // a single '.': the word before it
  size_t b = w.b, be = tb;
  StripPunct(t, &b, &be);
  if (b >= be) return true;
  if (be == tb) {  // no closer between the word and its '.' ("stop". is a sentence end)
    if (const Abbrev* a = FindAbbrev(t, lang, words, nw, tb)) {
      if (a->cls == kAlways) return false;
      if (a->cls == kNumeric) return start != Start::kDigit;
      return true;
    }
  }
  if (IsSingleLetter(t, b, be) || IsDottedLetters(t, b, be)) return false;
  if (AllAsciiDigits(t, b, be)) {
    if (first_word) return false;  // a list item: "1. Buy milk."
    if (lang.months != nullptr) {
      if (InList(lang.months, lang.n_months, LeadingLetters(t, first_letter))) return false;
      if (nw >= 2) {
        char buf[16];
        const std::string_view prev = LowerWord(t, words[nw - 2], buf, sizeof(buf));
        if (!prev.empty() && InList(lang.ordinal_context, lang.n_ordinal_context, prev)) return false;
      }
    }
  }
  return true;
}

// Inside a word from `b`, the first point where a CJK sentence ends (after its terminators and
// closers; the rest of the word is the next sentence), or `e` when none.
size_t CjkBreak(const Text& t, size_t b, size_t e, int32_t prev_cp) {
  size_t i = b;
  int32_t prev = prev_cp;
  while (i < e) {
    size_t len = 0;
    const int32_t cp = Decode(t.s, e, i, &len);
    const bool cjk_term = cp >= 0 && IsCjkTerminator(cp);
    const bool ascii_term = (cp == '.' || cp == '!' || cp == '?') && prev >= 0 && IsHan(prev);
    if (!cjk_term && !ascii_term) {
      prev = cp;
      i += len;
      continue;
    }
    size_t j = i;
    bool any_cjk = false;
    int32_t last_term = cp;
    while (j < e) {
      size_t l = 0;
      const int32_t c = Decode(t.s, e, j, &l);
      if (c < 0 || !IsTerminator(c)) break;
      any_cjk = any_cjk || IsCjkTerminator(c);
      last_term = c;
      j += l;
    }
    bool closed = false;
    while (j < e) {
      size_t l = 0;
      const int32_t c = Decode(t.s, e, j, &l);
      if (c < 0 || !IsCloser(c)) break;
      closed = true;
      j += l;
    }
    if (j >= e) return e;  // the terminator ends the word: the gap decides
    size_t l = 0;
    const int32_t after = Decode(t.s, e, j, &l);
    bool split = true;
    if (closed && after >= 0 && IsHiragana(after)) split = false;      // 「行く。」と言った
    if (last_term == 0xff0e && !closed && after >= 0 && IsDigit(after)) split = false;  // ３．５
    if (!any_cjk && !(after >= 0 && (IsHan(after) || IsOpener(after)))) split = false;
    if (split) return j;
    prev = last_term;
    i = j;
  }
  return e;
}

class Emitter {
 public:
  Emitter(ByteSpan* spans, size_t capacity) : spans_(spans), capacity_(capacity) {}
  void Add(size_t b, size_t e) {
    if (count_ < capacity_) spans_[count_] = ByteSpan{uint32_t(b), uint32_t(e)};
    ++count_;
  }
  size_t count() const { return count_; }

 private:
  ByteSpan* spans_;
  size_t capacity_;
  size_t count_ = 0;
};

}  // namespace

const SplitterLanguage& SplitterLanguageFor(std::string_view code) {
  // "__de__" -> "de"; then the part before '-' or '_' ("en-US", "pt_BR", "eng_Latn"), lowercased.
  while (!code.empty() && code.front() == '_') code.remove_prefix(1);
  while (!code.empty() && code.back() == '_') code.remove_suffix(1);
  const size_t cut = code.find_first_of("-_");
  if (cut != std::string_view::npos) code = code.substr(0, cut);
  if (code.size() < 2 || code.size() > 3) return kGeneric;
  char buf[3];
  for (size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    buf[i] = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  }
  const std::string_view key(buf, code.size());
  for (const CodeName& c : kCodes)
    if (c.code == key) return *c.lang;
  return kGeneric;
}

const char* SplitterLanguageName(const SplitterLanguage& lang) { return lang.name; }

Status SplitSentences(std::string_view text, SplitMode mode, const SplitterLanguage& lang, ByteSpan* spans,
                      size_t capacity, size_t* count) {
  if (count == nullptr) return Status(StatusCode::kInvalidArgument, "SplitSentences: count is null");
  *count = 0;
  if (spans == nullptr && capacity > 0)
    return Status(StatusCode::kInvalidArgument, "SplitSentences: spans is null with a non-zero capacity");
  if (uint64_t(text.size()) > 0xffffffffu)
    return Status(StatusCode::kOutOfRange, "SplitSentences: text of " + std::to_string(text.size()) +
                                               " bytes (byte spans are 32-bit)");
  const int m = static_cast<int>(mode);
  if (m < 0 || m > 3) return Status(StatusCode::kInvalidArgument, "SplitSentences: unknown split mode");

  const Text t{reinterpret_cast<const uint8_t*>(text.data()), text.size()};
  const bool rules = mode == SplitMode::kParagraph || mode == SplitMode::kWrapped;
  // Line breaks in a gap that end the sentence: 1 (lines), 2 (blank line), never.
  const size_t hard_newlines = mode == SplitMode::kWrapped ? 2 : mode == SplitMode::kNone ? SIZE_MAX : 1;

  Emitter out(spans, capacity);
  constexpr size_t kRing = 3;
  WordRef words[kRing];  // the last words of the current sentence, oldest first
  size_t nw = 0;         // of them in use
  size_t words_in_sentence = 0;
  bool open = false;
  size_t sentence_b = 0, last_e = 0;
  int32_t prev_cp = -1;  // the last code point of the previous word (for ASCII terminators in CJK)

  size_t i = 0;
  while (true) {
    size_t newlines = 0;
    while (i < t.n) {
      const size_t l = SpaceLen(t.s, t.n, i);
      if (l == 0) break;
      if (t.s[i] == '\n') ++newlines;
      i += l;
    }
    if (i >= t.n) break;
    if (open) {
      bool end = newlines >= hard_newlines;
      if (!end && rules) end = IsBoundary(t, lang, words, nw, words_in_sentence == 1, i);
      if (end) {
        out.Add(sentence_b, last_e);
        open = false;
      }
    }
    if (!open) {
      open = true;
      sentence_b = i;
      nw = 0;
      words_in_sentence = 0;
      prev_cp = -1;
    }
    // the word [i, j)
    size_t j = i;
    while (j < t.n && SpaceLen(t.s, t.n, j) == 0) ++j;
    size_t wb = i;
    if (rules) {
      for (size_t at = CjkBreak(t, wb, j, prev_cp); at < j; at = CjkBreak(t, wb, j, -1)) {
        out.Add(sentence_b, at);
        sentence_b = wb = at;
        nw = 0;
        words_in_sentence = 0;
      }
    }
    if (nw == kRing) {
      words[0] = words[1];
      words[1] = words[2];
      --nw;
    }
    words[nw++] = WordRef{wb, j};
    ++words_in_sentence;
    size_t l = 0;
    prev_cp = DecodeBefore(t.s, wb, j, &l);
    last_e = j;
    i = j;
  }
  if (open) out.Add(sentence_b, last_e);
  *count = out.count();
  if (out.count() > capacity)
    return Status(StatusCode::kOutOfRange, "SplitSentences: " + std::to_string(out.count()) +
                                               " sentences need " + std::to_string(out.count()) +
                                               " spans; capacity is " + std::to_string(capacity));
  return Status::Ok();
}

size_t WhitespaceLength(std::string_view text, size_t i) {
  return i < text.size() ? SpaceLen(reinterpret_cast<const uint8_t*>(text.data()), text.size(), i) : 0;
}

}  // namespace text
}  // namespace mtlite
