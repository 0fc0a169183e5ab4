#include "shortlist_builder.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "io.h"
#include "lex_binary.h"
#include "kernels.h"
#include "marian_layout.h"
#include "model_data.h"
#include "model_reader.h"
#include "status_macros.h"
#include "tokenizer.h"

namespace mtlite {
namespace converter {
namespace {

// Pairs are counted in uint32 and Dice is compared as c1 * (cs + ct2) vs c2 * (cs + ct1): with
// fewer than 2^31 pairs every product fits in 64 bits.
constexpr uint64_t kMaxPairs = (uint64_t(1) << 31) - 1;

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Calls f(text) for every line of `data` (without '\n' and a trailing '\r'); a final line
// without '\n' counts, an empty remainder after the last '\n' does not.
template <class F>
void ForEachLine(const std::string& data, F&& f) {
  size_t begin = 0;
  while (begin < data.size()) {
    size_t end = data.find('\n', begin);
    if (end == std::string::npos) end = data.size();
    std::string_view line(data.data() + begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f(line);
    begin = end + 1;
  }
}

// Tokenizes lines with one of the model's tokenizers, growing its scratch memory as needed.
class LineTokenizer {
 public:
  explicit LineTokenizer(const SpmTokenizer& tok) : tok_(tok) {}

  // ids of `line` (without </s>); errors are the tokenizer's (invalid UTF-8 with its offset).
  Status Encode(std::string_view line, std::vector<int32_t>* ids) {
    MTLITE_RETURN_IF_ERROR(tok_.status());
    size_t bytes = std::max<size_t>(line.size(), 16);
    for (int attempt = 0;; ++attempt) {
      workspace_.resize(SpmTokenizer::WorkspaceBytes(bytes));
      ids->resize(SpmTokenizer::kMaxNormalizedPerInputByte * bytes + 8);
      int n = 0;
      const Status s = tok_.Encode(line, workspace_.data(), workspace_.size(), ids->data(), int(ids->size()), &n);
      if (s.ok()) {
        ids->resize(size_t(n));
        return s;
      }
      // kOutOfRange: the normalized text expanded more than the workspace assumes.
      if (s.code() != StatusCode::kOutOfRange || attempt == 3) return s;
      bytes *= 4;
    }
  }

 private:
  const SpmTokenizer& tok_;
  std::vector<uint8_t> workspace_;
};

Status LineError(const std::string& path, uint64_t line, const Status& s) {
  return Status(s.code(), path + ":" + std::to_string(line) + ": " + s.message());
}

// Reads the file at `path` and calls f(line) -> Status for each line (ForEachLine) until one
// fails; that error comes back prefixed with "path:line: ".
template <class F>
Status ForEachLineOf(const std::string& path, const std::string& text, F&& f) {
  uint64_t line_no = 0;
  Status error;
  ForEachLine(text, [&](std::string_view line) {
    if (!error.ok()) return;
    ++line_no;
    if (Status st = f(line); !st.ok()) error = LineError(path, line_no, st);
  });
  return error;
}

template <class F>
Status ForEachFileLine(const std::string& path, F&& f) {
  std::string text;
  MTLITE_RETURN_IF_ERROR(ReadFile(path, &text));
  return ForEachLineOf(path, text, f);
}

// Sorted distinct ids of a sentence, without the ids the model never generates (`banned`).
void DistinctIds(const std::vector<int32_t>& ids, const std::vector<bool>* banned, std::vector<int32_t>* out) {
  out->clear();
  for (int32_t id : ids) {
    if (!banned || !(*banned)[size_t(id)]) out->push_back(id);
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

// Compressed rows of int32 ids (one row per sentence pair, or per source id).
struct Rows {
  std::vector<uint64_t> begin{0};
  std::vector<int32_t> ids;
  void Add(const std::vector<int32_t>& row) {
    ids.insert(ids.end(), row.begin(), row.end());
    begin.push_back(ids.size());
  }
  size_t size() const { return begin.size() - 1; }
  const int32_t* row(size_t i) const { return ids.data() + begin[i]; }
  size_t row_size(size_t i) const { return size_t(begin[i + 1] - begin[i]); }
};

// What every shortlist needs from the model: vocabulary sizes, banned ids, shared vocabulary.
struct Vocabularies {
  explicit Vocabularies(const detail::ModelData& md)
      : source_size(md.config.source_vocab_size),
        target_size(md.config.target_vocab_size),
        banned(size_t(md.config.target_vocab_size), false),
        shared(std::equal(md.source_vocab.id_to_piece.begin(), md.source_vocab.id_to_piece.end(),
                          md.target_vocab.id_to_piece.begin(), md.target_vocab.id_to_piece.end())) {
    banned[size_t(md.config.pad_id)] = true;
    for (int id : md.config.bad_word_ids) banned[size_t(id)] = true;
  }
  // For TopIds: target ids that occur in the text and may be generated.
  auto SeenAndAllowed(const std::vector<uint64_t>& frequency) const {
    return [this, &frequency](size_t t) { return frequency[t] > 0 && !banned[t]; };
  }
  int source_size, target_size;
  std::vector<bool> banned;  // [target id]: never generated
  bool shared;               // include_source_ids
};

// The N ids t with eligible(t) and the largest weight[t] (ties: lower id).
template <class W, class Eligible>
std::vector<int32_t> TopIds(const std::vector<W>& weight, int n, Eligible eligible) {
  std::vector<int32_t> ids;
  for (size_t t = 0; t < weight.size(); ++t) {
    if (eligible(t)) ids.push_back(int32_t(t));
  }
  const size_t keep = std::min(ids.size(), size_t(std::max(n, 0)));
  std::partial_sort(ids.begin(), ids.begin() + std::ptrdiff_t(keep), ids.end(), [&](int32_t a, int32_t b) {
    return weight[size_t(a)] != weight[size_t(b)] ? weight[size_t(a)] > weight[size_t(b)] : a < b;
  });
  ids.resize(keep);
  return ids;
}

// Occurrences of every target id in the target text files (for --frequent).
Status CountTargetText(const detail::ModelData& md, const SpmTokenizer& tok, const std::vector<std::string>& paths,
                       std::vector<uint64_t>* frequency, ShortlistReport* report) {
  frequency->assign(size_t(md.config.target_vocab_size), 0);
  LineTokenizer lines(tok);
  std::vector<int32_t> ids;
  for (const std::string& path : paths) {
    MTLITE_RETURN_IF_ERROR(ForEachFileLine(path, [&](std::string_view line) {
      MTLITE_RETURN_IF_ERROR(lines.Encode(line, &ids));
      report->target_tokens += ids.size();
      for (int32_t id : ids) ++(*frequency)[size_t(id)];
      return Status::Ok();
    }));
  }
  return Status::Ok();
}

// The order of the output projection's rows (ShortlistSpec::row_order): ids that the same
// sentences select, side by side, so that a sentence's candidates fill few 8-row blocks. The
// frequent ids and </s> (every sentence's candidates) come first; then, per source id from the
// most frequent in the source text (source_count; ties and without counts: lower id first), the
// ids of its list not placed yet, best first, and the source id itself when the vocabulary is
// shared; then every other id in id order. An id that several lists hold sits with the most
// frequent source id's list, which selects it most often. (Demo model's dev sets, 1,014 and 1,000
// sentences: the blocks a sentence's candidates touch drop by 43-49 % against token order.)
std::vector<int32_t> RowOrder(const Vocabularies& v, const std::vector<int32_t>& frequent, int eos_id,
                              const Rows& lists, const std::vector<uint32_t>& source_count) {
  std::vector<int32_t> order;
  order.reserve(size_t(v.target_size));
  std::vector<bool> placed(size_t(v.target_size), false);
  auto place = [&](int32_t t) {
    if (t < 0 || t >= v.target_size || placed[size_t(t)]) return;
    placed[size_t(t)] = true;
    order.push_back(t);
  };
  for (int32_t t : frequent) place(t);
  place(eos_id);
  std::vector<int32_t> sources(lists.size());
  std::iota(sources.begin(), sources.end(), 0);
  std::stable_sort(sources.begin(), sources.end(), [&](int32_t a, int32_t b) {
    const uint32_t ca = size_t(a) < source_count.size() ? source_count[size_t(a)] : 0;
    const uint32_t cb = size_t(b) < source_count.size() ? source_count[size_t(b)] : 0;
    return ca > cb;
  });
  for (int32_t s : sources) {
    for (size_t i = 0; i < lists.row_size(size_t(s)); ++i) place(lists.row(size_t(s))[i]);
    if (v.shared) place(s);
  }
  for (int32_t t = 0; t < v.target_size; ++t) place(t);
  return order;
}

// Lists (already filtered and ranked, best first) -> ShortlistSpec arrays.
ShortlistSpec MakeSpec(const Vocabularies& v, std::vector<int32_t> frequent, const Rows& lists, int top_k,
                       std::string method, ShortlistReport* report) {
  ShortlistSpec spec;
  spec.frequent = std::move(frequent);
  spec.offsets.assign(1, 0);
  for (size_t s = 0; s < lists.size(); ++s) {
    spec.targets.insert(spec.targets.end(), lists.row(s), lists.row(s) + lists.row_size(s));
    spec.offsets.push_back(uint32_t(spec.targets.size()));
    report->sources_with_targets += lists.row_size(s) > 0;
  }
  report->total_targets = spec.targets.size();
  spec.include_source_ids = v.shared;
  spec.top_k = std::min(top_k, v.target_size);
  spec.method = std::move(method);
  return spec;
}

// Marks ids that a source id's list must not repeat: the frequent ones (and, with a shared
// vocabulary, the source id itself, handled by the caller).
std::vector<bool> FrequentMask(const Vocabularies& v, const std::vector<int32_t>& frequent) {
  std::vector<bool> mask(size_t(v.target_size), false);
  for (int32_t id : frequent) mask[size_t(id)] = true;
  return mask;
}

bool ValidOptions(const ShortlistOptions& o) { return o.top_k >= 0 && o.frequent >= 0; }

}  // namespace

const char* ShortlistScoreName(ShortlistScore s) { return s == ShortlistScore::kDice ? "dice" : "conditional"; }

Status BuildCorpusShortlist(const Model& model, const std::vector<std::string>& source_paths,
                            const std::vector<std::string>& target_paths, const ShortlistOptions& options,
                            ShortlistSpec* out, ShortlistReport* report) {
  *report = {};
  if (!ValidOptions(options)) return Status(StatusCode::kInvalidArgument, "top_k and frequent must be >= 0");
  if (source_paths.empty() || source_paths.size() != target_paths.size()) {
    return Status(StatusCode::kInvalidArgument, "need as many target files as source files (and at least one)");
  }
  const detail::ModelData& md = model.data();
  const Vocabularies v(md);
  const Tokenizer tokenizers(md);
  LineTokenizer src_tok(tokenizers.source()), tgt_tok(tokenizers.target());

  // Pass 1: tokenize; per pair the distinct source and target ids.
  Rows pair_src, pair_tgt;
  std::vector<uint64_t> frequency(size_t(v.target_size), 0);
  std::vector<int32_t> ids, distinct;
  for (size_t f = 0; f < source_paths.size(); ++f) {
    std::string src_text, tgt_text;
    MTLITE_RETURN_IF_ERROR(ReadFile(source_paths[f], &src_text));
    MTLITE_RETURN_IF_ERROR(ReadFile(target_paths[f], &tgt_text));
    std::vector<std::string_view> tgt_lines;
    ForEachLine(tgt_text, [&](std::string_view line) { tgt_lines.push_back(line); });
    uint64_t line_no = 0;
    Status error;
    ForEachLine(src_text, [&](std::string_view line) {
      ++line_no;
      if (!error.ok() || line_no > tgt_lines.size()) return;
      Status s = src_tok.Encode(line, &ids);
      if (!s.ok()) {
        error = LineError(source_paths[f], line_no, s);
        return;
      }
      DistinctIds(ids, nullptr, &distinct);
      std::vector<int32_t> src_ids = distinct;
      report->source_tokens += ids.size();
      s = tgt_tok.Encode(tgt_lines[line_no - 1], &ids);
      if (!s.ok()) {
        error = LineError(target_paths[f], line_no, s);
        return;
      }
      report->target_tokens += ids.size();
      for (int32_t id : ids) ++frequency[size_t(id)];
      DistinctIds(ids, &v.banned, &distinct);
      ++report->pairs;
      if (src_ids.empty() || distinct.empty()) {
        ++report->skipped_pairs;
        return;
      }
      pair_src.Add(src_ids);
      pair_tgt.Add(distinct);
    });
    MTLITE_RETURN_IF_ERROR(error);
    if (line_no != tgt_lines.size()) {
      return Status(StatusCode::kInvalidArgument, source_paths[f] + " has " + std::to_string(line_no) + " lines but " +
                                                      target_paths[f] + " has " + std::to_string(tgt_lines.size()));
    }
    if (report->pairs > kMaxPairs) return Status(StatusCode::kOutOfRange, "more than 2^31 - 1 sentence pairs");
  }
  if (report->pairs == report->skipped_pairs) {
    // Empty files (or only blank lines): the "shortlist" would allow only the source tokens and the
    // specials, and every translation with it would be garbage.
    return Status(StatusCode::kInvalidArgument, "no sentence pair with tokens on both sides in the parallel text (" +
                                                    std::to_string(report->pairs) + " lines): nothing to count");
  }

  // c(s), c(t) and, per source id, the pairs that contain it.
  std::vector<uint32_t> cs(size_t(v.source_size), 0), ct(size_t(v.target_size), 0);
  for (int32_t s : pair_src.ids) ++cs[size_t(s)];
  for (int32_t t : pair_tgt.ids) ++ct[size_t(t)];
  std::vector<uint64_t> by_source_begin(size_t(v.source_size) + 1, 0);
  for (size_t s = 0; s < cs.size(); ++s) by_source_begin[s + 1] = by_source_begin[s] + cs[s];
  std::vector<uint32_t> by_source(pair_src.ids.size());
  {
    std::vector<uint64_t> next(by_source_begin.begin(), by_source_begin.end() - 1);
    for (size_t p = 0; p < pair_src.size(); ++p) {
      for (size_t i = 0; i < pair_src.row_size(p); ++i) by_source[next[size_t(pair_src.row(p)[i])]++] = uint32_t(p);
    }
  }

  std::vector<int32_t> frequent = TopIds(frequency, options.frequent, v.SeenAndAllowed(frequency));
  const std::vector<bool> skip = FrequentMask(v, frequent);

  // Pass 2, per source id: c(s, t) over its pairs, then the top_k targets by score.
  Rows lists;
  std::vector<uint32_t> cst(size_t(v.target_size), 0);
  std::vector<int32_t> touched, candidates;
  const bool dice = options.score == ShortlistScore::kDice;
  for (int s = 0; s < v.source_size; ++s) {
    touched.clear();
    for (uint64_t i = by_source_begin[size_t(s)]; i < by_source_begin[size_t(s) + 1]; ++i) {
      const uint32_t p = by_source[i];
      for (size_t j = 0; j < pair_tgt.row_size(p); ++j) {
        const int32_t t = pair_tgt.row(p)[j];
        if (cst[size_t(t)]++ == 0) touched.push_back(t);
      }
    }
    candidates.clear();
    for (int32_t t : touched) {
      if (!skip[size_t(t)] && !(v.shared && t == s)) candidates.push_back(t);
    }
    // Dice: c1 / (cs + ct1) > c2 / (cs + ct2)  <=>  c1 (cs + ct2) > c2 (cs + ct1); p(t|s): c1 > c2.
    const uint64_t c_s = cs[size_t(s)];
    auto better = [&](int32_t a, int32_t b) {
      const uint64_t ca = cst[size_t(a)], cb = cst[size_t(b)];
      const uint64_t ka = dice ? ca * (c_s + ct[size_t(b)]) : ca, kb = dice ? cb * (c_s + ct[size_t(a)]) : cb;
      return ka != kb ? ka > kb : a < b;
    };
    const size_t keep = std::min(candidates.size(), size_t(options.top_k));
    std::partial_sort(candidates.begin(), candidates.begin() + std::ptrdiff_t(keep), candidates.end(), better);
    candidates.resize(keep);
    lists.Add(candidates);
    for (int32_t t : touched) cst[size_t(t)] = 0;
  }

  std::string files;
  for (size_t f = 0; f < source_paths.size(); ++f) {
    files += (f ? ", " : "") + BaseName(source_paths[f]) + "|" + BaseName(target_paths[f]);
  }
  report->frequent_rule = "the most frequent target tokens of the target text";
  std::vector<int32_t> row_order;
  if (options.row_order && md.config.weight_type == WeightType::kInt8)
    row_order = RowOrder(v, frequent, md.config.eos_id, lists, cs);
  *out = MakeSpec(v, std::move(frequent), lists, options.top_k,
                  std::string("co-occurrence ") + ShortlistScoreName(options.score) + ", " +
                      std::to_string(report->pairs - report->skipped_pairs) + " sentence pairs (" + files +
                      "), top-k " + std::to_string(options.top_k) + ", frequent " + std::to_string(options.frequent),
                  report);
  out->row_order = std::move(row_order);
  return Status::Ok();
}

Status ImportLexShortlist(const Model& model, const std::string& lex_path,
                          const std::vector<std::string>& target_text_paths, const ShortlistOptions& options,
                          ShortlistSpec* out, ShortlistReport* report) {
  *report = {};
  if (!ValidOptions(options)) return Status(StatusCode::kInvalidArgument, "top_k and frequent must be >= 0");
  const detail::ModelData& md = model.data();
  const Vocabularies v(md);

  // frequent: from target text, else from the target spm's unigram scores.
  std::vector<int32_t> frequent;
  if (!target_text_paths.empty()) {
    const Tokenizer tokenizers(md);
    std::vector<uint64_t> frequency;
    MTLITE_RETURN_IF_ERROR(CountTargetText(md, tokenizers.target(), target_text_paths, &frequency, report));
    frequent = TopIds(frequency, options.frequent, v.SeenAndAllowed(frequency));
    report->frequent_rule = "the most frequent target tokens of the target text";
  } else {
    // Unigram scores are log-probabilities of the pieces: the likelier, the more frequent.
    const detail::SpmView& spm = md.target_spm;
    std::vector<float> score(size_t(v.target_size), 0.0f);
    std::vector<bool> normal(size_t(v.target_size), false);
    for (int i = 0; i < spm.num_pieces; ++i) {
      const int32_t id = spm.to_vocab[i];
      if (spm.types[i] == detail::PieceKind::kNormal && md.target_vocab.id_to_piece[size_t(id)] == spm.pieces[size_t(i)]) {
        score[size_t(id)] = spm.scores[i];
        normal[size_t(id)] = true;
      }
    }
    frequent = TopIds(score, options.frequent, [&](size_t t) { return normal[t] && !v.banned[t]; });
    report->frequent_rule = "the normal target SentencePiece pieces with the highest unigram score";
  }
  const std::vector<bool> skip = FrequentMask(v, frequent);

  std::unordered_map<std::string_view, int32_t> source_ids, target_ids;
  for (size_t i = 0; i < md.source_vocab.id_to_piece.size(); ++i) source_ids.emplace(md.source_vocab.id_to_piece[i], int32_t(i));
  for (size_t i = 0; i < md.target_vocab.id_to_piece.size(); ++i) target_ids.emplace(md.target_vocab.id_to_piece[i], int32_t(i));

  struct Entry {
    int32_t source, target;
    float prob;
    uint64_t order;  // line number: a repeated pair keeps its last probability
  };
  std::vector<Entry> entries;
  uint64_t line_no = 0;
  std::string lex;
  MTLITE_RETURN_IF_ERROR(ReadFile(lex_path, &lex));
  if (IsBinaryLex(lex)) {  // ids, not pieces; every listed target counts as probability 1
    BinaryLex b;
    MTLITE_RETURN_IF_ERROR(ParseBinaryLex(lex, lex_path, &b));
    lex = std::string();
    if (b.offsets.size() - 1 > size_t(v.source_size)) {
      return Status(StatusCode::kInvalidArgument, lex_path + ": binary lexical shortlist for " + std::to_string(b.offsets.size() - 1) +
                                                      " source ids; the model has " + std::to_string(v.source_size));
    }
    report->lex_binary = true;
    report->lex_first_num = b.first_num;
    report->lex_best_num = b.best_num;
    for (size_t s = 0; s + 1 < b.offsets.size(); ++s) {
      for (uint64_t j = b.offsets[s]; j < b.offsets[s + 1]; ++j) {
        ++report->lex_entries;
        if (b.targets[j] >= uint32_t(v.target_size)) {
          ++report->lex_unknown_target;
          continue;
        }
        entries.push_back({int32_t(s), int32_t(b.targets[j]), 1.0f, j});
      }
    }
  }
  if (!report->lex_binary) MTLITE_RETURN_IF_ERROR(ForEachLineOf(lex_path, lex, [&](std::string_view line) {
    ++line_no;
    std::string_view field[4];
    int n = 0;
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      const size_t begin = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
      if (i > begin) {
        if (n == 3) {
          n = 4;
          break;
        }
        field[n++] = line.substr(begin, i - begin);
      }
    }
    if (n == 0) return Status::Ok();  // blank line
    if (n != 3) return Status(StatusCode::kInvalidArgument, "expected 'TARGET SOURCE PROB' (three fields)");
    const std::string prob_text(field[2]);
    char* end = nullptr;
    const double prob = std::strtod(prob_text.c_str(), &end);
    if (end != prob_text.c_str() + prob_text.size() || !std::isfinite(prob)) {
      return Status(StatusCode::kInvalidArgument, "PROB '" + prob_text + "' is not a finite number");
    }
    ++report->lex_entries;
    if (field[0] == "NULL" || field[1] == "NULL") {
      ++report->lex_null;
      return Status::Ok();
    }
    const auto s = source_ids.find(field[1]);
    const auto t = target_ids.find(field[0]);
    report->lex_unknown_source += s == source_ids.end();
    report->lex_unknown_target += t == target_ids.end();
    if (s != source_ids.end() && t != target_ids.end()) entries.push_back({s->second, t->second, float(prob), line_no});
    return Status::Ok();
  }));

  if (entries.empty()) {
    // An empty file, or one written for other vocabularies: every sentence would be limited to the
    // frequent tokens.
    return Status(StatusCode::kInvalidArgument,
                  lex_path + ": no entry whose source and target pieces are both in the model's vocabularies (" +
                      std::to_string(report->lex_entries) + " entries: " + std::to_string(report->lex_null) +
                      " with NULL, " + std::to_string(report->lex_unknown_source) + " unknown source and " +
                      std::to_string(report->lex_unknown_target) + " unknown target pieces)");
  }

  // Per source: the last probability of each target; positive only; allowed-anyway ids out;
  // most probable first, ties to the lower id.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.source != b.source ? a.source < b.source : a.target != b.target ? a.target < b.target : a.order < b.order;
  });
  Rows lists;
  std::vector<std::pair<float, int32_t>> ranked;
  std::vector<int32_t> row;
  size_t e = 0;
  for (int32_t s = 0; s < v.source_size; ++s) {
    ranked.clear();
    for (; e < entries.size() && entries[e].source == s; ++e) {
      const Entry& x = entries[e];
      if (e + 1 < entries.size() && entries[e + 1].source == s && entries[e + 1].target == x.target) continue;
      if (!(x.prob > 0)) {
        ++report->lex_not_positive;
        continue;
      }
      if (v.banned[size_t(x.target)] || skip[size_t(x.target)] || (v.shared && x.target == s)) continue;
      ranked.push_back({x.prob, x.target});
    }
    const size_t keep = std::min(ranked.size(), size_t(options.top_k));
    std::partial_sort(ranked.begin(), ranked.begin() + std::ptrdiff_t(keep), ranked.end(),
                      [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
    row.clear();
    for (size_t k = 0; k < keep; ++k) row.push_back(ranked[k].second);
    lists.Add(row);
  }
  std::vector<int32_t> row_order;
  if (options.row_order && md.config.weight_type == WeightType::kInt8)
    row_order = RowOrder(v, frequent, md.config.eos_id, lists, {});
  *out = MakeSpec(v, std::move(frequent), lists, options.top_k,
                  "Marian lex " + ContentName(lex_path) + ", top-k " + std::to_string(options.top_k) + ", frequent " +
                      std::to_string(options.frequent),
                  report);
  out->row_order = std::move(row_order);
  return Status::Ok();
}

namespace {

// The tensor whose rows are the output projection's (the embedding table it is tied to, when
// tied), and final_logits_bias (null when absent).
TensorSpec* ProjectionTensor(ModelSpec* spec) {
  const ModelConfig& c = spec->config;
  const char* name = !c.tied_output        ? layout::kOutputProjection
                     : c.shared_embeddings ? layout::kSharedEmbedding
                                           : layout::kDecoderEmbedding;
  for (TensorSpec& t : spec->tensors)
    if (t.name == name) return &t;
  return nullptr;
}
TensorSpec* BiasTensor(ModelSpec* spec) {
  for (TensorSpec& t : spec->tensors)
    if (t.name == layout::kFinalLogitsBias) return &t;
  return nullptr;
}

// Row r of the result is row from[r] of `t` (rows: the first `from.size()` of its [rows][cols]).
Status PermuteRows(TensorSpec* t, const std::vector<int32_t>& from) {
  if (t->shape.empty()) return Status(StatusCode::kInternal, t->name + ": no shape");
  const int rows = int(t->shape.size() == 1 ? 1 : t->shape[0]);
  const int cols = int(t->shape.size() == 1 ? t->shape[0] : t->shape[1]);
  const bool vector = rows == 1;  // final_logits_bias [1][V]: permute its entries
  const int n = vector ? cols : rows, k = vector ? 1 : cols;
  if (size_t(n) < from.size()) return Status(StatusCode::kInternal, t->name + ": fewer rows than the vocabulary");
  if (t->dtype == WeightType::kInt8 && !vector) {
    std::vector<int8_t> dense(static_cast<size_t>(n) * static_cast<size_t>(k));
    const auto* packed = reinterpret_cast<const int8_t*>(t->data.data());
    for (int r = 0; r < n; ++r) {
      const int src = size_t(r) < from.size() ? from[size_t(r)] : r;
      kernels::UnpackBlockedRow(packed, n, k, src, dense.data() + size_t(r) * size_t(k));
    }
    kernels::PackBlockedN8K4(dense.data(), n, k, reinterpret_cast<int8_t*>(t->data.data()));
    std::vector<float> scales(t->scales);
    for (size_t r = 0; r < from.size(); ++r) scales[r] = t->scales[size_t(from[r])];
    t->scales = std::move(scales);
    return Status::Ok();
  }
  const size_t width = (t->dtype == WeightType::kF16 ? 2 : t->dtype == WeightType::kInt8 ? 1 : 4) * size_t(k);
  std::vector<uint8_t> data(t->data);
  for (size_t r = 0; r < from.size(); ++r)
    std::memcpy(data.data() + r * width, t->data.data() + size_t(from[r]) * width, width);
  t->data = std::move(data);
  return Status::Ok();
}

}  // namespace

Status AddShortlist(const Model& model, ShortlistSpec shortlist, AlignedBytes* out) {
  ModelSpec spec;
  MTLITE_RETURN_IF_ERROR(ReadModelSpec(model, &spec));
  const detail::ModelData& md = model.data();
  const int V = md.config.target_vocab_size;
  // The projection's rows: from the order they are stored in (the old shortlist's, or token
  // order) to the new one (or token order): new row r = stored row from[r].
  const int32_t* old_row = md.shortlist.token_row;  // token -> stored row; null: row = token
  const bool reorder = old_row || !shortlist.row_order.empty();
  if (!shortlist.row_order.empty() && shortlist.row_order.size() != size_t(V))
    return Status(StatusCode::kInvalidArgument, "row_order must have one entry per target id");
  TensorSpec* proj = ProjectionTensor(&spec);
  if (!proj) return Status(StatusCode::kInternal, "the model has no output projection tensor");
  const std::string proj_name = proj->name;
  if (reorder) {
    std::vector<int32_t> from(static_cast<size_t>(V));
    for (int r = 0; r < V; ++r) {
      const int32_t t = shortlist.row_order.empty() ? r : shortlist.row_order[size_t(r)];
      from[size_t(r)] = old_row ? old_row[t] : t;
    }
    MTLITE_RETURN_IF_ERROR(PermuteRows(proj, from));
    if (TensorSpec* bias = BiasTensor(&spec)) MTLITE_RETURN_IF_ERROR(PermuteRows(bias, from));
  }
  spec.format_version = shortlist.row_order.empty() ? layout::kFormatVersion1 : layout::kFormatVersionRowOrder;
  spec.shortlist = std::move(shortlist);
  AlignedBytes bytes = SerializeModel(spec);
  auto loaded = Model::FromBuffer(bytes.data(), bytes.size(), LoadOptions{true});
  if (!loaded.ok()) return Status(loaded.status().code(), "the written model does not load: " + loaded.status().message());
  const detail::ModelData& now = (*loaded)->data();
  // Every buffer but the shortlist's (and, reordered, the projection's and the bias's) keeps its
  // bytes (same names, same order: the writer places them in the order the loader registers them).
  auto skipped = [&](const detail::BufferCheck& c) {
    return c.name.rfind("shortlist.", 0) == 0 ||
           (reorder && (c.name == proj_name || c.name == layout::kFinalLogitsBias));
  };
  std::vector<const detail::BufferCheck*> before, after;
  for (const auto& c : md.checks) {
    if (!skipped(c)) before.push_back(&c);
  }
  for (const auto& c : now.checks) {
    if (!skipped(c)) after.push_back(&c);
  }
  bool same = before.size() == after.size();
  for (size_t i = 0; same && i < before.size(); ++i) {
    same = before[i]->name == after[i]->name && before[i]->size == after[i]->size &&
           std::memcmp(before[i]->data, after[i]->data, before[i]->size) == 0;
  }
  if (!same) return Status(StatusCode::kInternal, "re-emitting the model changed a buffer other than the shortlist");
  if (reorder) {  // every token keeps its projection row, scale and bias, wherever the row now is
    const detail::WeightView &a = md.output_proj, &b = now.output_proj;
    const size_t k = size_t(a.cols);
    std::vector<int8_t> ra(k), rb(k);
    for (int t = 0; t < V && same; ++t) {
      const int row_a = a.row_of ? a.row_of[t] : t, row_b = b.row_of ? b.row_of[t] : t;
      if (a.dtype == WeightType::kInt8) {
        kernels::UnpackBlockedRow(static_cast<const int8_t*>(a.data), a.rows, a.cols, row_a, ra.data());
        kernels::UnpackBlockedRow(static_cast<const int8_t*>(b.data), b.rows, b.cols, row_b, rb.data());
        same = std::memcmp(ra.data(), rb.data(), k) == 0 &&
               std::memcmp(&a.scales[row_a], &b.scales[row_b], sizeof(float)) == 0;
      } else {
        const size_t w = (a.dtype == WeightType::kF16 ? 2 : 4) * k;
        same = std::memcmp(static_cast<const uint8_t*>(a.data) + size_t(row_a) * w,
                           static_cast<const uint8_t*>(b.data) + size_t(row_b) * w, w) == 0;
      }
      if (same && md.final_logits_bias.data)  // the bias's entries follow the projection's rows
        same = std::memcmp(&md.final_logits_bias.data[row_a], &now.final_logits_bias.data[row_b], sizeof(float)) == 0;
    }
    if (!same) return Status(StatusCode::kInternal, "reordering the output projection's rows lost a token's row");
  }
  *out = std::move(bytes);
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite
