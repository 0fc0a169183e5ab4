// The sentence splitter (runtime/src/sentence_split.h): concrete splits for every rule and mode,
// whitespace, capacity, invalid UTF-8 and the span invariants on random text.
#include "sentence_split.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace mtlite {
namespace text {
namespace {

using Sentences = std::vector<std::string>;

bool IsWs(std::string_view s, size_t i, size_t* len) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  *len = 1;
  if (c == ' ' || (c >= '\t' && c <= '\r')) return true;
  static const char* const kMulti[] = {"\xc2\xa0",     "\xe1\x9a\x80", "\xe2\x80\xa8", "\xe2\x80\xa9",
                                       "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80"};
  for (const char* m : kMulti) {
    const std::string_view v(m);
    if (s.substr(i, v.size()) == v) {
      *len = v.size();
      return true;
    }
  }
  if (s.size() >= i + 3 && c == 0xe2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
      static_cast<unsigned char>(s[i + 2]) >= 0x80 && static_cast<unsigned char>(s[i + 2]) <= 0x8a) {
    *len = 3;
    return true;
  }
  return false;
}

// Checks the documented invariants; returns "" or what is wrong.
std::string CheckInvariants(std::string_view text, const ByteSpan* spans, size_t n) {
  std::vector<uint8_t> kind(text.size(), 0);  // 0 other, 1 whitespace (first byte), 2 whitespace continuation
  for (size_t i = 0; i < text.size();) {
    size_t len = 1;
    if (IsWs(text, i, &len)) {
      kind[i] = 1;
      for (size_t k = 1; k < len; ++k) kind[i + k] = 2;
    }
    i += len;
  }
  size_t pos = 0;
  for (size_t k = 0; k < n; ++k) {
    const ByteSpan s = spans[k];
    if (s.begin >= s.end || s.end > text.size()) return "span " + std::to_string(k) + " empty or out of bounds";
    if (s.begin < pos) return "span " + std::to_string(k) + " overlaps or is out of order";
    for (size_t i = pos; i < s.begin; ++i)
      if (kind[i] == 0) return "non-whitespace byte " + std::to_string(i) + " outside the spans";
    if (kind[s.begin] != 0) return "span " + std::to_string(k) + " starts with whitespace";
    // the last byte must not belong to a whitespace character
    if (kind[s.end - 1] != 0) return "span " + std::to_string(k) + " ends with whitespace";
    pos = s.end;
  }
  for (size_t i = pos; i < text.size(); ++i)
    if (kind[i] == 0) return "non-whitespace byte " + std::to_string(i) + " after the last span";
  return "";
}

Sentences Split(std::string_view text, SplitMode mode = SplitMode::kParagraph, std::string_view lang = "en") {
  std::vector<ByteSpan> spans(text.size() + 1);
  size_t n = 12345;
  const Status s = SplitSentences(text, mode, SplitterLanguageFor(lang), spans.data(), spans.size(), &n);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return {};
  EXPECT_EQ(CheckInvariants(text, spans.data(), n), "") << text;
  Sentences out;
  for (size_t k = 0; k < n; ++k) out.emplace_back(text.substr(spans[k].begin, spans[k].size()));
  return out;
}

Sentences De(std::string_view text) { return Split(text, SplitMode::kParagraph, "de"); }

// ---- languages ---------------------------------------------------------------------------------

TEST(SplitterLanguageTest, CodesMapToTables) {
  const std::pair<const char*, const char*> cases[] = {
      {"en", "en"},       {"EN", "en"},         {"eng", "en"},     {"en-US", "en"},  {"en_GB", "en"},
      {"eng_Latn", "en"}, {"__en__", "en"},     {"de", "de"},      {"deu", "de"},    {"ger", "de"},
      {"deu_Latn", "de"}, {"__de__", "de"},     {"de-AT", "de"},   {"DE", "de"},     {"fr", "fr"},
      {"fra", "fr"},      {"fre", "fr"},        {"fr-CA", "fr"},   {"es", "es"},     {"spa_Latn", "es"},
      {"it", "it"},       {"ita", "it"},        {"nl", "nl"},      {"nld", "nl"},    {"dut", "nl"},
      {"pt", "pt"},       {"pt_BR", "pt"},      {"por_Latn", "pt"}, {"ru", "ru"},    {"rus_Cyrl", "ru"},
      {"__ru__", "ru"},   {"", "generic"},      {"xx", "generic"}, {"zh", "generic"}, {"e", "generic"},
      {"english", "generic"}, {"___", "generic"}, {"-", "generic"}, {"zho_Hans", "generic"},
  };
  for (const auto& [code, name] : cases) EXPECT_STREQ(SplitterLanguageName(SplitterLanguageFor(code)), name) << code;
}

// ---- modes ---------------------------------------------------------------------------------------

TEST(SentenceSplitTest, EmptyAndWhitespaceOnly) {
  for (SplitMode m : {SplitMode::kNone, SplitMode::kSentence, SplitMode::kParagraph, SplitMode::kWrapped}) {
    EXPECT_EQ(Split("", m), Sentences{});
    EXPECT_EQ(Split(" \t\r\n\n \f\v", m), Sentences{});
    EXPECT_EQ(Split("\xc2\xa0\xe3\x80\x80\xe2\x80\x83\n", m), Sentences{});
  }
}

TEST(SentenceSplitTest, ModeNoneIsOneTrimmedSpan) {
  EXPECT_EQ(Split("  Hello there. How are you?\n\nFine.  \n", SplitMode::kNone),
            (Sentences{"Hello there. How are you?\n\nFine."}));
  EXPECT_EQ(Split("x", SplitMode::kNone), Sentences{"x"});
}

TEST(SentenceSplitTest, ModeSentenceIsOneLineEach) {
  EXPECT_EQ(Split("Hello there. How are you?\r\n\r\n  second line \n\tthird\n", SplitMode::kSentence),
            (Sentences{"Hello there. How are you?", "second line", "third"}));
  EXPECT_EQ(Split("a\n\n\nb", SplitMode::kSentence), (Sentences{"a", "b"}));
}

TEST(SentenceSplitTest, ModeParagraphSplitsEachLine) {
  EXPECT_EQ(Split("Hello there. How are you?\nFine, thanks. And you\nwell", SplitMode::kParagraph),
            (Sentences{"Hello there.", "How are you?", "Fine, thanks.", "And you", "well"}));
  EXPECT_EQ(Split("One two\r\nthree four.\r\n", SplitMode::kParagraph), (Sentences{"One two", "three four."}));
}

TEST(SentenceSplitTest, ModeWrappedJoinsSoftLineBreaks) {
  EXPECT_EQ(Split("This is a long sentence that\nwraps onto the next line. And\nanother one.\n\nNew paragraph\n"
                  "here\n \t \nLast",
                  SplitMode::kWrapped),
            (Sentences{"This is a long sentence that\nwraps onto the next line.", "And\nanother one.",
                       "New paragraph\nhere", "Last"}));
  EXPECT_EQ(Split("Ends here.\nStarts here.", SplitMode::kWrapped), (Sentences{"Ends here.", "Starts here."}));
  EXPECT_EQ(Split("a\r\n\r\nb", SplitMode::kWrapped), (Sentences{"a", "b"}));
}

// ---- terminators -------------------------------------------------------------------------------

TEST(SentenceSplitTest, BasicTerminators) {
  EXPECT_EQ(Split("It rains. It pours! Does it? Yes… Really?! No!! Well... Maybe."),
            (Sentences{"It rains.", "It pours!", "Does it?", "Yes…", "Really?!", "No!!", "Well...", "Maybe."}));
  EXPECT_EQ(Split("He won in 1990. 2000 was worse."), (Sentences{"He won in 1990.", "2000 was worse."}));
}

TEST(SentenceSplitTest, LowercaseAfterTerminatorIsNoBreak) {
  EXPECT_EQ(Split("He paused... and then left."), Sentences{"He paused... and then left."});
  EXPECT_EQ(Split("He paused… and then left."), Sentences{"He paused… and then left."});
  EXPECT_EQ(Split("Yahoo! is a company. what? no."), (Sentences{"Yahoo! is a company. what? no."}));
  EXPECT_EQ(Split("This is the end. and not."), Sentences{"This is the end. and not."});
}

TEST(SentenceSplitTest, PunctuationAfterTerminatorIsNoBreak) {
  EXPECT_EQ(Split("Wait. - what. , ok"), (Sentences{"Wait. - what. , ok"}));
  EXPECT_EQ(Split("Wait. - What?"), (Sentences{"Wait.", "- What?"}));
}

TEST(SentenceSplitTest, QuotesAndBrackets) {
  EXPECT_EQ(Split("He said \"Stop.\" Then he left."), (Sentences{"He said \"Stop.\"", "Then he left."}));
  EXPECT_EQ(Split("He said \"stop\". Then he left."), (Sentences{"He said \"stop\".", "Then he left."}));
  EXPECT_EQ(Split("(See above.) The end."), (Sentences{"(See above.)", "The end."}));
  EXPECT_EQ(Split("She asked: “Why?” “Because.” OK."), (Sentences{"She asked: “Why?”", "“Because.”", "OK."}));
  EXPECT_EQ(Split("It ended. \"Why?\" he asked."), (Sentences{"It ended.", "\"Why?\" he asked."}));
  EXPECT_EQ(Split("It ended. \"why\" he asked."), (Sentences{"It ended. \"why\" he asked."}));
  EXPECT_EQ(Split("It ended. (Then it began.)"), (Sentences{"It ended.", "(Then it began.)"}));
  EXPECT_EQ(Split("Er sagte: „Nein.“ Dann ging er.", SplitMode::kParagraph, "de"),
            (Sentences{"Er sagte: „Nein.“", "Dann ging er."}));
  EXPECT_EQ(Split("Il a dit « Non. » Puis il est parti.", SplitMode::kParagraph, "fr"),
            (Sentences{"Il a dit « Non. »", "Puis il est parti."}));
  EXPECT_EQ(Split("Fin. « Bonjour. » Merci. »", SplitMode::kParagraph, "fr"),
            (Sentences{"Fin.", "« Bonjour. »", "Merci. »"}));
  EXPECT_EQ(Split("He said. \" Then"), (Sentences{"He said. \"", "Then"}));
  EXPECT_EQ(Split("Llegó tarde. ¿Por qué? ¡Qué pena! Bueno.", SplitMode::kParagraph, "es"),
            (Sentences{"Llegó tarde.", "¿Por qué?", "¡Qué pena!", "Bueno."}));
}

TEST(SentenceSplitTest, OtherScripts) {
  EXPECT_EQ(Split("Он пришёл. Она ушла.", SplitMode::kParagraph, "ru"), (Sentences{"Он пришёл.", "Она ушла."}));
  EXPECT_EQ(Split("Он пришёл. она ушла.", SplitMode::kParagraph, "ru"), (Sentences{"Он пришёл. она ушла."}));
  EXPECT_EQ(Split("Ήρθε. Έφυγε."), (Sentences{"Ήρθε.", "Έφυγε."}));
  EXPECT_EQ(Split("Élan. Ça va. Øre."), (Sentences{"Élan.", "Ça va.", "Øre."}));
  EXPECT_EQ(Split("هذا كتاب. هذا قلم؟ نعم."), (Sentences{"هذا كتاب.", "هذا قلم؟", "نعم."}));
  EXPECT_EQ(Split("यह किताब है। वह कलम है।"), (Sentences{"यह किताब है।", "वह कलम है।"}));
}

TEST(SentenceSplitTest, Cjk) {
  EXPECT_EQ(Split("你好。我很好！你呢？好的", SplitMode::kParagraph, "zh"),
            (Sentences{"你好。", "我很好！", "你呢？", "好的"}));
  EXPECT_EQ(Split("今日は晴れです。明日は雨です。", SplitMode::kParagraph, "ja"),
            (Sentences{"今日は晴れです。", "明日は雨です。"}));
  // a closing bracket after the terminator stays with its sentence
  EXPECT_EQ(Split("「行こう。」彼は言った。"), (Sentences{"「行こう。」", "彼は言った。"}));
  // ... but a quotation followed by a particle continues the sentence
  EXPECT_EQ(Split("「行く。」と言った。"), (Sentences{"「行く。」と言った。"}));
  // before anything after whitespace, even lowercase
  EXPECT_EQ(Split("我很好。 ok"), (Sentences{"我很好。", "ok"}));
  // fullwidth full stop as a decimal point
  EXPECT_EQ(Split("３．５メートル。"), (Sentences{"３．５メートル。"}));
  // ASCII terminators between CJK characters
  EXPECT_EQ(Split("你好!我很好?是的."), (Sentences{"你好!", "我很好?", "是的."}));
  EXPECT_EQ(Split("我买了3.5公斤。"), (Sentences{"我买了3.5公斤。"}));
  EXPECT_EQ(Split("안녕하세요. 반갑습니다."), (Sentences{"안녕하세요.", "반갑습니다."}));
  EXPECT_EQ(Split("你好。。。我在。"), (Sentences{"你好。。。", "我在。"}));
}

// ---- abbreviations -------------------------------------------------------------------------------

TEST(SentenceSplitTest, EnglishAbbreviations) {
  EXPECT_EQ(Split("Dr. Smith met Mr. Jones and Mrs. Brown at St. Paul's. They talked."),
            (Sentences{"Dr. Smith met Mr. Jones and Mrs. Brown at St. Paul's.", "They talked."}));
  EXPECT_EQ(Split("Bring fruit, e.g. Apples or pears. Or i.e. Bananas. Team A vs. Team Blue. Done."),
            (Sentences{"Bring fruit, e.g. Apples or pears.", "Or i.e. Bananas.", "Team A vs. Team Blue.", "Done."}));
  EXPECT_EQ(Split("It opened on Jan. 5 and closed in Sept. Last year was better."),
            (Sentences{"It opened on Jan. 5 and closed in Sept. Last year was better."}));
  EXPECT_EQ(Split("Prof. Adams and Capt. Hook. Gen. Lee too."),
            (Sentences{"Prof. Adams and Capt. Hook.", "Gen. Lee too."}));
}

TEST(SentenceSplitTest, WeakAbbreviationsBreakBeforeUppercase) {
  EXPECT_EQ(Split("We bought apples, pears, etc. The rest was cheap."),
            (Sentences{"We bought apples, pears, etc.", "The rest was cheap."}));
  EXPECT_EQ(Split("Apples, pears, etc. are cheap."), (Sentences{"Apples, pears, etc. are cheap."}));
  EXPECT_EQ(Split("We met at 5 p.m. The film began."), (Sentences{"We met at 5 p.m.", "The film began."}));
  EXPECT_EQ(Split("Äpfel, Birnen usw. Das war alles.", SplitMode::kParagraph, "de"),
            (Sentences{"Äpfel, Birnen usw.", "Das war alles."}));
  EXPECT_EQ(Split("Яблоки, груши и т. д. Потом мы ушли.", SplitMode::kParagraph, "ru"),
            (Sentences{"Яблоки, груши и т. д.", "Потом мы ушли."}));
  EXPECT_EQ(Split("Smith et al. Found it. Acme Inc. Makes them.", SplitMode::kParagraph, "en"),
            (Sentences{"Smith et al.", "Found it.", "Acme Inc.", "Makes them."}));
}

TEST(SentenceSplitTest, NumericAbbreviations) {
  EXPECT_EQ(Split("See No. 5 and Fig. 3 on p. 12 or pp. 12-15. Art. 3 applies. Vol. 2 too."),
            (Sentences{"See No. 5 and Fig. 3 on p. 12 or pp. 12-15.", "Art. 3 applies.", "Vol. 2 too."}));
  EXPECT_EQ(Split("He said No. Then he left."), (Sentences{"He said No.", "Then he left."}));
  EXPECT_EQ(Split("Siehe Abs. 2 und Kap. 4. Das ist alles.", SplitMode::kParagraph, "de"),
            (Sentences{"Siehe Abs. 2 und Kap. 4.", "Das ist alles."}));
}

TEST(SentenceSplitTest, GermanAbbreviations) {
  EXPECT_EQ(De("Obst, z. B. Äpfel, ist gesund. Das heißt, d. h. Wir essen es. Herr Nr. 5 kam."),
            (Sentences{"Obst, z. B. Äpfel, ist gesund.", "Das heißt, d. h. Wir essen es.", "Herr Nr. 5 kam."}));
  EXPECT_EQ(De("Obst, z.B. Äpfel, ist gesund. Gut."), (Sentences{"Obst, z.B. Äpfel, ist gesund.", "Gut."}));
  EXPECT_EQ(De("Er kommt bzw. Sie kommt. Es kostet ca. 5 Euro. Hr. Meier und Fr. Müller wohnen in der Hauptstr. 5."),
            (Sentences{"Er kommt bzw. Sie kommt.", "Es kostet ca. 5 Euro.",
                       "Hr. Meier und Fr. Müller wohnen in der Hauptstr. 5."}));
  EXPECT_EQ(De("Er wohnt in der Goethe Str. Neun ist die Nummer."),
            (Sentences{"Er wohnt in der Goethe Str. Neun ist die Nummer."}));
  EXPECT_EQ(De("Sie wohnt in der Bahnhofstr. 3 in Bonn. Ja."), (Sentences{"Sie wohnt in der Bahnhofstr. 3 in Bonn.", "Ja."}));
  EXPECT_EQ(De("Es kostet 5 Mio. Euro. Das ist viel."), (Sentences{"Es kostet 5 Mio. Euro.", "Das ist viel."}));
  EXPECT_EQ(De("Das ist i. d. R. Sache der Stadt. Ja."), (Sentences{"Das ist i. d. R. Sache der Stadt.", "Ja."}));
}

TEST(SentenceSplitTest, GermanOrdinals) {
  EXPECT_EQ(De("Wir treffen uns am 1. Januar. Er wurde der 3. Platz. Im 19. Jahrhundert war es anders."),
            (Sentences{"Wir treffen uns am 1. Januar.", "Er wurde der 3. Platz.",
                       "Im 19. Jahrhundert war es anders."}));
  EXPECT_EQ(De("Heute ist der 24. Dezember. Morgen ist 25. Dezember."),
            (Sentences{"Heute ist der 24. Dezember.", "Morgen ist 25. Dezember."}));
  EXPECT_EQ(De("Vom 1. bis 3. Mai. Dann Ruhe."), (Sentences{"Vom 1. bis 3. Mai.", "Dann Ruhe."}));
  // a year at the end of a sentence
  EXPECT_EQ(De("Das war 1990. Dann kam die Wende."), (Sentences{"Das war 1990.", "Dann kam die Wende."}));
  // English has no such ordinals
  EXPECT_EQ(Split("It was 1990. Then it ended. It was the 3. Place."),
            (Sentences{"It was 1990.", "Then it ended.", "It was the 3.", "Place."}));
}

TEST(SentenceSplitTest, OtherLanguagesAbbreviations) {
  EXPECT_EQ(Split("M. Dupont et Mme. Martin sont là. Il pleut, p. ex. Aujourd'hui. Fin.", SplitMode::kParagraph, "fr"),
            (Sentences{"M. Dupont et Mme. Martin sont là.", "Il pleut, p. ex. Aujourd'hui.", "Fin."}));
  EXPECT_EQ(Split("El Sr. García y la Sra. López, p. ej. Ana, llegaron. Bien.", SplitMode::kParagraph, "es"),
            (Sentences{"El Sr. García y la Sra. López, p. ej. Ana, llegaron.", "Bien."}));
  EXPECT_EQ(Split("Il Sig. Rossi e il Dott. Bianchi. Poi ecc. Fine.", SplitMode::kParagraph, "it"),
            (Sentences{"Il Sig. Rossi e il Dott. Bianchi.", "Poi ecc.", "Fine."}));
  EXPECT_EQ(Split("Dhr. Jansen en mevr. De Vries, bijv. Piet. Klaar.", SplitMode::kParagraph, "nl"),
            (Sentences{"Dhr. Jansen en mevr. De Vries, bijv. Piet.", "Klaar."}));
  EXPECT_EQ(Split("A Sra. Silva e o Dr. Costa chegaram. Bom.", SplitMode::kParagraph, "pt"),
            (Sentences{"A Sra. Silva e o Dr. Costa chegaram.", "Bom."}));
  EXPECT_EQ(Split("Он живёт на ул. Ленина, т. е. в центре. Проф. Иванов тоже.", SplitMode::kParagraph, "ru"),
            (Sentences{"Он живёт на ул. Ленина, т. е. в центре.", "Проф. Иванов тоже."}));
  // language tables are separate: "Mme." is French only, "Dr." generic
  EXPECT_EQ(Split("I met Mme. Curie. Dr. Who too.", SplitMode::kParagraph, "en"),
            (Sentences{"I met Mme.", "Curie.", "Dr. Who too."}));
  EXPECT_EQ(Split("I met Dr. Who. Fine.", SplitMode::kParagraph, "xx"), (Sentences{"I met Dr. Who.", "Fine."}));
}

TEST(SentenceSplitTest, InitialsAndAcronyms) {
  EXPECT_EQ(Split("J. K. Rowling wrote it. The U.S. Army came. U.S.A. Today."),
            (Sentences{"J. K. Rowling wrote it.", "The U.S. Army came.", "U.S.A. Today."}));
  EXPECT_EQ(Split("He came from the U.S. and left."), (Sentences{"He came from the U.S. and left."}));
  EXPECT_EQ(Split("George W. Bush spoke. A. Then B."), (Sentences{"George W. Bush spoke.", "A. Then B."}));
}

TEST(SentenceSplitTest, ListItems) {
  EXPECT_EQ(Split("1. Buy milk. 2. Call mom. 10. Sleep."), (Sentences{"1. Buy milk.", "2. Call mom.", "10. Sleep."}));
  EXPECT_EQ(De("1. Milch kaufen. 2. Mama anrufen."), (Sentences{"1. Milch kaufen.", "2. Mama anrufen."}));
}

TEST(SentenceSplitTest, DotsInsideWords) {
  EXPECT_EQ(Split("Pi is 3.14 and it costs $1,000.50 today. See example.com/a.b now. Go to https://x.y/z?q=1 first. "
                  "Mail a.b@c.de today. Open report.pdf now. Meet at 10.30 sharp. Use v1.2.3 please. End."),
            (Sentences{"Pi is 3.14 and it costs $1,000.50 today.", "See example.com/a.b now.",
                       "Go to https://x.y/z?q=1 first.", "Mail a.b@c.de today.", "Open report.pdf now.",
                       "Meet at 10.30 sharp.", "Use v1.2.3 please.", "End."}));
  EXPECT_EQ(Split("Visit example.com. Then call."), (Sentences{"Visit example.com.", "Then call."}));
  EXPECT_EQ(Split("It is 3.5. Then 4."), (Sentences{"It is 3.5.", "Then 4."}));
}

// ---- whitespace ----------------------------------------------------------------------------------

TEST(SentenceSplitTest, UnicodeWhitespace) {
  // NBSP, ideographic space, em space, narrow NBSP, line separator around and between sentences
  EXPECT_EQ(Split("\xc2\xa0 One.\xc2\xa0Two.\xe3\x80\x80Three.\xe2\x80\x83" "Four.\xe2\x80\xaf" "Five.\xe2\x80\xa8"),
            (Sentences{"One.", "Two.", "Three.", "Four.", "Five."}));
  EXPECT_EQ(Split("\t One.\tTwo.\r\n\r\nThree. \f"), (Sentences{"One.", "Two.", "Three."}));
  // an NBSP inside a sentence is whitespace, not a break
  EXPECT_EQ(Split("5\xc2\xa0km away."), Sentences{"5\xc2\xa0km away."});
  // U+2028 is whitespace but not a line break
  EXPECT_EQ(Split("a\xe2\x80\xa8" "b", SplitMode::kSentence), Sentences{"a\xe2\x80\xa8" "b"});
}

TEST(SentenceSplitTest, InvalidUtf8IsOrdinaryBytes) {
  EXPECT_EQ(Split("\xff\xfe Bad. \x80Then.\xc3 \xc0\xa0 Ok."), (Sentences{"\xff\xfe Bad. \x80Then.\xc3 \xc0\xa0 Ok."}));
  EXPECT_EQ(Split("Bad\xff. Then\xe2\x80. Ok."), (Sentences{"Bad\xff.", "Then\xe2\x80.", "Ok."}));
  // truncated multi-byte whitespace at the end of the text
  EXPECT_EQ(Split("Hi.\xe3\x80"), (Sentences{"Hi.\xe3\x80"}));
  EXPECT_EQ(Split("Hi. \xe3"), (Sentences{"Hi. \xe3"}));
  // NUL bytes
  EXPECT_EQ(Split(std::string_view("A.\0B. C.", 8)), (Sentences{std::string("A.\0B.", 5), "C."}));
}

// ---- capacity and arguments ----------------------------------------------------------------------

TEST(SentenceSplitTest, CapacityOverflow) {
  const std::string text = "One. Two. Three. Four.";
  const SplitterLanguage& en = SplitterLanguageFor("en");
  ByteSpan spans[4];
  size_t n = 0;
  ASSERT_TRUE(SplitSentences(text, SplitMode::kParagraph, en, spans, 4, &n).ok());
  EXPECT_EQ(n, 4u);
  Status s = SplitSentences(text, SplitMode::kParagraph, en, spans, 3, &n);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(n, 4u);
  EXPECT_NE(s.message().find("need 4"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("capacity is 3"), std::string::npos) << s.message();
  EXPECT_EQ(text.substr(spans[2].begin, spans[2].size()), "Three.");
  // counting call
  s = SplitSentences(text, SplitMode::kParagraph, en, nullptr, 0, &n);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(n, 4u);
  // no sentence fits in no capacity
  EXPECT_TRUE(SplitSentences("  ", SplitMode::kParagraph, en, nullptr, 0, &n).ok());
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(SplitSentences(text, SplitMode::kParagraph, en, nullptr, 2, &n).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SplitSentences(text, SplitMode::kParagraph, en, spans, 4, nullptr).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SplitSentences(text, static_cast<SplitMode>(7), en, spans, 4, &n).code(), StatusCode::kInvalidArgument);
}

// ---- long inputs ---------------------------------------------------------------------------------

TEST(SentenceSplitTest, LongParagraph) {
  std::string text;
  size_t sentences = 0;
  while (text.size() < 10000) {
    text += "This is sentence number " + std::to_string(sentences) + ", with Dr. Who and 3.5 apples. ";
    ++sentences;
  }
  const Sentences out = Split(text);
  ASSERT_EQ(out.size(), sentences);
  EXPECT_EQ(out[7], "This is sentence number 7, with Dr. Who and 3.5 apples.");
}

TEST(SentenceSplitTest, LongSentenceWithoutPunctuation) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += (i % 7 == 0 ? "Word " : "word ");
  for (SplitMode m : {SplitMode::kNone, SplitMode::kSentence, SplitMode::kParagraph, SplitMode::kWrapped}) {
    const Sentences out = Split(text, m);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].size(), text.size() - 1);
  }
}

