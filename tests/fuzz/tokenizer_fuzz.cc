// libFuzzer target: the model's SentencePiece tokenizers on arbitrary bytes.
//   bytes -> Encode (source and target tokenizer) -> Decode -> Encode -> Decode
// and the same for one of the BPE models of tests/data/tokenizer, chosen by the first byte (the
// demo model is unigram): bpe_2k, bpe_8k_bytes (byte fallback), bpe_udf (user-defined and
// control symbols), bpe_suffix (whitespace as suffix), and bpe_2k with UNUSED pieces, on the
// bytes after the first.
// Properties:
//   - Encode accepts exactly the valid UTF-8 inputs (checked against an independent validator);
//     an invalid input is kInvalidArgument naming the byte offset; a valid one is OK, or
//     kOutOfRange only when its normalized form outgrows the documented workspace bound;
//   - every id is inside the vocabulary; Decode succeeds and gives valid UTF-8 with no
//     surrounding whitespace (MarianTokenizer.decode strips it);
//   - decode(encode(.)) is stable: a third round gives the text of the second. (The second may
//     still differ from the first, as with HF: decode drops <unk> pieces and leaves the spaces
//     around them, which the next encode collapses: "a \u{1F600} b" -> "a  b" -> "a b".)
//   - Decode of arbitrary id sequences (from the same bytes) succeeds for in-range ids and is
//     kInvalidArgument for out-of-range ones;
//   - every error carries a message.
// Needs MTLITE_FUZZ_MODEL (see fuzz_util.h).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "model_data.h"
#include "spm_proto.h"
#include "tokenizer.h"

namespace mtlite {
namespace {

using fuzz::Fail;
using fuzz::IsValidUtf8;

// A BPE model's tables built from its .spm the way the converter builds them, with the model's
// own pieces as the vocabulary.
struct BpeTables {
  converter::SpmProto proto;
  std::vector<float> scores;
  std::vector<detail::PieceKind> types;
  std::vector<int32_t> sorted, to_vocab;
  detail::SpmView spm;
  detail::VocabView vocab;
  std::unique_ptr<SpmTokenizer> tok;

