// libFuzzer target: Model::FromBuffer on arbitrary bytes must return a Status, never crash,
// read out of bounds or trip a sanitizer. On success the config and every checksum are touched.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "model_data.h"
#include "mtlite/mtlite.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // FromBuffer requires 64-byte alignment (weights are read in place). Exactly `size` bytes
  // are readable past the pointer, so ASan sees any over-read.
  uint8_t* buf = static_cast<uint8_t*>(::operator new(size ? size : 1, std::align_val_t(64)));
  if (size) std::memcpy(buf, data, size);
  {
    auto model = mtlite::Model::FromBuffer(buf, size);
    if (model.ok()) {
      const mtlite::ModelConfig& c = (*model)->config();
      volatile int sink = c.d_model + c.encoder_layers + c.decoder_layers + c.source_vocab_size +
                          static_cast<int>(c.bad_word_ids.size());
      (void)sink;
      (void)(*model)->VerifyChecksums();
      // Touch the first and last byte of every buffer the loader handed out.
      volatile uint8_t x = 0;
      for (const auto& check : (*model)->data().checks) {
        if (check.size) x = x ^ check.data[0] ^ check.data[check.size - 1];
      }
      (void)x;
    } else if (model.status().message().empty()) {
      std::abort();  // every rejection must explain itself
    }
  }  // the Model is gone before its buffer
  ::operator delete(buf, std::align_val_t(64));
  return 0;
}