// ---- random inputs -------------------------------------------------------------------------------

TEST(SentenceSplitTest, InvariantsOnRandomText) {
  static const char* const kPieces[] = {
      " ",  "\n", "\n\n", "\r\n", "\t", "\xc2\xa0", "\xe3\x80\x80", "\xe2\x80\xa8", ".", "!", "?", "...", "…",
      "。", "！", "」", "「", "\"", "'", "(", ")", "“", "”", "»", "«", "A", "b", "Dr", "z", "B", "1", "23",
      "e.g", "\xff", "\xe3", "\x80", "\xc3", "\xe2\x80", "你", "好", "と", "Ж", "ж", "ß", "-", "¿", "Mio", "Jan",
      "Januar", "am", "der", "usw", "т", "д",
  };
  std::mt19937 rng(1234);
  const char* const langs[] = {"en", "de", "fr", "ru", "xx"};
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text;
    const int n = int(rng() % 40);
    for (int k = 0; k < n; ++k) text += kPieces[rng() % (sizeof(kPieces) / sizeof(kPieces[0]))];
    for (int m = 0; m < 4; ++m) {
      std::vector<ByteSpan> spans(text.size() + 1);
      size_t count = 0;
      const Status s = SplitSentences(text, static_cast<SplitMode>(m), SplitterLanguageFor(langs[iter % 5]),
                                      spans.data(), spans.size(), &count);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_EQ(CheckInvariants(text, spans.data(), count), "") << "mode " << m << " text: " << text;
      // a sentence never crosses a line break in kSentence/kParagraph, nor a blank line in kWrapped
      for (size_t k = 0; k < count; ++k) {
        const std::string_view sv = std::string_view(text).substr(spans[k].begin, spans[k].size());
        if (m == 1 || m == 2) {
          ASSERT_EQ(sv.find('\n'), std::string_view::npos) << text;
        }
        if (m == 1 && k + 1 < count) {
          ASSERT_NE(std::string_view(text).substr(spans[k].end, spans[k + 1].begin - spans[k].end).find('\n'),
                    std::string_view::npos);
        }
      }
      if (m == 0) {
        ASSERT_LE(count, 1u);
      }
      // deterministic
      std::vector<ByteSpan> again(text.size() + 1);
      size_t count2 = 0;
      ASSERT_TRUE(SplitSentences(text, static_cast<SplitMode>(m), SplitterLanguageFor(langs[iter % 5]), again.data(),
                                 again.size(), &count2).ok());
      ASSERT_EQ(count, count2);
      for (size_t k = 0; k < count; ++k) ASSERT_TRUE(spans[k].begin == again[k].begin && spans[k].end == again[k].end);
    }
  }
}

}  // namespace
}  // namespace text
}  // namespace mtlite
