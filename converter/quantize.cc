#include "quantize.h"

#include <algorithm>
#include <cmath>

#include "kernels.h"
#include "marian_layout.h"

namespace mtlite {
namespace converter {
namespace {

class ErrorAccumulator {
 public:
  void Add(float w, float decoded) {
    const double e = double(w) - double(decoded);
    max_abs_ = std::max(max_abs_, std::fabs(e));
    err2_ += e * e;
    ref2_ += double(w) * double(w);
  }
  EncodeError Result() const { return {max_abs_, ref2_ > 0 ? std::sqrt(err2_ / ref2_) : 0.0}; }

 private:
  double max_abs_ = 0, err2_ = 0, ref2_ = 0;
};

}  // namespace

EncodeError QuantizeInt8(const float* w, int rows, int cols, std::vector<uint8_t>* packed,
                         std::vector<float>* scales) {
  std::vector<int8_t> q(size_t(rows) * size_t(cols));
  scales->assign(size_t(rows), 1.0f);
  ErrorAccumulator err;
  for (int n = 0; n < rows; ++n) {
    const float* row = w + size_t(n) * size_t(cols);
    float max_abs = 0;
    for (int k = 0; k < cols; ++k) max_abs = std::max(max_abs, std::fabs(row[k]));
    const float s = max_abs > 0 ? max_abs / 127.0f : 1.0f;
    (*scales)[size_t(n)] = s;
    int8_t* qrow = q.data() + size_t(n) * size_t(cols);
    for (int k = 0; k < cols; ++k) {
      const float r = std::nearbyint(row[k] / s);  // default rounding mode: half to even
      qrow[k] = int8_t(std::min(127.0f, std::max(-127.0f, r)));
      err.Add(row[k], float(qrow[k]) * s);
    }
  }
  packed->assign(kernels::BlockedN8K4Bytes(rows, cols), 0);
  kernels::PackBlockedN8K4(q.data(), rows, cols, reinterpret_cast<int8_t*>(packed->data()));
  return err.Result();
}

EncodeError EncodeF16(const float* w, size_t n, std::vector<uint8_t>* out) {
  out->resize(n * 2);
  ErrorAccumulator err;
  for (size_t i = 0; i < n; ++i) {
    const uint16_t h = layout::F32ToF16(w[i]);
    (*out)[2 * i] = uint8_t(h & 0xFF);
    (*out)[2 * i + 1] = uint8_t(h >> 8);
    err.Add(w[i], layout::F16ToF32(h));
  }
  return err.Result();
}

}  // namespace converter
}  // namespace mtlite
