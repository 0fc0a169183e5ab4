// libFuzzer target: the converter's SentencePiece reader (converter/spm_proto.*) on arbitrary
// bytes as a .spm file. ParseSpmProto and ValidateSpmProto must return a Status, never crash or
// trip a sanitizer; every rejection has a message; a model that passes both holds what the
// converter then indexes with: unk_id names the one UNKNOWN piece, no piece is empty, every type
// is 1..6, and with byte_fallback the 256 byte pieces are there.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "spm_proto.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using mtlite::converter::SpmProto;
  SpmProto p;
  mtlite::Status s = mtlite::converter::ParseSpmProto(std::string_view(reinterpret_cast<const char*>(data), size), &p);
  if (s.ok()) s = mtlite::converter::ValidateSpmProto(p, "fuzz.spm");
  if (!s.ok()) {
    if (s.message().empty()) std::abort();  // every rejection must explain itself
    return 0;
  }
  const int n = int(p.pieces.size());
  if (n == 0 || p.unk_id < 0 || p.unk_id >= n || p.pieces[size_t(p.unk_id)].type != 2) std::abort();
  int unknown = 0, bytes = 0;
  for (const auto& piece : p.pieces) {
    if (piece.piece.empty() || piece.type < 1 || piece.type > 6) std::abort();
    unknown += piece.type == 2;
    bytes += piece.type == 6;
  }
  if (unknown != 1 || (p.byte_fallback && bytes < 256) || (!p.byte_fallback && bytes != 0)) std::abort();
  return 0;
}