  // unused_every > 0: every such multi-byte NORMAL piece becomes UNUSED.
  BpeTables(const std::string& name, int unused_every) {
    const std::string path = std::string(MTLITE_TOKENIZER_DATA_DIR) + "/" + name + ".model";
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
      std::fprintf(stderr, "cannot open %s\n", path.c_str());
      std::exit(2);
    }
    std::string bytes;
    char buf[65536];
    for (size_t k; (k = std::fread(buf, 1, sizeof buf, f)) > 0;) bytes.append(buf, k);
    std::fclose(f);
    Status s = converter::ParseSpmProto(bytes, &proto);
    if (s.ok()) s = converter::ValidateSpmProto(proto, path);
    if (!s.ok() || proto.model_type != 2) {
      std::fprintf(stderr, "%s: not a valid BPE model: %s\n", path.c_str(), s.ToString().c_str());
      std::exit(2);
    }
    const int n = int(proto.pieces.size());
    for (int i = 0; i < n; ++i) {
      converter::SpmPiece& p = proto.pieces[size_t(i)];
      if (unused_every > 0 && p.type == 1 && p.piece.size() >= 2 && i % unused_every == 0) p.type = 5;
    }
    for (int i = 0; i < n; ++i) {
      spm.pieces.push_back(proto.pieces[size_t(i)].piece);
      scores.push_back(proto.pieces[size_t(i)].score);
      types.push_back(detail::PieceKind(proto.pieces[size_t(i)].type));
      to_vocab.push_back(i);
      sorted.push_back(i);
    }
    std::sort(sorted.begin(), sorted.end(),
              [&](int a, int b) { return proto.pieces[size_t(a)].piece < proto.pieces[size_t(b)].piece; });
    spm.num_pieces = n;
    spm.scores = scores.data();
    spm.types = types.data();
    spm.sorted_pieces = sorted.data();
    spm.to_vocab = to_vocab.data();
    spm.unk_id = proto.unk_id;
    spm.bos_id = proto.bos_id;
    spm.eos_id = proto.eos_id;
    spm.pad_id = proto.pad_id;
    spm.add_dummy_prefix = proto.add_dummy_prefix;
    spm.remove_extra_whitespaces = proto.remove_extra_whitespaces;
    spm.escape_whitespaces = proto.escape_whitespaces;
    spm.treat_whitespace_as_suffix = proto.treat_whitespace_as_suffix;
    spm.byte_fallback = proto.byte_fallback;
    spm.model_type = detail::SpmModelType::kBpe;
    spm.charsmap = reinterpret_cast<const uint8_t*>(proto.precompiled_charsmap.data());
    spm.charsmap_size = proto.precompiled_charsmap.size();
    for (const std::string_view p : spm.pieces) vocab.id_to_piece.push_back(p);
    tok = std::make_unique<SpmTokenizer>(spm, vocab);
    if (!tok->status().ok() || !tok->is_bpe()) {
      std::fprintf(stderr, "%s: BPE tokenizer does not validate: %s\n", path.c_str(), tok->status().ToString().c_str());
      std::exit(2);
    }
  }
};

struct State {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Tokenizer> tokenizers;
  std::vector<std::unique_ptr<BpeTables>> bpe;
  size_t max_piece_bytes = 0;
};
State* g_state = nullptr;

size_t MaxPieceBytes(const detail::VocabView& vocab) {
  size_t m = 0;
  for (std::string_view p : vocab.id_to_piece) m = std::max(m, p.size());
  return m;
}

// Encodes `text`; checks the status against the validator and the ids against the vocabulary.
// Returns false when the input was (rightly) rejected.
bool EncodeChecked(const SpmTokenizer& tok, const char* side, std::string_view text, std::string_view input,
                   std::vector<int32_t>* ids) {
  std::vector<uint8_t> workspace(SpmTokenizer::WorkspaceBytes(text.size()));
  ids->assign(SpmTokenizer::kMaxNormalizedPerInputByte * text.size() + 16, -1);
  int n = -1;
  const Status s = tok.Encode(text, workspace.data(), workspace.size(), ids->data(), int(ids->size()), &n);
  const bool valid = IsValidUtf8(text);
  if (!s.ok()) {
    if (s.message().empty()) Fail(input, "%s Encode: error %s without a message", side, StatusCodeName(s.code()));
    if (!valid) {
      if (s.code() != StatusCode::kInvalidArgument || s.message().find("byte offset") == std::string::npos)
        Fail(input, "%s Encode of invalid UTF-8: expected kInvalidArgument naming the byte offset, got %s",
             side, s.ToString().c_str());
      return false;
    }
    if (s.code() == StatusCode::kOutOfRange) return false;  // normalized text beyond the workspace bound
    Fail(input, "%s Encode of valid UTF-8 failed: %s", side, s.ToString().c_str());
  }
  if (!valid) Fail(input, "%s Encode accepted invalid UTF-8", side);
  if (n < 0 || size_t(n) > ids->size()) Fail(input, "%s Encode: %d ids for a capacity of %zu", side, n, ids->size());
  ids->resize(size_t(n));
  for (int i = 0; i < n; ++i) {
    if ((*ids)[size_t(i)] < 0 || (*ids)[size_t(i)] >= tok.vocab_size())
      Fail(input, "%s Encode: id %d at %d outside [0, %d)", side, (*ids)[size_t(i)], i, tok.vocab_size());
  }
  return true;
}

bool IsAsciiSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

std::string DecodeChecked(const SpmTokenizer& tok, const char* side, const std::vector<int32_t>& ids,
                          std::string_view input) {
  // Each id gives at most its piece, the <unk> surface or U+FFFD per byte piece.
  std::string out(ids.size() * (g_state->max_piece_bytes + 8) + 8, '\0');
  size_t len = 0;
  const Status s = tok.Decode(ids.data(), int(ids.size()), out.data(), out.size(), &len);
  if (!s.ok()) Fail(input, "%s Decode of in-range ids failed: %s", side, s.ToString().c_str());
  if (len > out.size()) Fail(input, "%s Decode: length %zu beyond capacity %zu", side, len, out.size());
  out.resize(len);
  if (!IsValidUtf8(out)) Fail(input, "%s Decode gave invalid UTF-8", side);
  if (!out.empty() && (IsAsciiSpace(out.front()) || IsAsciiSpace(out.back())))
    Fail(input, "%s Decode left surrounding whitespace", side);
  return out;
}

void RoundTrip(const SpmTokenizer& tok, const char* side, std::string_view input) {
  std::vector<int32_t> ids;
  if (!EncodeChecked(tok, side, input, input, &ids)) return;
  const std::string first = DecodeChecked(tok, side, ids, input);
  if (!EncodeChecked(tok, side, first, input, &ids)) return;
  const std::string second = DecodeChecked(tok, side, ids, input);
  if (!EncodeChecked(tok, side, second, input, &ids)) return;
  const std::string third = DecodeChecked(tok, side, ids, input);
  if (third != second) {
    fuzz::PrintInput(first);
    fuzz::PrintInput(second);
    fuzz::PrintInput(third);
    Fail(input, "%s decode(encode(.)) is not stable: rounds 2 and 3 (above) differ", side);
  }
}

// Decode of the input read as 16-bit ids; some land beyond the vocabulary on purpose.
void DecodeArbitraryIds(const SpmTokenizer& tok, const char* side, std::string_view input) {
  std::vector<int32_t> ids;
  bool out_of_range = false;
  for (size_t i = 0; i + 1 < input.size(); i += 2) {
    const int v = static_cast<uint8_t>(input[i]) | (static_cast<uint8_t>(input[i + 1]) << 8);
    int id = v % (tok.vocab_size() + 4);
    if (id >= tok.vocab_size()) id = id == tok.vocab_size() ? -1 : id;  // -1 and just past the end
    out_of_range = out_of_range || id < 0 || id >= tok.vocab_size();
    ids.push_back(id);
  }
  std::string out(ids.size() * (g_state->max_piece_bytes + 8) + 8, '\0');
  size_t len = 0;
  const Status s = tok.Decode(ids.data(), int(ids.size()), out.data(), out.size(), &len);
  if (out_of_range) {
    if (s.code() != StatusCode::kInvalidArgument || s.message().empty())
      Fail(input, "%s Decode of out-of-range ids: expected kInvalidArgument, got %s", side, s.ToString().c_str());
    return;
  }
  if (!s.ok()) Fail(input, "%s Decode of arbitrary in-range ids failed: %s", side, s.ToString().c_str());
  if (!IsValidUtf8(std::string_view(out.data(), len))) Fail(input, "%s Decode of arbitrary ids: invalid UTF-8", side);
  // A capacity one byte short of the text must be a clean kOutOfRange, never an overflow.
  if (len > 0) {
    std::vector<char> tight(len - 1);
    size_t n2 = 0;
    const Status t = tok.Decode(ids.data(), int(ids.size()), tight.data(), tight.size(), &n2);
    if (t.code() != StatusCode::kOutOfRange || t.message().empty())
      Fail(input, "%s Decode into %zu bytes (text needs %zu): expected kOutOfRange, got %s", side, len - 1, len,
           t.ToString().c_str());
  }
}

void InitTokenizers() {
  g_state = new State;
  g_state->model = fuzz::LoadFuzzModel();
  g_state->tokenizers = std::make_unique<Tokenizer>(g_state->model->data());
  for (const SpmTokenizer* t : {&g_state->tokenizers->source(), &g_state->tokenizers->target()}) {
    if (!t->status().ok()) {
      std::fprintf(stderr, "tokenizer does not validate: %s\n", t->status().ToString().c_str());
      std::exit(2);
    }
  }
  g_state->max_piece_bytes = std::max(MaxPieceBytes(g_state->model->data().source_vocab),
                                      MaxPieceBytes(g_state->model->data().target_vocab));
  for (const char* name : {"bpe_2k", "bpe_8k_bytes", "bpe_udf", "bpe_suffix"}) {
    g_state->bpe.push_back(std::make_unique<BpeTables>(name, 0));
  }
  g_state->bpe.push_back(std::make_unique<BpeTables>("bpe_2k", 3));
  for (const auto& b : g_state->bpe) g_state->max_piece_bytes = std::max(g_state->max_piece_bytes, MaxPieceBytes(b->vocab));
}

}  // namespace
}  // namespace mtlite

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mtlite::InitTokenizers();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mtlite;
  if (size > 4096) return 0;  // long inputs add time, not paths (the workspace scales linearly)
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  RoundTrip(g_state->tokenizers->source(), "source", input);
  RoundTrip(g_state->tokenizers->target(), "target", input);
  DecodeArbitraryIds(g_state->tokenizers->target(), "target", input);
  if (size > 0) {
    const SpmTokenizer& bpe = *g_state->bpe[data[0] % g_state->bpe.size()]->tok;
    RoundTrip(bpe, "bpe", input.substr(1));
    DecodeArbitraryIds(bpe, "bpe", input.substr(1));
  }
  return 0;
}
